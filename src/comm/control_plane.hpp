#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace commcert {

// A message between watchdog threads of different processes.
struct WatchdogNotice {
  int from_process = 0;
  std::vector<std::int64_t> payload;
};

// Host-side coordination between the processes of a job: identities, results, agreement, and
// the side channel the watchdog uses when the data plane is stuck. MpiControlPlane for MPI jobs,
// SingleProcessControlPlane for one process (NCCL -g without MPI).
class ControlPlane {
 public:
  virtual ~ControlPlane() = default;

  [[nodiscard]] virtual int process_index() const = 0;
  [[nodiscard]] virtual int process_count() const = 0;

  // Blocking collectives over processes; callers announce them to the watchdog.
  virtual std::vector<std::string> all_gather(const std::string& mine) = 0;
  virtual std::string broadcast_from_root(const std::string& value) = 0;
  virtual void all_reduce_max(std::span<double> values) = 0;
  // Process 0 receives every process's values in process order; the others receive nothing.
  virtual std::vector<std::vector<double>> gather_to_root(std::span<const double> mine) = 0;
  virtual void barrier() = 0;

  // Watchdog side channel: usable from another thread while the main thread is blocked in a
  // collective. Without it (MPI without MPI_THREAD_MULTIPLE) a timeout is reported locally only.
  [[nodiscard]] virtual bool has_side_channel() const = 0;
  virtual void post_notice(std::span<const std::int64_t> payload) = 0;
  virtual std::optional<WatchdogNotice> poll_notice() = 0;

  // Failure channel: a process whose error is about to end the job tells process 0, which owns
  // the run's files, why (a short text) so that it records it before the job ends. Like the
  // notices, usable from another thread, and only with a side channel; without one (and on one
  // process) nothing is sent and nothing arrives.
  virtual void post_failure(const std::string& text) { (void)text; }
  virtual std::optional<std::string> poll_failure() { return std::nullopt; }

  // Ends every process of the job with `exit_code`. Never returns.
  [[noreturn]] virtual void abort_job(int exit_code) noexcept = 0;
};

class SingleProcessControlPlane final : public ControlPlane {
 public:
  [[nodiscard]] int process_index() const override { return 0; }
  [[nodiscard]] int process_count() const override { return 1; }
  std::vector<std::string> all_gather(const std::string& mine) override { return {mine}; }
  std::string broadcast_from_root(const std::string& value) override { return value; }
  void all_reduce_max(std::span<double> /*values*/) override {}
  std::vector<std::vector<double>> gather_to_root(std::span<const double> mine) override {
    return {std::vector<double>(mine.begin(), mine.end())};
  }
  void barrier() override {}
  [[nodiscard]] bool has_side_channel() const override { return true; }
  void post_notice(std::span<const std::int64_t> /*payload*/) override {}
  std::optional<WatchdogNotice> poll_notice() override { return std::nullopt; }
  [[noreturn]] void abort_job(int exit_code) noexcept override;
};

}  // namespace commcert
