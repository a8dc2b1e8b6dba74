#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "comm/link_transport.hpp"

namespace commcert {

// Where and how the verbs transport of one process runs (docs/links.md, "RDMA verbs").
struct VerbsTransportOptions {
  std::string device;  // "mlx5_0"
  int port = 1;
  std::optional<int> gid_index;  // --gid-index; nullopt: choose_gid decides
  std::string memory = "host";   // host | gpu
  int gpu = 0;                   // CUDA device of the buffer for --mem gpu
  std::uint64_t buffer_bytes = 0;
  int window = 1;          // the most bandwidth messages in flight at once
  double timeout_s = 120;  // every wait for a completion ends by then
  std::filesystem::path sysfs_root = "/sys";
};

// How the buffer was registered, for the record: "host" (ibv_reg_mr on pinned host memory),
// "dmabuf" (ibv_reg_dmabuf_mr on a CUDA dma-buf), "peer_memory" (ibv_reg_mr on the device pointer,
// served by nvidia-peermem).
class VerbsLinkTransport : public LinkTransport {
 public:
  [[nodiscard]] virtual std::string_view registration() const = 0;
  [[nodiscard]] virtual std::string device_port() const = 0;  // "mlx5_0:1"
  [[nodiscard]] virtual std::string gid_choice() const = 0;   // how the address was chosen
  // The connected peer's device and registration (from its connection info).
  [[nodiscard]] virtual const std::string& peer_device() const = 0;
  [[nodiscard]] virtual const std::string& peer_registration() const = 0;
  [[nodiscard]] virtual const VerbsTransportOptions& options() const = 0;
  // Every readable counter of the port, from sysfs (the reader `health` uses); empty when none.
  [[nodiscard]] virtual std::map<std::string, std::uint64_t> port_counters() const = 0;
};

// Opens the device, checks the port (ACTIVE, LinkUp, rate known), chooses the GID, allocates and
// registers the buffer. Throws RuntimeFailure saying why this end cannot test (the caller
// records it); in a build without libibverbs always throws.
[[nodiscard]] std::unique_ptr<VerbsLinkTransport> make_verbs_link_transport(
    const VerbsTransportOptions& options);

}  // namespace commcert
