#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "comm/control_plane.hpp"

namespace commcert {

// Where one rank was when a timeout was declared.
struct RankTimeoutState {
  int rank = 0;
  bool responded = false;  // its process answered within the grace period
  std::int64_t operations_begun = 0;
  bool inside_operation = false;
  double idle_seconds = 0;  // time since it last began or ended an operation
};

// The outcome of the timeout protocol, identical on every process that took part.
struct TimeoutReport {
  std::string context;  // what was running, e.g. "allreduce float sum 1 MiB in-place"
  double timeout_seconds = 0;
  std::vector<RankTimeoutState> ranks;  // indexed by global rank
  // Ranks that did not arrive: their process did not answer (frozen, dead), or they have been
  // outside any operation for at least half the timeout while others waited. Ranks waiting
  // inside an operation are victims, whatever operation they wait in (a broadcast routed
  // through a frozen rank leaves its subtree behind the others). Empty when every rank waits
  // inside an operation: the operation itself is stuck, which points at the interconnect.
  std::vector<int> culprit_ranks;
  bool this_process_reports = false;  // the lowest answering process writes the record
  bool attributed = true;             // false when processes could not be asked (no side channel)
};

// The states of every rank (`nranks`) from the answers gathered by the protocol, per process:
// when it declared (wall-clock ns), then per rank: rank, operations begun, inside (0/1),
// nanoseconds since its last begin or end. A rank no answer mentions keeps the default state: it
// did not respond, and nothing is known of it (no operations, not inside, no idle time).
[[nodiscard]] std::vector<RankTimeoutState> rank_states_from_answers(
    std::size_t nranks, const std::map<int, std::vector<std::int64_t>>& answers);

// Works out culprits and the reporter from the states gathered by the protocol. Pure, so the
// attribution rule is unit-tested without processes.
[[nodiscard]] TimeoutReport attribute_timeout(std::vector<RankTimeoutState> ranks,
                                              const std::vector<int>& process_of_rank,
                                              int this_process, double timeout_seconds);

// True when a peer declared the timeout more than the grace period before this process did
// (wall-clock nanoseconds; every notice carries its sender's). Such a process was not answering
// while the peers gathered answers (stopped, e.g. SIGSTOP on a frozen node, until the launcher
// resumed it to end the job): the peers named it and the lowest of them wrote the record, so its
// own, later view must not become a second record that contradicts the first.
[[nodiscard]] bool declared_after_peers_gathered(std::int64_t own_declared_ns,
                                                 const std::vector<std::int64_t>& peers_declared_ns,
                                                 double grace_seconds);

// Ends a job that stopped making progress, with a report of who did not arrive, instead of
// hanging. The main thread brackets every blocking operation with begin()/end(); a thread checks
// deadlines and answers peers' notices. When an operation overruns its timeout, or a peer says
// one did, every live process exchanges where its ranks are (over the control plane's side
// channel), the culprits are the ranks that never arrived, and `on_timeout` runs on the
// watchdog thread; it must end the process (it is followed by abort_job if it returns).
//
// On process 0 it also listens for a peer's failure (ControlPlane::post_failure): a process whose
// error ends the job says why first, and `on_peer_failure` runs on the watchdog thread with the
// text, to record it; it must end the job (it is followed by abort_job if it returns). It listens
// also when the timeout is off (0).
class Watchdog {
 public:
  using TimeoutHandler = std::function<void(const TimeoutReport&)>;
  using FailureHandler = std::function<void(const std::string&)>;

  // `local_ranks`: global ranks of this process's slots; `process_of_rank`: for every global rank.
  Watchdog(ControlPlane& control, std::vector<int> local_ranks, std::vector<int> process_of_rank,
           double timeout_seconds, TimeoutHandler on_timeout, FailureHandler on_peer_failure = {});
  // Whether process 0 hears this process's post_failure (it listens there and can be told).
  [[nodiscard]] bool peer_failures_heard() const;
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void set_context(std::string context);
  void begin(int slot);
  // Restarts the slot's deadline without counting a new operation: a queue of asynchronous
  // operations is given the timeout per operation as each one completes.
  void refresh(int slot);
  void end(int slot);
  // The main thread waits on behalf of a slot that never began its operation (an injected hang):
  // the deadline runs while the slot still counts as absent, so a job whose every rank is
  // absent (one process, one GPU) ends at the timeout too, naming that rank.
  void await_absent(int slot);
  void begin_all();
  void end_all();
  [[nodiscard]] std::int64_t operations_begun(int slot) const;

