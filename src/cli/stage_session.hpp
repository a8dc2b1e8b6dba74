#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli/process_group.hpp"
#include "cli/run_setup.hpp"
#include "comm/gpu_runtime.hpp"
#include "comm/watchdog.hpp"
#include "core/json.hpp"
#include "core/record.hpp"

namespace commcert {

// What one rank of a GPU stage stands for: a GPU, or the process itself when it has none.
struct StageSlot {
  std::string device = "host";
  std::optional<GpuIdentity> gpu;
};

// The skeleton every GPU stage (burn, membw, health) shares with `sweep`: processes, ranks,
// results/<run-id>/, meta.json, the run record, bounded waits between processes, and records
// gathered to process 0 so runs without a shared file system keep every record.
//
// Ranks are slots: a process driving N GPUs (-g N) holds N consecutive ranks.
class StageSession {
 public:
  StageSession(Invocation& invocation, std::string_view command, std::string_view record_kind,
               const StageOptions& options, double timeout_s);
  ~StageSession();
  StageSession(const StageSession&) = delete;
  StageSession& operator=(const StageSession&) = delete;

  [[nodiscard]] ProcessGroup& group() { return group_; }
  [[nodiscard]] bool reporting() const { return group_.process_index() == 0; }
  [[nodiscard]] bool show_progress() const { return reporting() && !options_.quiet; }

  // Numbers the ranks, resolves node identities, opens the run directory and writes meta.json
  // (status running) and the run record. Throws UsageError for a bad --node-name or --out.
  void start(std::vector<StageSlot> slots, const GpuRuntimeInfo& gpu, Json parameters,
             std::vector<std::string> warnings);

  [[nodiscard]] const std::vector<RankIdentity>& ranks() const { return ranks_; }
  [[nodiscard]] const std::string& node() const { return node_.node; }
  [[nodiscard]] int first_rank() const { return first_rank_; }
  [[nodiscard]] RecordOrigin origin(std::size_t slot) const;
  // True for the lowest rank of each node identity: the one that speaks for the node.
  [[nodiscard]] bool speaks_for_node() const;

  // Control-plane operations, bounded by the stage's timeout.
  void barrier(const std::string& context);
  [[nodiscard]] std::vector<std::string> all_gather(const std::string& context,
                                                    const std::string& mine);
  [[nodiscard]] double all_reduce_max(const std::string& context, double mine);
  // For a stage's own data-plane operations (links' transfers): bracket them with
  // set_context + WatchedSection like the operations above.
  [[nodiscard]] Watchdog& watchdog() { return *watchdog_; }
  // After start(): adds to meta.json (e.g. the fault plan in effect).
  void update_meta(const Json& fields);

  // Gathers every process's records to process 0, which appends them in rank order; every
  // process then agrees on the exit status (the worst of all), and meta.json is finished.
  [[nodiscard]] int finish(const std::vector<Json>& records, bool interrupted);

 private:
  void on_timeout(const TimeoutReport& report);

  Invocation& invocation_;
  std::string command_;
  std::string kind_;
  StageOptions options_;
  double timeout_s_;
  ProcessGroup group_;
  std::unique_ptr<Watchdog> watchdog_;
  std::mutex mutex_;  // the watchdog thread reads what start() fills in
  std::unique_ptr<RunOutput> output_;
  NodeIdentity node_;
  std::vector<RankIdentity> ranks_;
  std::vector<StageSlot> slots_;
  int first_rank_ = 0;
};

// The end of a stage, the same for every stage: every process agrees on the worst exit status
// any of them reached (a collective over processes, bounded by `watchdog` when there is one;
// `context` names it for a timeout, nullopt keeps the watchdog's current one), and meta.json
// gets the status, the end time and whether the run was interrupted.
[[nodiscard]] int agree_and_finish(ControlPlane& control, Watchdog* watchdog, RunOutput& output,
                                   int exit_code, bool interrupted,
                                   const std::optional<std::string>& context);

// The exit status records call for: timeout (4) over error (3) over fail (1); ok and skipped
// are 0 ("cannot run here" is evidence, not a failure of the tool).
[[nodiscard]] int exit_code_for(const std::vector<Json>& records);

}  // namespace commcert
