#include "cli/stage_session.hpp"

#include <algorithm>
#include <chrono>
#include <thread>
#include <unistd.h>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/run_output.hpp"
#include "records/stage.hpp"

namespace commcert {
namespace {

// The watchdog counts processes: a rank of a GPU stage never waits on another rank of its own
// process, so the process is the unit that can fail to arrive.
std::vector<int> all_processes(int count) {
  std::vector<int> out;
  out.reserve(static_cast<std::size_t>(count));
  for (int p = 0; p < count; ++p)
    out.push_back(p);
  return out;
}

}  // namespace

StageSession::StageSession(Invocation& invocation, std::string_view command,
                           std::string_view record_kind, const StageOptions& options,
                           double timeout_s)
    : invocation_(invocation),
      command_(command),
      kind_(record_kind),
      options_(options),
      timeout_s_(timeout_s),
      group_(invocation) {
  watchdog_ =
      std::make_unique<Watchdog>(group_.control(), std::vector<int>{group_.process_index()},
                                 all_processes(group_.process_count()), timeout_s_,
                                 [this](const TimeoutReport& report) { on_timeout(report); });
}

StageSession::~StageSession() {
  watchdog_.reset();
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
  StageTimeoutRecord record;
  record.origin = std::move(origin);
  record.kind = kind_;
  record.reason = reason;
  record.operation = report.context;
  record.timeout_s = report.timeout_seconds;
  output_->append_record(to_json(record));
  output_->update_meta({{"status", "timeout"},
                        {"exit_code", to_int(ExitCode::kTimeout)},
                        {"end_time", utc_timestamp_now()}});
}

void StageSession::barrier(const std::string& context) {
  watchdog_->set_context(context);
  WatchedSection section(watchdog_.get());
  group_.control().barrier();
}

std::vector<std::string> StageSession::all_gather(const std::string& context,
                                                  const std::string& mine) {
  watchdog_->set_context(context);
  WatchedSection section(watchdog_.get());
  return group_.control().all_gather(mine);
}

double StageSession::all_reduce_max(const std::string& context, double mine) {
  watchdog_->set_context(context);
  WatchedSection section(watchdog_.get());
  double value = mine;
  group_.control().all_reduce_max({&value, 1});
  return value;
}

void StageSession::start(std::vector<StageSlot> slots, const GpuRuntimeInfo& gpu, Json parameters,
                         std::vector<std::string> warnings) {
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
  std::unique_ptr<RunOutput> output;
  {
    watchdog_->set_context("set-up: run directory");
    WatchedSection section(watchdog_.get());
    output = open_run_output(control, options_, command_);
  }
  {
    std::lock_guard lock(mutex_);
    first_rank_ = first;
    node_ = std::move(node);
    ranks_ = std::move(ranks);
    slots_ = std::move(slots);
    output_ = std::move(output);
  }

  const BackendChoice no_backend{"none", "auto",
                                 "no data plane: this stage measures each GPU by itself"};
  auto all_warnings = measurement_warnings(group_, no_backend);
  all_warnings.insert(all_warnings.end(), warnings.begin(), warnings.end());
  Json meta =
      start_meta(command_, invocation_, *output_, no_backend, group_, gpu, ranks_, all_warnings);
  meta["backend"] = nullptr;  // no communicator: the stage has no data-plane backend
  meta["parameters"] = std::move(parameters);
  meta["fault_injection"] = nullptr;
  output_->update_meta(meta);
  if (reporting()) {
    RunRecord run;
    run.origin = this->origin(0);
    run.command = command_;
    run.backend = RunRecord::kBackendNone;
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

int StageSession::finish(const std::vector<Json>& records, bool interrupted) {
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
  return agree_and_finish(group_.control(), watchdog_.get(), *output_, exit_code_for(records),
                          interrupted, "finish: agreeing on the exit status");
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
