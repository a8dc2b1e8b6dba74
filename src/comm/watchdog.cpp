#include "comm/watchdog.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <utility>

#include "core/clock.hpp"
#include "core/errors.hpp"

namespace commcert {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(20);

std::int64_t wall_clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now().time_since_epoch())
      .count();
}

}  // namespace

std::vector<RankTimeoutState> rank_states_from_answers(
    std::size_t nranks, const std::map<int, std::vector<std::int64_t>>& answers) {
  std::vector<RankTimeoutState> ranks(nranks);
  for (std::size_t rank = 0; rank < ranks.size(); ++rank)
    ranks[rank].rank = static_cast<int>(rank);
  for (const auto& [process, payload] : answers) {
    for (std::size_t at = 1; at + 3 < payload.size(); at += 4) {
      const auto rank = static_cast<std::size_t>(payload[at]);
      if (rank >= ranks.size()) continue;
      ranks[rank].responded = true;
      ranks[rank].operations_begun = payload[at + 1];
      ranks[rank].inside_operation = payload[at + 2] != 0;
      ranks[rank].idle_seconds = static_cast<double>(payload[at + 3]) * 1e-9;
    }
  }
  return ranks;
}

TimeoutReport attribute_timeout(std::vector<RankTimeoutState> ranks,
                                const std::vector<int>& process_of_rank, int this_process,
                                double timeout_seconds) {
  TimeoutReport report;
  int lowest_answering_process = -1;
  for (const auto& state : ranks) {
    const bool absent = !state.inside_operation && state.idle_seconds >= timeout_seconds / 2;
    if (!state.responded || absent) report.culprit_ranks.push_back(state.rank);
    if (!state.responded) continue;
    const int process = process_of_rank.at(static_cast<std::size_t>(state.rank));
    if (lowest_answering_process < 0 || process < lowest_answering_process) {
      lowest_answering_process = process;
    }
  }
  report.ranks = std::move(ranks);
  report.timeout_seconds = timeout_seconds;
  report.this_process_reports = lowest_answering_process == this_process;
  return report;
}

bool declared_after_peers_gathered(std::int64_t own_declared_ns,
                                   const std::vector<std::int64_t>& peers_declared_ns,
                                   double grace_seconds) {
  const auto grace_ns = static_cast<std::int64_t>(grace_seconds * 1e9);
  return std::any_of(peers_declared_ns.begin(), peers_declared_ns.end(),
                     [&](std::int64_t peer) { return own_declared_ns - peer > grace_ns; });
}

Watchdog::Watchdog(ControlPlane& control, std::vector<int> local_ranks,
                   std::vector<int> process_of_rank, double timeout_seconds,
                   TimeoutHandler on_timeout, FailureHandler on_peer_failure)
    : control_(control),
      local_ranks_(std::move(local_ranks)),
      process_of_rank_(std::move(process_of_rank)),
      timeout_seconds_(timeout_seconds),
      on_timeout_(std::move(on_timeout)),
      on_peer_failure_(std::move(on_peer_failure)),
      slots_(std::make_unique<SlotState[]>(local_ranks_.size())) {
  for (std::size_t slot = 0; slot < local_ranks_.size(); ++slot) {
    slots_[slot].last_change_ns.store(now_ns(), std::memory_order_relaxed);
  }
  if (control_.process_index() != 0 || !peer_failures_heard()) on_peer_failure_ = nullptr;
  if (timeout_seconds_ > 0 || on_peer_failure_) thread_ = std::thread([this] { watch(); });
}

