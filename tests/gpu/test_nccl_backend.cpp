// Proves the device side of the sweep on a real GPU: the pattern kernels produce exactly what the
// host definitions produce, and the NCCL backend runs every collective with clean checks and
// attributes injected corruption. Skipped (with the reason) where no GPU is usable.

#include <chrono>
#include <future>
#include <numeric>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include "comm/control_plane.hpp"
#include "comm/gpu_runtime.hpp"
#include "comm/nccl_communicator.hpp"
#include "comm/nccl_features.hpp"
#include "kernels/pattern_device.hpp"
#include "kernels/pattern_host.hpp"

namespace commcert {
namespace {

// GTEST_SKIP only leaves the function it is written in, so every test body starts with this.
#define SKIP_WITHOUT_GPU()                                             \
  do {                                                                 \
    const GpuRuntimeInfo gpu = probe_gpu_runtime();                    \
    if (gpu.device_count == 0) GTEST_SKIP() << gpu.unavailable_reason; \
  } while (false)

std::vector<unsigned char> device_fill(const PatternSpec& spec, int rank, std::uint64_t elements,
                                       bool expected) {
  const std::size_t bytes = elements * static_cast<std::size_t>(element_size(spec.type));
  void* device = nullptr;
  EXPECT_EQ(cudaMalloc(&device, bytes), cudaSuccess);
  if (expected) {
    enqueue_fill_expected(spec, rank, device, elements, nullptr);
  } else {
    enqueue_fill_input(spec, rank, device, elements, nullptr);
  }
  std::vector<unsigned char> host(bytes);
  EXPECT_EQ(cudaMemcpy(host.data(), device, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(device);
  return host;
}

TEST(PatternKernels, MatchHostDefinitionsForEveryType) {
  SKIP_WITHOUT_GPU();
  for (int t = 0; t < kDataTypeCount; ++t) {
    for (const auto kind : {CollectiveKind::kAllReduce, CollectiveKind::kAllGather,
                            CollectiveKind::kReduceScatter, CollectiveKind::kAllToAll}) {
      PatternSpec spec;
      spec.collective = kind;
      spec.type = static_cast<DataType>(t);
      spec.op = ReduceOp::kSum;
      spec.nranks = 4;
      spec.count = 4099;
      spec.seed = 42;
      const auto elements = rank_layout(kind, spec.count, 4, 1, 0).output_elements;
      std::vector<unsigned char> host(elements * static_cast<std::size_t>(element_size(spec.type)));
      fill_expected_host(spec, 1, host.data(), elements);
      EXPECT_EQ(device_fill(spec, 1, elements, true), host) << "type " << t;
      fill_input_host(spec, 1, host.data(), elements);
      EXPECT_EQ(device_fill(spec, 1, elements, false), host) << "type " << t;
    }
  }
}

TEST(NcclBackend, EveryCollectiveChecksCleanOnOneGpu) {
  SKIP_WITHOUT_GPU();
  SingleProcessControlPlane control;
  NcclCommunicator communicator(control, {0});
  for (int k = 0; k < kCollectiveKindCount; ++k) {
    for (const bool in_place : {false, true}) {
      const auto kind = static_cast<CollectiveKind>(k);
      if (communicator.unsupported(kind, DataType::kFloat, ReduceOp::kSum, in_place)) continue;
      LoopPlan plan;
      plan.pattern = {kind, DataType::kFloat, ReduceOp::kSum, 1, 0, 1 << 16, 7};
      plan.in_place = in_place;
      plan.iterations = 5;
      const auto results = communicator.run(plan);
      ASSERT_EQ(results.size(), 1U);
      EXPECT_EQ(results[0].wrong_elements, 0U) << k << " in_place " << in_place;
      EXPECT_EQ(results[0].operation_seconds.size(), 5U);
      EXPECT_TRUE(results[0].checked);
    }
  }
}

TEST(NcclBackend, CorruptionIsCountedOnTheFaultyRank) {
  SKIP_WITHOUT_GPU();
  SingleProcessControlPlane control;
  NcclCommunicator communicator(control, {0});
  const FaultPlan faults = parse_fault_plan("corrupt:0");
  LoopPlan plan;
  plan.pattern = {CollectiveKind::kAllReduce, DataType::kBfloat16, ReduceOp::kSum, 1, 0, 10000, 3};
  plan.iterations = 3;
  plan.faults = &faults;
  const auto results = communicator.run(plan);
  EXPECT_EQ(results[0].wrong_iterations, 3);
  EXPECT_EQ(results[0].wrong_elements, 3U * ((10000 + kCorruptionStride - 1) / kCorruptionStride));
  // Each iteration wrote its own slice, so the batch ran back to back and every one was checked.
  EXPECT_TRUE(results[0].back_to_back_seconds.has_value());
}

TEST(NcclBackend, CheckedBatchRunsBackToBackLikeNcclTests) {
  SKIP_WITHOUT_GPU();
  SingleProcessControlPlane control;
  NcclCommunicator communicator(control, {0});
  // In place twice: the back-to-back pass after the first batch leaves the receive buffer
  // compounded, and the next checked batch must still start from its pristine image.
  for (const bool in_place : {false, true, true}) {
    LoopPlan plan;
    plan.pattern = {CollectiveKind::kAllReduce, DataType::kFloat, ReduceOp::kSum, 1, 0, 1 << 20, 9};
    plan.in_place = in_place;
    plan.iterations = 20;
    communicator.reserve_buffers(std::uint64_t{4} << 20);  // one slice's worth: the buffer grows
    const auto results = communicator.run(plan);
    ASSERT_EQ(results.size(), 1U);
    EXPECT_EQ(results[0].wrong_elements, 0U) << in_place;
    ASSERT_TRUE(results[0].back_to_back_seconds.has_value()) << in_place;
    const auto& windows = results[0].operation_seconds;
    ASSERT_EQ(windows.size(), 20U);
    const double sum = std::accumulate(windows.begin(), windows.end(), 0.0);
    // Measured again without an event pair around each operation, as nccl-tests does: never
    // slower than the windows (on an H200, 4 MiB: 6.4 us an operation against 8.9 us), and
    // out of place the one rank still copies 4 MiB per operation, so the span is not empty.
    EXPECT_LE(*results[0].back_to_back_seconds, sum * 1.1 + 2e-6) << in_place;
    EXPECT_GT(*results[0].back_to_back_seconds, 0) << in_place;
    if (!in_place) {
      EXPECT_GE(*results[0].back_to_back_seconds, sum * 0.4);
    }
  }
  LoopPlan blocking;
  blocking.pattern = {CollectiveKind::kAllReduce, DataType::kFloat, ReduceOp::kSum, 1, 0, 4096, 9};
  blocking.iterations = 3;
  blocking.blocking = 1;  // barriers between operations: windows only
  EXPECT_FALSE(communicator.run(blocking)[0].back_to_back_seconds.has_value());
}

TEST(NcclBackend, AnAbortAskedFromAnotherThreadIsDoneByTheDrivingThread) {
  // The watchdog's path on a timeout: rank 0 hangs before its third operation, the main thread
  // polls forever, the watchdog thread asks for the abort and the main thread carries it out.
  SKIP_WITHOUT_GPU();
  SingleProcessControlPlane control;
  NcclCommunicator communicator(control, {0});
  const FaultPlan faults = parse_fault_plan("hang:0:2");
  LoopPlan plan;
  plan.pattern = {CollectiveKind::kAllReduce, DataType::kFloat, ReduceOp::kSum, 1, 0, 1024, 3};
  plan.iterations = 5;
  plan.faults = &faults;
  auto asked = std::async(std::launch::async, [&communicator] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    return communicator.request_abort(30);
  });
  EXPECT_THROW((void)communicator.run(plan), AbortedOnRequest);
  EXPECT_TRUE(asked.get());
}

TEST(NcclBackend, SplitGivesACommunicatorThatRuns) {
  // ncclCommSplit in a group writes the new communicator at ncclGroupEnd: a destination copied
  // away before then left every split empty (node and pairs scopes ran nothing).
  SKIP_WITHOUT_GPU();
  SingleProcessControlPlane control;
  NcclCommunicator communicator(control, {0});
  const std::vector<int> colors = {0};
  auto part = communicator.split(colors);
  ASSERT_NE(part, nullptr);
  EXPECT_EQ(part->size(), 1);
  LoopPlan plan;
  plan.pattern = {CollectiveKind::kAllReduce, DataType::kFloat, ReduceOp::kSum, 1, 0, 4096, 2};
  plan.iterations = 2;
  EXPECT_EQ(part->run(plan)[0].wrong_elements, 0U);
  const std::vector<int> none = {-1};
  EXPECT_EQ(communicator.split(none), nullptr);
}

TEST(NcclBackend, UnsupportedFollowsTheLoadedNccl) {
  SKIP_WITHOUT_GPU();
  SingleProcessControlPlane control;
  NcclCommunicator communicator(control, {0});
  int loaded = 0;
  ASSERT_EQ(ncclGetVersion(&loaded), ncclSuccess);
  const int usable = usable_nccl_version(NCCL_VERSION_CODE, loaded);
  for (const auto kind :
       {CollectiveKind::kAllToAll, CollectiveKind::kGather, CollectiveKind::kScatter}) {
    EXPECT_EQ(communicator.unsupported(kind, DataType::kFloat, ReduceOp::kSum, false),
              nccl_version_lacks(usable, kind, DataType::kFloat));
  }
}

TEST(NcclBackend, CudaGraphReplaysAreTimedAndChecked) {
  // The receive buffer is poisoned before the last replay (outside its events): a clean check
  // here means the replay wrote the output, not the warm-up before it.
  SKIP_WITHOUT_GPU();
  SingleProcessControlPlane control;
  NcclCommunicator communicator(control, {0});
  LoopPlan plan;
  plan.pattern = {CollectiveKind::kAllReduce, DataType::kFloat, ReduceOp::kSum, 1, 0, 1 << 20, 5};
  plan.iterations = 10;
  plan.graph_launches = 3;
  for (const bool in_place : {false, true}) {
    plan.in_place = in_place;
    LoopPlan warmup = plan;  // leaves the right answer in the receive buffer, as the sweep does
    warmup.timed = false;
    warmup.check = false;
    (void)communicator.run(warmup);
    const auto results = communicator.run(plan);
    EXPECT_EQ(results[0].operation_seconds.size(), 3U);
    EXPECT_EQ(results[0].wrong_elements, 0U) << in_place;
    EXPECT_TRUE(results[0].checked);
    EXPECT_FALSE(results[0].back_to_back_seconds.has_value());  // poison sits between replays
  }
}

}  // namespace
}  // namespace commcert
