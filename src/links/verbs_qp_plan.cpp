#include "links/verbs_qp_plan.hpp"

#include <algorithm>
#include <stdexcept>

namespace commcert {
namespace {

// RDMA reads in flight per QP: 16 is what current HCAs allow, and the device may say less.
constexpr int kMaxReadsInFlight = 16;

}  // namespace

VerbsRtrPlan plan_rtr(const VerbsPortFacts& local, const VerbsEndpoint& remote) {
  if (local.link_layer != remote.link_layer) {
    throw std::invalid_argument(
        "verbs: one end is InfiniBand and the other Ethernet (RoCE); they cannot connect");
  }
  if (local.active_mtu < 1 || local.active_mtu > 5) {
    throw std::invalid_argument("verbs: this port's active MTU is unknown");
  }
  VerbsRtrPlan plan;
  plan.path_mtu = std::min(local.active_mtu, remote.mtu);
  plan.dest_qp_number = remote.qp_number;
  plan.receive_psn = remote.psn;
  plan.max_dest_rd_atomic = std::clamp(local.max_dest_rd_atomic, 1, kMaxReadsInFlight);
  plan.port = local.port;
  const bool roce = local.link_layer == VerbsLinkLayer::kEthernet;
  if (roce && (local.gid_index < 0 || remote.gid_index < 0)) {
    throw std::invalid_argument("verbs: RoCE needs a GID on both ends (see --gid-index)");
  }
  if (!roce && remote.lid == 0 && remote.gid_index < 0) {
    throw std::invalid_argument("verbs: the InfiniBand peer has neither a LID nor a GID");
  }
  plan.is_global = local.gid_index >= 0 && remote.gid_index >= 0;
  plan.dlid = roce ? 0 : remote.lid;
  if (plan.is_global) {
    plan.sgid_index = local.gid_index;
    plan.dgid = remote.gid;
    plan.hop_limit = 64;
  }
  return plan;
}

VerbsRtsPlan plan_rts(const VerbsPortFacts& local, const VerbsEndpoint& mine,
                      const VerbsEndpoint& /*remote*/) {
  VerbsRtsPlan plan;
  plan.send_psn = mine.psn;
  plan.max_rd_atomic = std::clamp(local.max_rd_atomic, 1, kMaxReadsInFlight);
  return plan;
}

}  // namespace commcert
