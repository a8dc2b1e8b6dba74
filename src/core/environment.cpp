#include "core/environment.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <string>

extern char** environ;  // NOLINT: POSIX

namespace commcert {
namespace {

// Prefixes of settings that change what NCCL, UCX, Open MPI or commcert do.
constexpr std::array<std::string_view, 4> kRecordedPrefixes = {"NCCL_", "UCX_", "OMPI_MCA_",
                                                               "COMMCERT_"};
// Variables mpirun sets for its own processes: launcher internals, not settings, and one
// (orte_precondition_transports) is a transport key.
constexpr std::array<std::string_view, 6> kLauncherPrefixes = {"OMPI_MCA_orte_",
                                                               "OMPI_MCA_ess",
                                                               "OMPI_MCA_pmix",
                                                               "OMPI_MCA_initial_wdir",
                                                               "OMPI_MCA_shmem_RUNTIME_QUERY_hint",
                                                               "OMPI_MCA_mpi_oversubscribe"};
// Single variables that change which devices a rank sees or which job it belongs to.
constexpr std::array<std::string_view, 7> kRecordedNames = {
    "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "SLURM_JOB_ID",   "SLURM_STEP_ID",
    "SLURM_JOB_NODELIST",   "SLURMD_NODENAME",   "OMP_NUM_THREADS"};

}  // namespace

bool is_recorded_environment_variable(std::string_view name) {
  if (std::find(kRecordedNames.begin(), kRecordedNames.end(), name) != kRecordedNames.end()) {
    return true;
  }
  const auto starts_with_any = [&](const auto& prefixes) {
    return std::any_of(prefixes.begin(), prefixes.end(),
                       [&](std::string_view prefix) { return name.starts_with(prefix); });
  };
  return starts_with_any(kRecordedPrefixes) && !starts_with_any(kLauncherPrefixes);
}

Json recorded_environment() {
  std::map<std::string, std::string> sorted;
  for (char** entry = environ; entry && *entry; ++entry) {
    const std::string_view text(*entry);
    const auto equals = text.find('=');
    if (equals == std::string_view::npos) continue;
    const std::string_view name = text.substr(0, equals);
    if (is_recorded_environment_variable(name)) {
      sorted.emplace(name, text.substr(equals + 1));
    }
  }
  Json out = Json::object();
  for (const auto& [name, value] : sorted)
    out[name] = value;
  return out;
}

}  // namespace commcert
