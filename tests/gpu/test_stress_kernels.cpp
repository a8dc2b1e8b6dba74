// Proves the burn and membw kernels on a real GPU against their host definitions: the data they
// write, the errors they find (including injected ones), the power kernel's arithmetic bit for
// bit, and the cuBLASLt GEMM's layout against a host reference. Skipped, with the reason, where
// no GPU is usable.

#include <cmath>
#include <cstring>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "bench/gpu/cuda_support.hpp"
#include "bench/gpu/gemm_runner.hpp"
#include "comm/gpu_runtime.hpp"
#include "kernels/burn_kernels.hpp"
#include "kernels/membw_kernels.hpp"

namespace commcert {
namespace {

#define SKIP_WITHOUT_GPU()                                             \
  do {                                                                 \
    const GpuRuntimeInfo gpu = probe_gpu_runtime();                    \
    if (gpu.device_count == 0) GTEST_SKIP() << gpu.unavailable_reason; \
  } while (false)

int sm_count() {
  int count = 0;
  cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, 0);
  return count;
}

template <typename T>
std::vector<T> to_host(const void* device, std::size_t count) {
  std::vector<T> host(count);
  EXPECT_EQ(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost),
            cudaSuccess);
  return host;
}

unsigned long long read_counter(const DeviceMemory& counter) {
  return to_host<unsigned long long>(counter.get(), 1)[0];
}

