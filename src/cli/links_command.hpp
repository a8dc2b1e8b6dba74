#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli/stage_flags.hpp"
#include "comm/link_transport.hpp"

namespace commcert {

// What `links` runs, resolved from its flags.
struct LinksSettings {
  std::string transport = "mpi";  // mpi | verbs
  std::string memory = "host";    // host | gpu (verbs only)
  std::vector<LinkTest> tests;
  std::vector<std::uint64_t> sizes;  // bandwidth message sizes
  std::uint64_t latency_bytes = 8;
  int iterations = 20;
  int warmup = 3;
  int window = 4;
  double timeout_s = 120;
  std::optional<int> gid_index;  // verbs: --gid-index; nullopt: chosen from the GID table
  int ib_port = 1;               // verbs: --ib-port
};

// The test names `--tests` accepts, and the defaults per transport.
[[nodiscard]] std::vector<LinkTest> parse_link_tests(std::string_view text, std::string_view flag);

// `commcert links`: node-to-node link tests (bandwidth both ways, latency) over every pair of
// nodes in circle-method rounds, per rail (docs/links.md).
class LinksCommand final : public Command {
 public:
  [[nodiscard]] std::string_view name() const override { return "links"; }
  [[nodiscard]] std::string_view summary() const override {
    return "node-to-node link bandwidth and latency, every pair of nodes per rail";
  }
  void configure(CLI::App& app) override;
  int run(Invocation& invocation) override;
  void check() const override { (void)resolve_settings(); }

  [[nodiscard]] LinksSettings resolve_settings() const;

 private:
  struct RawFlags {
    std::string transport = "mpi";
    std::string memory = "host";
    std::string tests;  // empty: the transport's defaults
    std::string sizes = "64K,4M";
    std::string latency_size = "8";
    int window = 4;
    int gid_index = -1;
    int ib_port = 1;
  };
  RawFlags flags_;
  StageFlags stage_{StageFlagSpec("120", "Bound on any one wait for a peer process")
                        .with_iterations(20, 100000, "Timed iterations per test and size")
                        .with_warmup(3, 10000, "Untimed iterations before them")};
};

}  // namespace commcert
