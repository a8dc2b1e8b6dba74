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
#include <utility>
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

// The one fake communicator of the tests: every answer comes from a script. The sweep engine's
// unit tests drive it in place of MPI or NCCL; set-up and the timeout path read its GPU
// identities and abort requests. One process drives some or all ranks of the job (as NCCL does with
// -g N) and moves no data: each timed operation takes the seconds the script says and finds the
// wrong elements the script says. Times are reported, never slept, so a test of a 5 s budget
// takes no time.
class ScriptedCommunicator final : public Communicator {
 public:
  // One process driving every rank of a job of `ranks`.
  explicit ScriptedCommunicator(int ranks) : size_(ranks), ranks_(static_cast<std::size_t>(ranks)) {
    std::iota(ranks_.begin(), ranks_.end(), 0);
  }
  // One process of a larger job: it drives `global_ranks` (ascending) of a job of `job_size`
  // ranks; the other ranks belong to processes the test scripts on the control plane.
  ScriptedCommunicator(int job_size, std::vector<int> global_ranks)
      : size_(job_size), ranks_(std::move(global_ranks)) {}

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
  // split(): how many ranks of the whole job have `color`; by default this process's slots of
  // that color, as when one process drives the whole job.
  std::function<int(int color)> group_size;

  // What the engine asked for, of this communicator and of every split of it.
  std::vector<LoopPlan> plans;
  // What gpu_identities() answers (device_descriptions() names them when set); empty: host ranks.
  std::vector<GpuIdentity> gpus;
  // What request_abort() does and answers; unset: aborted at once.
  std::function<bool()> on_abort_request;
  std::optional<double> requested_wait_seconds;
  int aborts = 0;
  std::vector<std::uint64_t> reserved_bytes;
  std::vector<std::vector<int>> splits;  // the colors of every split, in slot order
  int releases = 0;

  [[nodiscard]] std::string_view backend_name() const override { return "scripted"; }
  [[nodiscard]] int size() const override { return size_; }
  // The engine reads global ranks only; a split's local ranks are left as its global ones.
  [[nodiscard]] std::span<const int> local_ranks() const override { return ranks_; }
  [[nodiscard]] std::span<const int> global_ranks() const override { return ranks_; }
  [[nodiscard]] std::optional<std::string> unsupported(CollectiveKind kind, DataType type,
                                                       ReduceOp op, bool in_place) const override {
    return root_->unsupported_reason(kind, type, op, in_place);
  }
  [[nodiscard]] std::uint64_t max_buffer_bytes() const override { return root_->buffer_cap_bytes; }
  [[nodiscard]] std::vector<std::string> device_descriptions() const override {
    if (root_->gpus.empty()) return std::vector<std::string>(ranks_.size(), "host");
    std::vector<std::string> out;
    for (const auto& gpu : root_->gpus)
      out.push_back("[" + gpu.pci_bus_id + "] " + gpu.name);
    return out;
  }
  [[nodiscard]] std::vector<GpuIdentity> gpu_identities() const override { return root_->gpus; }

  std::vector<RankLoopResult> run(const LoopPlan& plan) override {
    ScriptedCommunicator& root = *root_;
    if (root.before_run) root.before_run(plan);
    root.plans.push_back(plan);
    root.plans.back().faults = nullptr;  // the engine's plan outlives this call only
    if (!plan.timed) {
      root.last_.reset();  // a warm-up starts a measurement
      return {};
    }
    if (!root.same_measurement(plan)) {
      root.operations_done_ = 0;
      root.batches_done_ = 0;
    }
    root.last_ = plan;
    std::vector<RankLoopResult> out;
    for (const int rank : ranks_) {
      RankLoopResult result;
      result.rank = rank;
      result.checked = plan.check;
      double span = 0;
      for (int i = 0; i < plan.iterations; ++i) {
        const ScriptedOperation operation{rank, plan.pattern, plan.in_place,
                                          root.operations_done_ + i};
        result.operation_seconds.push_back(root.seconds(operation));
        span += result.operation_seconds.back();
        if (plan.check) {
          const std::uint64_t wrong = root.wrong_elements(operation);
          result.wrong_elements += wrong;
          result.wrong_iterations += wrong > 0 ? 1 : 0;
        }
      }
      if (root.back_to_back(root.batches_done_)) result.back_to_back_seconds = span;
      out.push_back(std::move(result));
    }
    root.operations_done_ += plan.iterations;
    ++root.batches_done_;
    return out;
  }

  void abort() noexcept override { ++root_->aborts; }
  bool request_abort(double wait_seconds) noexcept override {
    root_->requested_wait_seconds = wait_seconds;
    return root_->on_abort_request ? root_->on_abort_request() : true;
  }
  // A communicator of this process's slots whose color is >= 0 (they must share one, as one
  // node's ranks do), sharing this one's script and recording into it; nullptr when every slot
  // sits the round out.
  [[nodiscard]] std::unique_ptr<Communicator> split(std::span<const int> color_per_slot) override {
    root_->splits.emplace_back(color_per_slot.begin(), color_per_slot.end());
    std::vector<int> members;
    int color = -1;
    for (std::size_t slot = 0; slot < color_per_slot.size(); ++slot) {
      if (color_per_slot[slot] < 0) continue;
      if (color >= 0 && color_per_slot[slot] != color) {
        throw std::logic_error("ScriptedCommunicator: one process's slots in two groups");
      }
      color = color_per_slot[slot];
      members.push_back(ranks_.at(slot));
    }
    if (members.empty()) return nullptr;
    const int size =
        root_->group_size ? root_->group_size(color) : static_cast<int>(members.size());
    auto child = std::make_unique<ScriptedCommunicator>(size, std::move(members));
    child->root_ = root_;
    return child;
  }
  void reserve_buffers(std::uint64_t bytes) override { root_->reserved_bytes.push_back(bytes); }
  void release_buffers() override { ++root_->releases; }

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

  int size_;
  std::vector<int> ranks_;             // global ranks of this process's slots
  ScriptedCommunicator* root_ = this;  // the communicator a test holds (splits forward to it)
  std::optional<LoopPlan> last_;
  int operations_done_ = 0;
  int batches_done_ = 0;
};

}  // namespace commcert::test_support
