// Proves the device side of the sweep on a real GPU: the pattern kernels produce exactly what the
// host definitions produce, and the NCCL backend runs every collective with clean checks and
// attributes injected corruption. Skipped (with the reason) where no GPU is usable.

#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "comm/control_plane.hpp"
#include "comm/gpu_runtime.hpp"
#include "comm/nccl_communicator.hpp"
#include "pattern_device.hpp"
#include "pattern_host.hpp"

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
  NcclCommunicator communicator(control, 0, 1);
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
  NcclCommunicator communicator(control, 0, 1);
  const FaultPlan faults = parse_fault_plan("corrupt:0");
  LoopPlan plan;
  plan.pattern = {CollectiveKind::kAllReduce, DataType::kBfloat16, ReduceOp::kSum, 1, 0, 10000, 3};
  plan.iterations = 3;
  plan.faults = &faults;
  const auto results = communicator.run(plan);
  EXPECT_EQ(results[0].wrong_iterations, 3);
  EXPECT_EQ(results[0].wrong_elements, 3U * ((10000 + kCorruptionStride - 1) / kCorruptionStride));
}

TEST(NcclBackend, CudaGraphReplaysAreTimedAndChecked) {
  SKIP_WITHOUT_GPU();
  SingleProcessControlPlane control;
  NcclCommunicator communicator(control, 0, 1);
  LoopPlan plan;
  plan.pattern = {CollectiveKind::kAllReduce, DataType::kFloat, ReduceOp::kSum, 1, 0, 1 << 20, 5};
  plan.iterations = 10;
  plan.graph_launches = 3;
  const auto results = communicator.run(plan);
  EXPECT_EQ(results[0].operation_seconds.size(), 3U);
  EXPECT_EQ(results[0].wrong_elements, 0U);
  EXPECT_TRUE(results[0].checked);
}

}  // namespace
}  // namespace commcert