bool Watchdog::peer_failures_heard() const {
  // Every process of a stage gets the same handler over the same kind of side channel.
  return control_.process_count() > 1 && control_.has_side_channel();
}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(wake_mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

double Watchdog::grace_seconds() const {
  return std::clamp(timeout_seconds_ / 4.0, 2.0, 10.0);
}

void Watchdog::set_context(std::string context) {
  std::lock_guard lock(context_mutex_);
  context_ = std::move(context);
}

void Watchdog::begin(int slot) {
  auto& state = slots_[static_cast<std::size_t>(slot)];
  const std::int64_t now = now_ns();
  state.deadline_ns.store(now + static_cast<std::int64_t>(timeout_seconds_ * 1e9),
                          std::memory_order_relaxed);
  state.last_change_ns.store(now, std::memory_order_relaxed);
  state.operations_begun.fetch_add(1, std::memory_order_relaxed);
  state.awaited_absent.store(false, std::memory_order_relaxed);
  state.inside.store(true, std::memory_order_release);
}

void Watchdog::await_absent(int slot) {
  auto& state = slots_[static_cast<std::size_t>(slot)];
  if (state.awaited_absent.load(std::memory_order_acquire)) return;
  // The slot may still be marked inside the operations it queued before it stopped (a hang in
  // the middle of a batch): it is absent from the next one, and must be reported as such, not
  // as a rank waiting inside an operation (on one GPU that would blame the interconnect).
  const std::int64_t now = now_ns();
  state.deadline_ns.store(now + static_cast<std::int64_t>(timeout_seconds_ * 1e9),
                          std::memory_order_relaxed);
  if (state.inside.load(std::memory_order_acquire)) {
    state.last_change_ns.store(now, std::memory_order_relaxed);
    state.inside.store(false, std::memory_order_release);
  }
  state.awaited_absent.store(true, std::memory_order_release);
}

void Watchdog::refresh(int slot) {
  slots_[static_cast<std::size_t>(slot)].deadline_ns.store(
      now_ns() + static_cast<std::int64_t>(timeout_seconds_ * 1e9), std::memory_order_relaxed);
}

void Watchdog::end(int slot) {
  auto& state = slots_[static_cast<std::size_t>(slot)];
  state.last_change_ns.store(now_ns(), std::memory_order_relaxed);
  state.awaited_absent.store(false, std::memory_order_relaxed);
  state.inside.store(false, std::memory_order_release);
}

void Watchdog::begin_all() {
  for (std::size_t slot = 0; slot < local_ranks_.size(); ++slot)
    begin(static_cast<int>(slot));
}

void Watchdog::end_all() {
  for (std::size_t slot = 0; slot < local_ranks_.size(); ++slot)
    end(static_cast<int>(slot));
}

std::int64_t Watchdog::operations_begun(int slot) const {
  return slots_[static_cast<std::size_t>(slot)].operations_begun.load(std::memory_order_relaxed);
}

std::vector<std::int64_t> Watchdog::own_notice() const {
  // When this process declared (wall clock, comparable across nodes), then per slot: rank,
  // operations begun, inside (0/1), nanoseconds since the last begin or end.
  std::vector<std::int64_t> payload{wall_clock_ns()};
  const std::int64_t now = now_ns();
  for (std::size_t slot = 0; slot < local_ranks_.size(); ++slot) {
    payload.push_back(local_ranks_[slot]);
    payload.push_back(slots_[slot].operations_begun.load(std::memory_order_relaxed));
    payload.push_back(slots_[slot].inside.load(std::memory_order_acquire) ? 1 : 0);
    payload.push_back(now - slots_[slot].last_change_ns.load(std::memory_order_relaxed));
  }
  return payload;
}

void Watchdog::watch() {
  std::unique_lock lock(wake_mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, kPollInterval);
    if (stopping_) return;
    if (on_peer_failure_) {
      if (std::optional<std::string> failure = control_.poll_failure()) {
        lock.unlock();
        report_peer_failure(*failure);
      }
    }
    if (timeout_seconds_ <= 0) continue;
    const std::int64_t now = now_ns();
    bool overdue = false;
    for (std::size_t slot = 0; slot < local_ranks_.size(); ++slot) {
      const auto& state = slots_[slot];
      const bool watched = state.inside.load(std::memory_order_acquire) ||
                           state.awaited_absent.load(std::memory_order_acquire);
      overdue = overdue || (watched && now > state.deadline_ns.load(std::memory_order_relaxed));
    }
    std::optional<WatchdogNotice> notice;
    if (control_.has_side_channel()) notice = control_.poll_notice();
    if (overdue || notice) {
      lock.unlock();
      declare_timeout(std::move(notice));
    }
  }
}

void Watchdog::declare_timeout(std::optional<WatchdogNotice> first_notice) {
  declared_.store(true, std::memory_order_release);
  const int this_process = control_.process_index();
  std::map<int, std::vector<std::int64_t>> answers;
  answers[this_process] = own_notice();
  if (first_notice) answers[first_notice->from_process] = std::move(first_notice->payload);

  if (control_.has_side_channel()) {
    control_.post_notice(answers[this_process]);
    const auto grace = Deadline::after_seconds(grace_seconds());
    while (static_cast<int>(answers.size()) < control_.process_count() && !grace.expired()) {
      if (auto notice = control_.poll_notice()) {
        answers[notice->from_process] = std::move(notice->payload);
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
  }

  std::vector<std::int64_t> peers_declared_ns;
  for (const auto& [process, payload] : answers) {
    if (!payload.empty() && process != this_process) peers_declared_ns.push_back(payload[0]);
  }
  auto report = attribute_timeout(rank_states_from_answers(process_of_rank_.size(), answers),
                                  process_of_rank_, this_process, timeout_seconds_);
  {
    std::lock_guard lock(context_mutex_);
    report.context = context_;
  }
  if (!control_.has_side_channel()) {
    // Nobody could be asked: say so instead of blaming every other rank.
    report.culprit_ranks.clear();
    report.attributed = false;
    report.this_process_reports = this_process == 0;
  }
  if (declared_after_peers_gathered(answers[this_process][0], peers_declared_ns, grace_seconds())) {
    report.this_process_reports = false;
    std::fprintf(stderr,
                 "commcert: process %d was not answering while the others declared a timeout; "
                 "the record they wrote stands\n",
                 this_process);
  }
  try {
    on_timeout_(report);
  } catch (...) {
    std::fputs("commcert: error while reporting a timeout\n", stderr);
  }
  control_.abort_job(to_int(ExitCode::kTimeout));
  std::_Exit(to_int(ExitCode::kTimeout));  // abort_job does not return; this tells the compiler
}

void Watchdog::report_peer_failure(const std::string& failure) {
  try {
    on_peer_failure_(failure);
  } catch (...) {
    std::fputs("commcert: error while recording another process's failure\n", stderr);
  }
  control_.abort_job(to_int(ExitCode::kError));
  std::_Exit(to_int(ExitCode::kError));  // abort_job does not return; this tells the compiler
}

void WatchedBatch::begin(int slot) {
  if (!watchdog_) return;
  watchdog_->begin(slot);
  if (std::find(begun_.begin(), begun_.end(), slot) == begun_.end()) begun_.push_back(slot);
}

void WatchedBatch::refresh(int slot) {
  if (watchdog_) watchdog_->refresh(slot);
}

void WatchedBatch::await_absent(int slot) {
  if (!watchdog_) return;
  // No longer ended with the batch: ending it would stop the wait for it.
  begun_.erase(std::remove(begun_.begin(), begun_.end(), slot), begun_.end());
  watchdog_->await_absent(slot);
}

void WatchedBatch::end(int slot) {
  const auto it = std::find(begun_.begin(), begun_.end(), slot);
  if (it == begun_.end()) return;
  begun_.erase(it);
  watchdog_->end(slot);
}

void WatchedBatch::end() {
  for (const int slot : begun_)
    watchdog_->end(slot);
  begun_.clear();
}

}  // namespace commcert