  [[nodiscard]] double timeout_seconds() const { return timeout_seconds_; }
  // True from the moment this process starts declaring a timeout until the job ends. An error
  // the main thread sees from then on is the timeout's consequence (a peer aborted its
  // communicators), to be left to the watchdog rather than recorded and ended as an error.
  [[nodiscard]] bool timeout_declared() const { return declared_.load(std::memory_order_acquire); }
  // How long processes wait for each other's answers once a timeout is declared.
  [[nodiscard]] double grace_seconds() const;

 private:
  struct SlotState {
    std::atomic<std::int64_t> operations_begun{0};
    std::atomic<bool> inside{false};
    std::atomic<bool> awaited_absent{false};
    std::atomic<std::int64_t> deadline_ns{0};
    std::atomic<std::int64_t> last_change_ns{0};
  };

  void watch();
  [[noreturn]] void declare_timeout(std::optional<WatchdogNotice> first_notice);
  [[noreturn]] void report_peer_failure(const std::string& failure);
  [[nodiscard]] std::vector<std::int64_t> own_notice() const;

  ControlPlane& control_;
  std::vector<int> local_ranks_;
  std::vector<int> process_of_rank_;
  double timeout_seconds_;
  TimeoutHandler on_timeout_;
  FailureHandler on_peer_failure_;
  std::unique_ptr<SlotState[]> slots_;
  std::mutex context_mutex_;
  std::string context_;
  std::mutex wake_mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::atomic<bool> declared_{false};
  std::thread thread_;
};

// Brackets one blocking operation on every slot of the process (control-plane exchanges).
class WatchedSection {
 public:
  explicit WatchedSection(Watchdog* watchdog) : watchdog_(watchdog) {
    if (watchdog_) watchdog_->begin_all();
  }
  ~WatchedSection() {
    if (watchdog_) watchdog_->end_all();
  }
  WatchedSection(const WatchedSection&) = delete;
  WatchedSection& operator=(const WatchedSection&) = delete;

 private:
  Watchdog* watchdog_;
};

// Brackets one blocking operation of one slot (a rank of this process).
class WatchedSlot {
 public:
  WatchedSlot(Watchdog* watchdog, int slot) : watchdog_(watchdog), slot_(slot) {
    if (watchdog_) watchdog_->begin(slot_);
  }
  ~WatchedSlot() {
    if (watchdog_) watchdog_->end(slot_);
  }
  WatchedSlot(const WatchedSlot&) = delete;
  WatchedSlot& operator=(const WatchedSlot&) = delete;

 private:
  Watchdog* watchdog_;
  int slot_;
};

// Brackets asynchronous operations: each is begun on its slot as it is queued, the slot's
// deadline restarts as each completes, and every slot that began is ended once, when the batch
// is done (end) or when a throw leaves the scope that owns it.
class WatchedBatch {
 public:
  explicit WatchedBatch(Watchdog* watchdog) : watchdog_(watchdog) {}
  ~WatchedBatch() { end(); }
  WatchedBatch(const WatchedBatch&) = delete;
  WatchedBatch& operator=(const WatchedBatch&) = delete;

  void begin(int slot);
  void refresh(int slot);
  // A slot that never began its operation (an injected hang): see Watchdog::await_absent.
  void await_absent(int slot);
  // Ends one slot that began (it has finished); the others stay watched.
  void end(int slot);
  // Ends every slot still watched.
  void end();

 private:
  Watchdog* watchdog_;
  std::vector<int> begun_;  // slots begun and not yet ended
};

}  // namespace commcert
