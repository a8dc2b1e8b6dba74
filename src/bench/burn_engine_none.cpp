#include "bench/burn_engine.hpp"
#include "core/errors.hpp"

namespace commcert {

BurnRun run_burn(const BurnSettings& /*settings*/, const std::vector<GpuDescription>& /*gpus*/,
                 const BurnHooks& /*hooks*/) {
  throw RuntimeFailure("this build has no CUDA support");
}

}  // namespace commcert
