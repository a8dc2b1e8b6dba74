#include "cli/stage_session.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <unistd.h>

#include <fmt/format.h>

#include "core/api_error.hpp"
#include "core/errors.hpp"
#include "core/node_identity.hpp"
#include "core/run_output.hpp"
#include "records/run_meta.hpp"
#include "records/stage.hpp"

namespace commcert {
namespace {

// How long a failing process gives process 0 to record its failure and end the job before it
// marks what files it sees and ends the job itself. Process 0 hears it within its watchdog's poll
// interval; only a process 0 that does not answer (frozen) makes the wait this long.
constexpr auto kFailureRecordWait = std::chrono::seconds(5);

// The watched units of every process: `per_process` consecutive ranks each (1: the process).
std::vector<int> units_of(int process, int per_process) {
  std::vector<int> out;
  out.reserve(static_cast<std::size_t>(per_process));
  for (int unit = 0; unit < per_process; ++unit)
    out.push_back(process * per_process + unit);
  return out;
}

std::vector<int> process_of_each_unit(int processes, int per_process) {
  std::vector<int> out;
  out.reserve(static_cast<std::size_t>(processes) * static_cast<std::size_t>(per_process));
  for (int unit = 0; unit < processes * per_process; ++unit)
    out.push_back(unit / per_process);
  return out;
}

}  // namespace

StageSession::StageSession(Invocation& invocation, std::string_view command,
                           std::string_view record_kind, const StageOptions& options,
                           double timeout_s)
    : StageSession(invocation, command, record_kind, options, StageWatch{timeout_s, 1, {}}) {}

StageSession::StageSession(Invocation& invocation, std::string_view command,
                           std::string_view record_kind, const StageOptions& options,
                           StageWatch watch)
    : invocation_(invocation),
      command_(command),
      kind_(record_kind),
      options_(options),
      watch_(std::move(watch)),
      group_(invocation) {
  const int per_process = std::max(watch_.ranks_per_process, 1);
  Watchdog::TimeoutHandler handler = watch_.on_timeout;
  if (!handler) handler = [this](const TimeoutReport& report) { on_timeout(report); };
  watchdog_ = std::make_unique<Watchdog>(
      group_.control(), units_of(group_.process_index(), per_process),
      process_of_each_unit(group_.process_count(), per_process), watch_.timeout_s,
      std::move(handler), [this](const std::string& text) { on_peer_failure(text); });
}

StageSession::~StageSession() {
  watchdog_.reset();
}

int StageSession::run(const std::function<int()>& work) {
  try {
    return work();
  } catch (const std::exception& error) {
    // Before anything is written every process reached it from the same input: the CLI edge
    // says it once. Once the run directory exists, it is a failure of the run like any other.
    if (!output_ && dynamic_cast<const UsageError*>(&error) != nullptr) throw;
    if (watchdog_->timeout_declared()) leave_to_watchdog(error);
    end_on_error(error);
  }
}

void StageSession::leave_to_watchdog(const std::exception& error) {
  // The watchdog writes the record and ends the job with the timeout's exit status; this thread
  // aborts what it drives and waits for that end.
  fmt::print(stderr, "commcert {}: stopped by the timeout on {}: {}\n", command_, local_hostname(),
             error.what());
  if (data_plane_) data_plane_->abort();
  while (true)
    std::this_thread::sleep_for(std::chrono::seconds(1));
}

void StageSession::end_on_error(const std::exception& error) {
  ReportedFailure reported(error.what());
  const int exit_code = exit_code_for_error(reported);
  if (!output_) {
    fmt::print(stderr, "commcert {}: set-up failed on process {} ({}): {}\n", command_,
               group_.process_index(), local_hostname(), error.what());
  } else {
    // This rank alone may have failed: record why, then end the whole job so no peer waits. A
    // process driving several GPUs names the rank whose GPU failed.
    const RecordOrigin where = origin(slot_of_error(error, slots_));
    fmt::print(stderr, "commcert {}: error on rank {} ({}): {}\n", command_, where.rank, node_.node,
               error.what());
    StageErrorRecord record = stage_error_record(where, kind_, error);
    record.backend = backend_name_;
    record.component = failure_component_;
    try {
      output_->append_record(to_json(record));
    } catch (const std::exception&) {
      // Already failing; the stderr line above is the evidence left.
    }
    record_failure(
        {command_, group_.process_index(), where.rank, node_.node, error.what(), exit_code});
  }
  if (data_plane_) data_plane_->abort();
  if (group_.process_count() > 1) group_.control().abort_job(exit_code);
  throw reported;
}

void StageSession::record_failure(const StageFailure& failure) {
  const bool several = group_.process_count() > 1;
  if (reporting()) {
    try {
      output_->update_meta(failed_meta_fields(failure));
    } catch (const std::exception&) {
      // Already failing; the stderr line and the error record are the evidence left.
    }
    // The job ends here: `commcert run`'s suite.json says so too. Alone, the suite goes on.
    if (several) mark_run_failed_on_disk(output_->directory(), failure, false);
    return;
  }
  if (!several) return;
  if (watchdog_->peer_failures_heard()) {
    // Process 0 owns the files: it records the failure and ends the job, this process with it.
    group_.control().post_failure(failure_wire_text(failure));
    std::this_thread::sleep_for(kFailureRecordWait);
  }
  fmt::print(stderr,
             "commcert {}: process 0 did not end the job on the error of process {}; marking "
             "the run's files from process {}\n",
             command_, failure.process, failure.process);
  mark_run_failed_on_disk(output_->directory(), failure, true);
}

void StageSession::on_peer_failure(const std::string& text) {
  const std::optional<StageFailure> failure = failure_from_wire_text(text);
  std::lock_guard lock(mutex_);
  if (!failure || !output_) return;  // the watchdog ends the job all the same
  try {
    output_->update_meta(failed_meta_fields(*failure));
  } catch (const std::exception& error) {
    fmt::print(stderr, "commcert {}: could not record the error of process {}: {}\n", command_,
               failure->process, error.what());
  }
  mark_run_failed_on_disk(output_->directory(), *failure, false);
}

void StageSession::set_failure_component(std::string component) {
  std::lock_guard lock(mutex_);
  failure_component_ = std::move(component);
}

void StageSession::set_timeout_nodes(TimeoutNodes nodes) {
  std::lock_guard lock(mutex_);
  timeout_nodes_ = std::move(nodes);
}

std::size_t slot_of_error(const std::exception& error, const std::vector<StageSlot>& slots) {
  const auto* failure = dynamic_cast<const ApiFailure*>(&error);
  if (!failure || !failure->error().device) return 0;
  for (std::size_t slot = 0; slot < slots.size(); ++slot) {
    if (slots[slot].cuda_device == failure->error().device) return slot;
  }
  return 0;
}

void StageSession::set_data_plane(Communicator* communicator) {
  data_plane_ = communicator;
}

void StageSession::on_timeout(const TimeoutReport& report) {
  std::lock_guard lock(mutex_);
  std::string who;
  for (const int process : report.culprit_ranks) {
    std::string node = "?";
    for (const auto& rank : ranks_) {
      if (rank.process == process) node = rank.node;
    }
    who += fmt::format("{}process {} ({})", who.empty() ? "" : ", ", process, node);
  }
  const std::string reason = who.empty()
                                 ? fmt::format("'{}' did not complete within {} s on any process",
                                               report.context, report.timeout_seconds)
                                 : fmt::format("{} did not reach '{}' within {} s", who,
                                               report.context, report.timeout_seconds);
  if (!report.this_process_reports) {
    // Give the reporting process time to write before this one is ended too.
    std::this_thread::sleep_for(std::chrono::seconds(2));
    return;
  }
  std::fprintf(stderr, "commcert %s: timeout: %s\n", command_.c_str(), reason.c_str());
  if (!output_) return;
  RecordOrigin origin;
  origin.run_id = output_->run_id();
  origin.host = node_.node;
  origin.rank = first_rank_;
  origin.local_rank = group_.local_index();
  std::vector<std::vector<std::string>> subjects;
  if (timeout_nodes_) {
    try {
      subjects = timeout_nodes_(report);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "commcert %s: cannot tell what the timeout is about: %s\n",
                   command_.c_str(), error.what());
    }
  }
  if (subjects.empty()) subjects.emplace_back();
  for (auto& nodes : subjects) {
    StageTimeoutRecord record;
    record.origin = origin;
    record.kind = kind_;
    record.reason = reason;
    record.component = failure_component_;
    record.nodes = std::move(nodes);
    record.operation = report.context;
    record.timeout_s = report.timeout_seconds;
    output_->append_record(to_json(record));
  }
  output_->update_meta({{"status", "timeout"},
                        {"exit_code", to_int(ExitCode::kTimeout)},
                        {"end_time", utc_timestamp_now()}});
}