TEST(MembwKernels, CopyWriteAndReadMoveExactlyTheBytesAsked) {
  SKIP_WITHOUT_GPU();
  const int sms = sm_count();
  // An odd number of vectors: the tail of the grid-stride loop is exercised.
  const std::uint64_t bytes = 16ull * 1000003;
  const std::uint64_t words = bytes / 8;
  DeviceMemory src(bytes + 64);
  DeviceMemory dst(bytes + 64);
  DeviceMemory sink(sizeof(unsigned long long));
  ASSERT_EQ(cudaMemset(dst.get(), 0xee, bytes + 64), cudaSuccess);
  ASSERT_EQ(cudaMemset(sink.get(), 0, 8), cudaSuccess);
  enqueue_pattern_fill(src.get(), words, MemoryPattern::kRandom, 5, sms, nullptr);
  enqueue_read(src.get(), bytes, sink.as<unsigned long long>(), sms, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto a = to_host<std::uint64_t>(src.get(), words);
  std::uint64_t folded = 0;
  for (std::uint64_t i = 0; i < words; ++i) {
    ASSERT_EQ(a[i], memory_pattern_word(MemoryPattern::kRandom, 5, i)) << i;
    folded ^= a[i];
  }
  EXPECT_EQ(read_counter(sink), folded);
  for (const CopyShape& shape : kCopyShapes) {
    SCOPED_TRACE(::testing::Message()
                 << "accesses " << shape.accesses_per_thread << " blocks/SM " << shape.blocks_per_sm
                 << " warp-contiguous " << (shape.layout == CopyLayout::kWarpContiguous));
    ASSERT_EQ(cudaMemset(dst.get(), 0xee, bytes + 64), cudaSuccess);
    enqueue_copy(dst.get(), src.get(), bytes, sms, nullptr, shape);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto b = to_host<std::uint64_t>(dst.get(), words + 8);
    for (std::uint64_t i = 0; i < words; ++i)
      ASSERT_EQ(b[i], a[i]) << i;
    EXPECT_EQ(b[words], 0xeeeeeeeeeeeeeeeeULL);  // nothing written past the end
  }

  enqueue_write(dst.get(), bytes, 0x0123456789abcdefULL, sms, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto written = to_host<std::uint64_t>(dst.get(), words + 1);
  for (std::uint64_t i = 0; i < words; ++i)
    ASSERT_EQ(written[i], 0x0123456789abcdefULL) << i;
  EXPECT_EQ(written[words], 0xeeeeeeeeeeeeeeeeULL);
}

TEST(MemoryTestKernels, FindNoErrorInGoodMemoryAndLocateAnInjectedOne) {
  SKIP_WITHOUT_GPU();
  const int sms = sm_count();
  const std::uint64_t words = (64ull << 20) / 8;
  DeviceMemory region(words * 8);
  DeviceMemory log(sizeof(MemoryErrorLog));
  for (int p = 0; p < kMemoryPatternCount; ++p) {
    const auto pattern = static_cast<MemoryPattern>(p);
    ASSERT_EQ(cudaMemset(log.get(), 0, sizeof(MemoryErrorLog)), cudaSuccess);
    enqueue_pattern_fill(region.get(), words, pattern, 9, sms, nullptr);
    enqueue_pattern_verify(region.get(), words, pattern, 9, log.as<MemoryErrorLog>(), sms, nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(to_host<MemoryErrorLog>(log.get(), 1)[0].count, 0u) << memory_pattern_name(pattern);

    // A stuck bit: flip one bit of one word between fill and verify.
    const std::uint64_t bad_word = 123457;
    const std::uint64_t expected = memory_pattern_word(pattern, 9, bad_word);
    const std::uint64_t corrupted = expected ^ (1ULL << 17);
    ASSERT_EQ(
        cudaMemcpy(region.as<std::uint64_t>() + bad_word, &corrupted, 8, cudaMemcpyHostToDevice),
        cudaSuccess);
    enqueue_pattern_verify(region.get(), words, pattern, 9, log.as<MemoryErrorLog>(), sms, nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const MemoryErrorLog found = to_host<MemoryErrorLog>(log.get(), 1)[0];
    ASSERT_EQ(found.count, 1u) << memory_pattern_name(pattern);
    EXPECT_EQ(found.first[0].offset, bad_word * 8);
    EXPECT_EQ(found.first[0].expected, expected);
    EXPECT_EQ(found.first[0].actual, corrupted);
    EXPECT_EQ(found.first[0].pattern, static_cast<std::uint32_t>(p));
  }
}

TEST(BurnKernels, InputFillMatchesTheHostDefinitionInEveryType) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t n = 100003;
  DeviceMemory data(n * 8);
  const auto check = [&](BurnElement type, auto host_value) {
    using T = decltype(host_value(0));
    enqueue_fill_burn_input(data.get(), n, type, 77, 1, sm_count(), nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto device = to_host<T>(data.get(), n);
    for (std::uint64_t i = 0; i < n; ++i) {
      const T expected = host_value(i);
      ASSERT_EQ(std::memcmp(&device[i], &expected, sizeof(T)), 0) << "element " << i;
    }
  };
  check(BurnElement::kFp32, [](std::uint64_t i) { return burn_input_value(77, 1, i); });
  check(BurnElement::kFp64, [](std::uint64_t i) { return burn_input_value_f64(77, 1, i); });
  check(BurnElement::kBf16,
        [](std::uint64_t i) { return __float2bfloat16_rn(burn_input_value(77, 1, i)); });
  check(BurnElement::kFp16,
        [](std::uint64_t i) { return __float2half_rn(burn_input_value(77, 1, i)); });
  check(BurnElement::kFp8E4M3,
        [](std::uint64_t i) { return __nv_fp8_e4m3(burn_input_value(77, 1, i)); });
}

TEST(BurnKernels, FingerprintAndDifferenceCountMatchTheHost) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t n = 1 << 20;
  std::vector<std::uint16_t> host(n);
  std::uint64_t expected = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    host[i] = static_cast<std::uint16_t>(burn_input_bits(3, 0, i));
    expected += fingerprint_share(i, host[i]);
  }
  DeviceMemory a(n * 2);
  DeviceMemory b(n * 2);
  DeviceMemory counter(8);
  ASSERT_EQ(cudaMemcpy(a.get(), host.data(), n * 2, cudaMemcpyHostToDevice), cudaSuccess);
  host[5] ^= 1;
  host[n - 1] ^= 0x8000;
  host[4096] ^= 0x10;
  ASSERT_EQ(cudaMemcpy(b.get(), host.data(), n * 2, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemset(counter.get(), 0, 8), cudaSuccess);
  enqueue_fingerprint(a.get(), n, 2, counter.as<unsigned long long>(), sm_count(), nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(read_counter(counter), expected);
  for (unsigned bytes : {1u, 2u, 4u, 8u}) {
    ASSERT_EQ(cudaMemset(counter.get(), 0, 8), cudaSuccess);
    // The same three changed bytes seen as elements of each width: three differing elements.
    enqueue_count_differences(a.get(), b.get(), n * 2 / bytes, bytes,
                              counter.as<unsigned long long>(), sm_count(), nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(read_counter(counter), 3u) << bytes << "-byte elements";
  }
}

TEST(PowerFmaKernel, ComputesTheHostsChainsBitForBit) {
  SKIP_WITHOUT_GPU();
  PowerFmaLaunch launch;
  launch.blocks = 4;
  launch.steps = 5000;
  const std::uint64_t threads = launch.blocks * launch.threads_per_block;
  DeviceMemory out(threads * 2 * kPowerFmaPairs * sizeof(float));
  const PowerFmaShears shears = power_fma_shears();
  enqueue_power_fma(out.as<float>(), launch, 11, shears, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto device = to_host<float>(out.get(), threads * 2 * kPowerFmaPairs);
  for (std::uint64_t t = 0; t < threads; t += 97) {
    for (int p = 0; p < kPowerFmaPairs; ++p) {
      float x = 0;
      float y = 0;
      power_fma_start(11, t, p, x, y);
      for (unsigned s = 0; s < launch.steps; ++s)
        power_fma_step(x, y, shears.pair[p]);
      ASSERT_EQ(std::memcmp(&device[t * 2 * kPowerFmaPairs + 2 * p], &x, 4), 0) << "thread " << t;
      ASSERT_EQ(std::memcmp(&device[t * 2 * kPowerFmaPairs + 2 * p + 1], &y, 4), 0)
          << "thread " << t;
    }
  }
}

// D = A^T B against a host reference: proves the layouts and transposes handed to cuBLASLt.
TEST(GemmRunner, ComputesATransposeBAndRepeatsItBitForBit) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t n = 256;
  CudaStream stream;
  for (const auto kernel : {BurnKernel::kGemmBf16, BurnKernel::kGemmFp64}) {
    GemmRunner gemm(kernel, n, 21, sm_count(), stream.get());
    gemm.enqueue();
    ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
    std::vector<double> d(n * n);
    if (kernel == BurnKernel::kGemmBf16) {
      const auto bits = to_host<__nv_bfloat16>(gemm.result(), n * n);
      for (std::uint64_t i = 0; i < n * n; ++i)
        d[i] = __bfloat162float(bits[i]);
    } else {
      d = to_host<double>(gemm.result(), n * n);
    }
    const auto input = [&](unsigned matrix, std::uint64_t i) {
      return kernel == BurnKernel::kGemmBf16
                 ? static_cast<double>(
                       __bfloat162float(__float2bfloat16_rn(burn_input_value(21, matrix, i))))
                 : burn_input_value_f64(21, matrix, i);
    };
    const double tolerance = kernel == BurnKernel::kGemmBf16 ? 1.0 / 64 : 1e-12;
    for (std::uint64_t row = 0; row < n; row += 17) {
      for (std::uint64_t col = 0; col < n; col += 13) {
        double reference = 0;
        double magnitude = 0;
        // Column-major: A is stored k x m (element (k, row) at row * n + k), B k x n.
        for (std::uint64_t k = 0; k < n; ++k) {
          const double term = input(0, row * n + k) * input(1, col * n + k);
          reference += term;
          magnitude += std::fabs(term);
        }
        ASSERT_NEAR(d[col * n + row], reference, tolerance * magnitude + 1e-6)
            << burn_kernel_name(kernel) << " row " << row << " col " << col;
      }
    }
    const auto first = to_host<unsigned char>(gemm.result(), n * n * gemm.result_element_bytes());
    gemm.enqueue();
    ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
    EXPECT_EQ(to_host<unsigned char>(gemm.result(), first.size()), first)
        << burn_kernel_name(kernel);
  }
}

}  // namespace
}  // namespace commcert
