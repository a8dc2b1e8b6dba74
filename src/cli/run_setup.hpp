#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/backend.hpp"
#include "cli/command.hpp"
#include "cli/process_group.hpp"
#include "comm/communicator.hpp"
#include "comm/gpu_runtime.hpp"
#include "core/json.hpp"
#include "core/node_identity.hpp"
#include "core/rank_identity.hpp"
#include "core/run_output.hpp"
#include "records/run_meta.hpp"

namespace commcert {

// What one rank of a stage stands for: a GPU, or the process itself when it has none.
struct StageSlot {
  std::string device = "host";
  std::optional<GpuIdentity> gpu;
  // The CUDA ordinal this process drives the GPU by: a failed CUDA or NCCL call names it, and so
  // the rank the failure belongs to (slot_of_error).
  std::optional<int> cuda_device;
};

// Options every MPI-launched stage shares.
struct StageOptions {
  std::string results_root = "results";
  std::optional<std::string> run_id;
  std::optional<std::string> node_name;
  bool quiet = false;
};

// Adds --out, --run-id, --node-name and -q to a subcommand, with COMMCERT_* fallbacks.
void add_stage_options(CLI::App& app, StageOptions& options);

// Rejects a bad run id or node name before anything starts (UsageError naming the source).
void validate_stage_options(const StageOptions& options);

// A rank of a stage (stage_session.hpp) for each of the communicator's local ranks: its device
// and GPU, the GPU's PCI address in sysfs spelling and its node-wide index.
[[nodiscard]] std::vector<StageSlot> communicator_slots(const Communicator& communicator);

// Process 0 creates results/<run-id>/ and every process learns the run id.
[[nodiscard]] std::unique_ptr<RunOutput> open_run_output(ControlPlane& control,
                                                         const StageOptions& options,
                                                         std::string_view command);

// Conditions that make numbers untrustworthy, for meta.json and the table header.
[[nodiscard]] std::vector<std::string> measurement_warnings(const ProcessGroup& group,
                                                            const BackendChoice& backend);

// The fields of meta.json known at start (docs/records.md "meta.json").
[[nodiscard]] RunMeta start_meta(std::string_view command, const Invocation& invocation,
                                 const RunOutput& output, const BackendChoice& backend,
                                 const ProcessGroup& group, const GpuRuntimeInfo& gpu,
                                 const std::vector<RankIdentity>& ranks,
                                 const std::vector<std::string>& warnings);

}  // namespace commcert