void StageSession::barrier(const std::string& context) {
  watchdog_->set_context(context);
  WatchedSection section(guard());
  group_.control().barrier();
}

std::vector<std::string> StageSession::all_gather(const std::string& context,
                                                  const std::string& mine) {
  watchdog_->set_context(context);
  WatchedSection section(guard());
  return group_.control().all_gather(mine);
}

double StageSession::all_reduce_max(const std::string& context, double mine) {
  watchdog_->set_context(context);
  WatchedSection section(guard());
  double value = mine;
  group_.control().all_reduce_max({&value, 1});
  return value;
}

void StageSession::start(std::vector<StageSlot> slots, const GpuRuntimeInfo& gpu, Json parameters,
                         std::vector<std::string> warnings) {
  identify(std::move(slots));
  open(gpu, std::move(parameters), std::move(warnings));
}

void StageSession::identify(std::vector<StageSlot> slots) {
  ControlPlane& control = group_.control();
  // Ranks are numbered by process, then slot; processes may hold different numbers of slots.
  const auto counts = all_gather("set-up: slot counts", std::to_string(slots.size()));
  int first = 0;
  int total = 0;
  for (int p = 0; p < static_cast<int>(counts.size()); ++p) {
    if (p == group_.process_index()) first = total;
    total += std::stoi(counts[static_cast<std::size_t>(p)]);
  }
  NodeIdentity node = resolve_node_identity(options_.node_name, first);

  Json mine = Json::array();
  for (std::size_t slot = 0; slot < slots.size(); ++slot) {
    RankIdentity identity;
    identity.rank = first + static_cast<int>(slot);
    identity.process = control.process_index();
    identity.node = node.node;
    identity.hostname = node.hostname;
    identity.local_rank =
        group_.local_index() * static_cast<int>(slots.size()) + static_cast<int>(slot);
    identity.pid = static_cast<int>(::getpid());
    identity.device = slots[slot].device;
    identity.gpu = slots[slot].gpu;
    mine.push_back(to_json(identity));
  }
  std::vector<RankIdentity> ranks(static_cast<std::size_t>(total));
  for (const auto& text : all_gather("set-up: rank identities", mine.dump())) {
    for (const auto& entry : Json::parse(text)) {
      auto identity = rank_identity_from_json(entry);
      ranks.at(static_cast<std::size_t>(identity.rank)) = std::move(identity);
    }
  }
  std::lock_guard lock(mutex_);
  first_rank_ = first;
  node_ = std::move(node);
  ranks_ = std::move(ranks);
  slots_ = std::move(slots);
  identified_ = true;
}

