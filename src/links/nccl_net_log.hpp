#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace commcert {

// What NCCL says it chose for the network, read from its NCCL_DEBUG=INFO lines (docs/links.md,
// "Which transport NCCL chose"). The lines and their format strings, as NCCL prints them:
//   "Using network %s"                                       (init.cc: IB, Socket or a plugin)
//   "NET/IB : No device found."                              (net_ib: no usable HCA)
//   "NET/IB : Using%s %s; OOB %s:%s" with " [%d]%s:%d/%s"   (net_ib: each HCA, port, IB/RoCE)
//   "NET/%s : GPU Direct RDMA %s for HCA %d '%s'"           (graph/topo.cc: Enabled/Disabled)
//   "Channel %02d/%d : %d[%d] -> %d[%d] [send] via NET/%s/%d%s%s%s"  (transport/net.cc; the
//      suffixes are "/GDRDMA", "(PCI)", "/Shared"; with a proxy rank "NET/%s/%d(%d)...")
// Each comes after NCCL's prefix "host:pid:tid [dev] NCCL INFO ".
struct NcclNetChoice {
  std::optional<std::string> network;      // "IB", "Socket", a plugin's name
  bool ib_no_device = false;               // NCCL looked for HCAs and found none
  std::vector<std::string> ib_devices;     // "mlx5_0:1/IB", in NCCL's order
  std::map<std::string, bool> gdr_by_hca;  // HCA name -> GPU Direct RDMA enabled
  int net_send_channels = 0;               // [send] connections over the network
  int gdr_send_channels = 0;               // ... of them with /GDRDMA
  std::vector<std::string> net_devices;    // "IB/0", "Socket/1": the devices connections used
  // The first line that shows each fact, for a person to read in the record.
  std::string network_line;
  std::string staging_line;  // a [send] over the network without /GDRDMA, or GDR disabled
};

// Reads NCCL's log text (any other lines are ignored); lines of several ranks may interleave.
[[nodiscard]] NcclNetChoice parse_nccl_net_log(std::string_view text);

// Why NCCL's choice is not the fabric's full speed, or nullopt when it uses NET/IB with GPU
// Direct RDMA on every network connection. Sockets over IB, or connections staged through host
// memory, are what a node with a missing peer-memory/dma-buf path silently gets.
[[nodiscard]] std::optional<std::string> nccl_net_problem(const NcclNetChoice& choice);

}  // namespace commcert
