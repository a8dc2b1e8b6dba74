#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "comm/communicator.hpp"

namespace commcert::test_support {

// One timed operation of one rank, as the script sees it. `operation` counts the timed
// operations of this rank within the current measurement (one size, type, op, root and
// placement), from 0 across its batches, so a script can give the 7th iteration a slow time.
struct ScriptedOperation {
  int rank = 0;
  PatternSpec pattern;
  bool in_place = false;
  int operation = 0;
};

// A communicator whose every answer comes from a script: what the sweep engine's unit test drives
// in place of MPI or NCCL. One process drives `ranks` ranks (as NCCL does with -g N) and moves
// no data: each timed operation takes the seconds the script says and finds the wrong elements
// the script says. Times are reported, never slept, so a test of a 5 s budget takes no time.
class ScriptedCommunicator final : public Communicator {
 public:
  explicit ScriptedCommunicator(int ranks) : ranks_(static_cast<std::size_t>(ranks)) {
    std::iota(ranks_.begin(), ranks_.end(), 0);
  }

  // The script; every member has a default that measures 1 ms per operation and finds nothing.
  std::function<double(const ScriptedOperation&)> seconds = [](const ScriptedOperation&) {
    return 1e-3;
  };
  std::function<std::uint64_t(const ScriptedOperation&)> wrong_elements =
      [](const ScriptedOperation&) { return std::uint64_t{0}; };
  // Whether the ranks report nccl-tests' span of back-to-back operations (the sum of their
  // times) for the `batch`-th timed batch of the current measurement.
  std::function<bool(int batch)> back_to_back = [](int) { return false; };
  std::function<std::optional<std::string>(CollectiveKind, DataType, ReduceOp, bool)>
      unsupported_reason =
          [](CollectiveKind, DataType, ReduceOp, bool) { return std::optional<std::string>{}; };
  std::uint64_t buffer_cap_bytes = std::uint64_t{1} << 30;
  // Called before every run(): a test can raise the stop signal at a chosen moment.
  std::function<void(const LoopPlan&)> before_run;

  // What the engine asked for.
  std::vector<LoopPlan> plans;
  std::vector<std::uint64_t> reserved_bytes;
  int releases = 0;

  [[nodiscard]] std::string_view backend_name() const override { return "scripted"; }
  [[nodiscard]] int size() const override { return static_cast<int>(ranks_.size()); }
  [[nodiscard]] std::span<const int> local_ranks() const override { return ranks_; }
  [[nodiscard]] std::span<const int> global_ranks() const override { return ranks_; }
  [[nodiscard]] std::optional<std::string> unsupported(CollectiveKind kind, DataType type,
                                                       ReduceOp op, bool in_place) const override {
    return unsupported_reason(kind, type, op, in_place);
  }
  [[nodiscard]] std::uint64_t max_buffer_bytes() const override { return buffer_cap_bytes; }
  [[nodiscard]] std::vector<std::string> device_descriptions() const override {
    return std::vector<std::string>(ranks_.size(), "host");
  }

  std::vector<RankLoopResult> run(const LoopPlan& plan) override {
    if (before_run) before_run(plan);
    plans.push_back(plan);
    plans.back().faults = nullptr;  // the engine's plan outlives this call only
    if (!plan.timed) {
      last_.reset();  // a warm-up starts a measurement
      return {};
    }
    if (!same_measurement(plan)) {
      operations_done_ = 0;
      batches_done_ = 0;
    }
    last_ = plan;
    std::vector<RankLoopResult> out;
    for (const int rank : ranks_) {
      RankLoopResult result;
      result.rank = rank;
      result.checked = plan.check;
      double span = 0;
      for (int i = 0; i < plan.iterations; ++i) {
        const ScriptedOperation operation{rank, plan.pattern, plan.in_place, operations_done_ + i};
        result.operation_seconds.push_back(seconds(operation));
        span += result.operation_seconds.back();
        if (plan.check) {
          const std::uint64_t wrong = wrong_elements(operation);
          result.wrong_elements += wrong;
          result.wrong_iterations += wrong > 0 ? 1 : 0;
        }
      }
      if (back_to_back(batches_done_)) result.back_to_back_seconds = span;
      out.push_back(std::move(result));
    }
    operations_done_ += plan.iterations;
    ++batches_done_;
    return out;
  }

  void abort() noexcept override {}
  // Cluster scope never splits; a test of another scope needs a script for it first.
  [[nodiscard]] std::unique_ptr<Communicator> split(std::span<const int>) override {
    throw std::logic_error("ScriptedCommunicator: split is not scripted");
  }
  void reserve_buffers(std::uint64_t bytes) override { reserved_bytes.push_back(bytes); }
  void release_buffers() override { ++releases; }

  // The timed plans the engine ran, in order.
  [[nodiscard]] std::vector<LoopPlan> timed_plans() const {
    std::vector<LoopPlan> out;
    for (const auto& plan : plans) {
      if (plan.timed) out.push_back(plan);
    }
    return out;
  }

 private:
  [[nodiscard]] bool same_measurement(const LoopPlan& plan) const {
    if (!last_) return false;
    const PatternSpec& a = last_->pattern;
    const PatternSpec& b = plan.pattern;
    return a.collective == b.collective && a.type == b.type && a.op == b.op && a.root == b.root &&
           a.count == b.count && a.nranks == b.nranks && last_->in_place == plan.in_place;
  }

  std::vector<int> ranks_;
  std::optional<LoopPlan> last_;
  int operations_done_ = 0;
  int batches_done_ = 0;
};

}  // namespace commcert::test_support