void StageSession::open(const GpuRuntimeInfo& gpu, Json parameters,
                        std::vector<std::string> warnings,
                        const std::optional<BackendChoice>& backend) {
  if (!identified_) throw std::logic_error("StageSession::open before identify");
  std::unique_ptr<RunOutput> output;
  {
    watchdog_->set_context("set-up: run directory");
    WatchedSection section(guard());
    output = open_run_output(group_.control(), options_, command_);
  }
  {
    std::lock_guard lock(mutex_);
    output_ = std::move(output);
  }

  const BackendChoice no_backend{"none", "auto",
                                 "no data plane: this stage measures each GPU by itself"};
  const BackendChoice& plane = backend ? *backend : no_backend;
  if (backend) backend_name_ = backend->name;
  warnings_ = measurement_warnings(group_, plane);
  warnings_.insert(warnings_.end(), warnings.begin(), warnings.end());
  RunMeta meta = start_meta(command_, invocation_, *output_, plane, group_, gpu, ranks_, warnings_);
  if (!backend) meta.backend = OrNull<MetaBackend>();  // no communicator: no data plane
  // Typed on the way out: a parameter of the wrong type stops the stage here, not a reader.
  meta.parameters = stage_parameters_from_json(command_, std::move(parameters));
  meta.fault_injection = OrNull<std::string>();
  output_->update_meta(to_json(meta));
  if (reporting()) {
    RunRecord run;
    run.origin = this->origin(0);
    run.command = command_;
    run.backend = backend ? backend->name : RunRecord::kBackendNone;
    run.ranks = ranks_;
    output_->append_record(to_json(run));
  }
}

