// The GPU half of `commcert links --transport verbs --mem gpu` on a real GPU, without an RDMA
// device: the buffer is whole 2 MiB pages, and where the driver says it supports dma-buf the
// buffer exports as one dma-buf covering all of it (what ibv_reg_dmabuf_mr is then given).
// Skipped, with the reason, where no GPU is usable or the driver has no dma-buf support.

#include <cstdint>
#include <string>
#include <sys/types.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "comm/gpu_runtime.hpp"
#include "core/errors.hpp"
#include "links/verbs_gpu_memory.hpp"

namespace commcert {
namespace {

constexpr std::uint64_t kTwoMiB = std::uint64_t{2} << 20;

#define SKIP_WITHOUT_GPU()                                             \
  do {                                                                 \
    const GpuRuntimeInfo gpu = probe_gpu_runtime();                    \
    if (gpu.device_count == 0) GTEST_SKIP() << gpu.unavailable_reason; \
  } while (false)

TEST(VerbsGpuMemory, RoundsTheBufferUpToWholeTwoMiBPages) {
  SKIP_WITHOUT_GPU();
  const auto exact = allocate_gpu_memory(0, kTwoMiB);
  EXPECT_EQ(exact->bytes(), kTwoMiB);
  const auto one_more = allocate_gpu_memory(0, kTwoMiB + 1);
  EXPECT_EQ(one_more->bytes(), 2 * kTwoMiB);
  EXPECT_NE(one_more->pointer(), nullptr);
}

TEST(VerbsGpuMemory, ExportsOneDmaBufCoveringTheWholeBuffer) {
  SKIP_WITHOUT_GPU();
  const auto buffer = allocate_gpu_memory(0, 3 * kTwoMiB - 5);
  if (!buffer->dmabuf_supported()) {
    GTEST_SKIP() << "GPU 0 reports no dma-buf support (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED is 0;"
                    " it needs the open kernel modules): --mem gpu would use peer memory";
  }
  std::string error;
  const int fd = buffer->export_dmabuf(error);
  ASSERT_GE(fd, 0) << error;
  // A dma-buf's size is what seeking to its end gives.
  const off_t size = lseek(fd, 0, SEEK_END);
  close(fd);
  EXPECT_EQ(static_cast<std::uint64_t>(size), buffer->bytes());
  EXPECT_EQ(buffer->bytes(), 3 * kTwoMiB);
}

TEST(VerbsGpuMemory, ANonexistentGpuIsARuntimeFailure) {
  SKIP_WITHOUT_GPU();
  const int past_the_last = probe_gpu_runtime().device_count;
  EXPECT_THROW((void)allocate_gpu_memory(past_the_last, kTwoMiB), RuntimeFailure);
}

}  // namespace
}  // namespace commcert
