#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cli/backend.hpp"
#include "cli/command.hpp"
#include "cli/process_group.hpp"
#include "cli/run_setup.hpp"
#include "cli/stage_failure.hpp"
#include "comm/communicator.hpp"
#include "comm/gpu_runtime.hpp"
#include "comm/watchdog.hpp"
#include "core/json.hpp"
#include "core/record.hpp"

namespace commcert {

// How a stage's watchdog counts and what a timeout does.
struct StageWatch {
  double timeout_s = 0;  // 0: nothing is bounded (sweep -T 0)
  // Watched units per process. 1: the process is the unit, as a GPU stage's ranks never wait on
  // each other. The sweep watches each rank: its ranks wait on each other inside collectives,
  // and a timeout names the rank that did not arrive.
  int ranks_per_process = 1;
  // Runs on the watchdog thread instead of writing the stage timeout record (the sweep writes
  // its collective timeout record and asks for its communicators' abort).
  Watchdog::TimeoutHandler on_timeout;
};

// The skeleton every MPI-launched stage (burn, membw, health, p2p, links, sweep) shares:
// processes, ranks, results/<run-id>/, meta.json, the run record, bounded waits between
// processes, records gathered to process 0 so runs without a shared file system keep every
// record, and the end of a stage on an error (run()).
//
// Ranks are slots: a process driving N GPUs (-g N) holds N consecutive ranks.
class StageSession {
 public:
  StageSession(Invocation& invocation, std::string_view command, std::string_view record_kind,
               const StageOptions& options, double timeout_s);
  StageSession(Invocation& invocation, std::string_view command, std::string_view record_kind,
               const StageOptions& options, StageWatch watch);
  ~StageSession();
  StageSession(const StageSession&) = delete;
  StageSession& operator=(const StageSession&) = delete;

  [[nodiscard]] ProcessGroup& group() { return group_; }
  [[nodiscard]] bool reporting() const { return group_.process_index() == 0; }
  [[nodiscard]] bool show_progress() const { return reporting() && !options_.quiet; }

  // Runs the stage's work. An error from it ends the stage the same way in every stage:
  // - a UsageError before the run directory opens goes on to the CLI edge (exit 2, said once by
  //   process 0, nothing written);
  // - after this process declared a timeout, an error is the timeout's consequence (a peer
  //   aborted its communicators): the watchdog ends the job;
  // - anything else is said on stderr naming this rank and node, becomes this stage's error
  //   record (once the run directory is open), ends meta.json, aborts the data plane and ends
  //   the job: every process at once (abort_job) when there are several, otherwise as a
  //   ReportedFailure the CLI edge turns into the exit status.
  // With several processes the run's files say how it ended whoever failed: process 0 records
  // its own error, or a peer's that the peer sends it before the job ends (meta.json and, under
  // `commcert run`, suite.json: status error and `error` naming the process, rank, node and
  // reason), then ends the job. A peer that process 0 does not answer within a few seconds
  // marks the files itself where it sees them (a shared file system) and ends the job.
  int run(const std::function<int()>& work);

  // What a stage's error and timeout records carry besides their writer: `component`, the health
  // component they stand for (the health stage's: "node").
  void set_failure_component(std::string component);
  // Runs on the watchdog thread of the process that writes a timeout record: the nodes each
  // record names (links: the two ends of each link that did not complete), one record per entry;
  // an empty list writes one record that names nobody but its writer.
  using TimeoutNodes = std::function<std::vector<std::vector<std::string>>(const TimeoutReport&)>;
  void set_timeout_nodes(TimeoutNodes nodes);

  // Numbers the ranks, resolves node identities, opens the run directory and writes meta.json
  // (status running) and the run record. Throws UsageError for a bad --node-name or --out.
  void start(std::vector<StageSlot> slots, const GpuRuntimeInfo& gpu, Json parameters,
             std::vector<std::string> warnings);
  // start() in two steps, for a stage that checks its ranks before anything is written (the
  // sweep: a --pair-list node no rank runs on is a usage error, and nothing is written).
  void identify(std::vector<StageSlot> slots);
  // `backend`: the stage's data plane (the sweep's MPI or NCCL), for meta.json, its warnings
  // and the run record; nullopt for a stage that measures each GPU by itself.
  void open(const GpuRuntimeInfo& gpu, Json parameters, std::vector<std::string> warnings,
            const std::optional<BackendChoice>& backend = std::nullopt);

