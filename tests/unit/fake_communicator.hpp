#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "comm/communicator.hpp"

namespace commcert::test_support {

// A communicator that runs nothing: what set-up and the timeout path ask of a backend (ranks,
// GPU identities, abort requests) without MPI, NCCL or a GPU.
class FakeCommunicator final : public Communicator {
 public:
  explicit FakeCommunicator(std::vector<GpuIdentity> gpus = {}) : gpus_(std::move(gpus)) {
    for (std::size_t slot = 0; slot < std::max<std::size_t>(gpus_.size(), 1); ++slot)
      ranks_.push_back(static_cast<int>(slot));
  }

  [[nodiscard]] std::string_view backend_name() const override { return "fake"; }
  [[nodiscard]] int size() const override { return static_cast<int>(ranks_.size()); }
  [[nodiscard]] std::span<const int> local_ranks() const override { return ranks_; }
  [[nodiscard]] std::span<const int> global_ranks() const override { return ranks_; }
  [[nodiscard]] std::optional<std::string> unsupported(CollectiveKind, DataType, ReduceOp,
                                                       bool) const override {
    return std::nullopt;
  }
  [[nodiscard]] std::uint64_t max_buffer_bytes() const override { return 1 << 20; }
  [[nodiscard]] std::vector<std::string> device_descriptions() const override {
    std::vector<std::string> out;
    for (const auto& gpu : gpus_)
      out.push_back("[" + gpu.pci_bus_id + "] " + gpu.name);
    return out;
  }
  [[nodiscard]] std::vector<GpuIdentity> gpu_identities() const override { return gpus_; }
  std::vector<RankLoopResult> run(const LoopPlan&) override { return {}; }
  void abort() noexcept override { ++aborts; }
  bool request_abort(double wait_seconds) noexcept override {
    requested_wait_seconds = wait_seconds;
    return on_abort_request ? on_abort_request() : true;
  }
  [[nodiscard]] std::unique_ptr<Communicator> split(std::span<const int>) override {
    return nullptr;
  }
  void reserve_buffers(std::uint64_t) override {}
  void release_buffers() override {}

  // What request_abort() does and answers; unset: aborted at once.
  std::function<bool()> on_abort_request;
  std::optional<double> requested_wait_seconds;
  int aborts = 0;

 private:
  std::vector<GpuIdentity> gpus_;
  std::vector<int> ranks_;
};

}  // namespace commcert::test_support
