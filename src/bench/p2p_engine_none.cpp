#include "bench/p2p_engine.hpp"
#include "core/errors.hpp"

namespace commcert {

std::vector<std::vector<bool>> probe_peer_access(const std::vector<GpuDescription>& /*gpus*/) {
  throw RuntimeFailure("this build has no CUDA support");
}

P2pRun run_p2p_tests(const P2pSettings& /*settings*/, const std::vector<GpuDescription>& /*gpus*/,
                     const std::vector<P2pTest>& /*tests*/,
                     const std::function<void(std::size_t)>& /*progress*/) {
  throw RuntimeFailure("this build has no CUDA support");
}

}  // namespace commcert