void StageSession::update_meta(const Json& fields) {
  if (output_) output_->update_meta(fields);
}

RecordOrigin StageSession::origin(std::size_t slot) const {
  RecordOrigin origin;
  origin.run_id = output_ ? output_->run_id() : "";
  origin.host = node_.node;
  origin.rank = first_rank_ + static_cast<int>(slot);
  origin.local_rank =
      group_.local_index() * static_cast<int>(std::max<std::size_t>(slots_.size(), 1)) +
      static_cast<int>(slot);
  if (slot < slots_.size()) origin.gpu = slots_[slot].gpu;
  return origin;
}

bool StageSession::speaks_for_node() const {
  for (const auto& rank : ranks_) {
    if (rank.node == node_.node) return rank.rank == first_rank_;
  }
  return true;
}

int StageSession::finish(const std::vector<Json>& records, bool interrupted,
                         bool abandoned_workers) {
  Json mine = Json::array();
  for (const auto& record : records)
    mine.push_back(record);
  const auto everyone = all_gather("finish: gathering records", mine.dump());
  if (reporting()) {
    for (const auto& text : everyone) {
      for (const auto& record : Json::parse(text))
        output_->append_record(record);
    }
  }
  const int agreed = agree_and_finish(group_.control(), guard(), *output_, exit_code_for(records),
                                      interrupted, "finish: agreeing on the exit status");
  return leave_stage(agreed, abandoned_workers);
}

int StageSession::finish_with_status(int exit_code, bool interrupted) {
  return agree_and_finish(group_.control(), guard(), *output_, exit_code, interrupted,
                          std::nullopt);
}

int agree_and_finish(ControlPlane& control, Watchdog* watchdog, RunOutput& output, int exit_code,
                     bool interrupted, const std::optional<std::string>& context) {
  if (watchdog && context) watchdog->set_context(*context);
  double worst = exit_code;
  {
    WatchedSection section(watchdog);
    control.all_reduce_max({&worst, 1});
  }
  const int agreed = static_cast<int>(worst);
  output.update_meta({{"status", status_word(agreed)},
                      {"exit_code", agreed},
                      {"end_time", utc_timestamp_now()},
                      {"interrupted", interrupted}});
  return agreed;
}

void end_process_now(int exit_code) {
  std::fflush(nullptr);
  std::_Exit(exit_code);
}

int leave_stage(int exit_code, bool abandoned_workers, const std::function<void(int)>& end_now) {
  if (abandoned_workers) end_now(exit_code);
  return exit_code;
}

int exit_code_for(const std::vector<Json>& records) {
  int code = to_int(ExitCode::kOk);
  for (const auto& record : records) {
    const std::string status = record.value("status", "error");
    int this_code = to_int(ExitCode::kOk);
    if (status == "fail") this_code = to_int(ExitCode::kFailed);
    if (status == "error") this_code = to_int(ExitCode::kError);
    if (status == "timeout") this_code = to_int(ExitCode::kTimeout);
    code = std::max(code, this_code);
  }
  return code;
}

}  // namespace commcert