  // The communicators the stage measures with: aborted when the stage ends on an error.
  void set_data_plane(Communicator* communicator);

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
  // The watchdog to bracket operations with: nullptr when the timeout is off.
  [[nodiscard]] Watchdog* guard() { return watch_.timeout_s > 0 ? watchdog_.get() : nullptr; }
  // After open(): the run directory, and the warnings meta.json carries (for a table header).
  [[nodiscard]] RunOutput& output() { return *output_; }
  [[nodiscard]] const std::vector<std::string>& warnings() const { return warnings_; }
  // After start(): adds to meta.json (e.g. the fault plan in effect).
  void update_meta(const Json& fields);

  // Gathers every process's records to process 0, which appends them in rank order; every
  // process then agrees on the exit status (the worst of all), and meta.json is finished. With
  // `abandoned_workers` (a GPU thread stuck in the driver: WorkerRun::abandoned) the process
  // then ends at once with that status (leave_stage).
  [[nodiscard]] int finish(const std::vector<Json>& records, bool interrupted,
                           bool abandoned_workers = false);
  // The same for a stage whose results already reached process 0 as it went (the sweep's
  // engine): every process agrees on the worst `exit_code`. The watchdog's context stays the
  // stage's last one, as a timeout here is that operation's tail.
  [[nodiscard]] int finish_with_status(int exit_code, bool interrupted);

 private:
  void on_timeout(const TimeoutReport& report);
  void on_peer_failure(const std::string& text);
  // Records this process's own failure in the run's files, as far as it can (see run()).
  void record_failure(const StageFailure& failure);
  [[noreturn]] void leave_to_watchdog(const std::exception& error);
  [[noreturn]] void end_on_error(const std::exception& error);

  Invocation& invocation_;
  std::string command_;
  std::string kind_;
  StageOptions options_;
  StageWatch watch_;
  ProcessGroup group_;
  std::unique_ptr<Watchdog> watchdog_;
  std::mutex mutex_;  // the watchdog thread reads what start() fills in
  std::unique_ptr<RunOutput> output_;
  NodeIdentity node_;
  std::vector<RankIdentity> ranks_;
  std::vector<StageSlot> slots_;
  int first_rank_ = 0;
  bool identified_ = false;
  std::optional<std::string> backend_name_;
  std::vector<std::string> warnings_;
  Communicator* data_plane_ = nullptr;
  std::optional<std::string> failure_component_;
  TimeoutNodes timeout_nodes_;
};

// The slot of `slots` (this process's ranks) an error belongs to: the one driving the CUDA device
// a failed CUDA or NCCL call names (ApiFailure), else 0, the error being the process's own.
[[nodiscard]] std::size_t slot_of_error(const std::exception& error,
                                        const std::vector<StageSlot>& slots);

// The end of a stage, the same for every stage: every process agrees on the worst exit status
// any of them reached (a collective over processes, bounded by `watchdog` when there is one;
// `context` names it for a timeout, nullopt keeps the watchdog's current one), and meta.json
// gets the status, the end time and whether the run was interrupted.
[[nodiscard]] int agree_and_finish(ControlPlane& control, Watchdog* watchdog, RunOutput& output,
                                   int exit_code, bool interrupted,
                                   const std::optional<std::string>& context);

// Ends the process at once with `exit_code`, stdio flushed, without running exit's clean-up.
[[noreturn]] void end_process_now(int exit_code);

// How a stage's process leaves once its records and meta.json are on disk (each append is
// fsynced): returns `exit_code` for the CLI edge, or, when a worker thread was abandoned (stuck
// in the driver), calls `end_now(exit_code)`: exit would wait for that thread forever.
int leave_stage(int exit_code, bool abandoned_workers,
                const std::function<void(int)>& end_now = end_process_now);

// The exit status records call for: timeout (4) over error (3) over fail (1); ok and skipped
// are 0 ("cannot run here" is evidence, not a failure of the tool).
[[nodiscard]] int exit_code_for(const std::vector<Json>& records);

}  // namespace commcert
