#include "kernels/pattern_device.hpp"

namespace commcert {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::uint64_t elements) {
  // Grid-stride loops: enough blocks to fill any GPU, few enough to launch cheaply.
  const std::uint64_t wanted = (elements + kThreads - 1) / kThreads;
  return static_cast<unsigned>(wanted < 4096 ? (wanted > 0 ? wanted : 1) : 4096);
}

__device__ std::uint64_t global_index() {
  return static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ std::uint64_t grid_stride() {
  return static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
}

__global__ void fill_input_kernel(PatternSpec spec, int rank, void* input, std::uint64_t elements) {
  const int bytes = element_size(spec.type);
  for (std::uint64_t i = global_index(); i < elements; i += grid_stride()) {
    store_element(input, i, bytes, input_bits(spec, rank, i));
  }
}

__global__ void fill_expected_kernel(PatternSpec spec, int rank, void* expected,
                                     std::uint64_t elements) {
  const int bytes = element_size(spec.type);
  for (std::uint64_t i = global_index(); i < elements; i += grid_stride()) {
    store_element(expected, i, bytes, expected_bits(spec, rank, i));
  }
}

template <typename Word>
__global__ void poison_kernel(const Word* expected, Word* output, std::uint64_t elements) {
  for (std::uint64_t i = global_index(); i < elements; i += grid_stride()) {
    output[i] = static_cast<Word>(~expected[i]);
  }
}

__global__ void count_mismatches_kernel(PatternSpec spec, const void* output, const void* expected,
                                        std::uint64_t elements, unsigned long long* counter) {
  __shared__ unsigned long long block_total;
  if (threadIdx.x == 0) block_total = 0;
  __syncthreads();
  const int bytes = element_size(spec.type);
  unsigned long long mine = 0;
  for (std::uint64_t i = global_index(); i < elements; i += grid_stride()) {
    mine += element_matches(spec, load_element(output, i, bytes), load_element(expected, i, bytes))
                ? 0
                : 1;
  }
  if (mine) atomicAdd(&block_total, mine);
  __syncthreads();
  if (threadIdx.x == 0 && block_total) atomicAdd(counter, block_total);
}

__global__ void corrupt_kernel(PatternSpec spec, void* output, std::uint64_t elements) {
  const int bytes = element_size(spec.type);
  const std::uint64_t targets = (elements + kCorruptionStride - 1) / kCorruptionStride;
  for (std::uint64_t t = global_index(); t < targets; t += grid_stride()) {
    const std::uint64_t i = t * kCorruptionStride;
    store_element(output, i, bytes, corrupted_bits(load_element(output, i, bytes), spec.type));
  }
}

__global__ void spin_kernel(std::uint64_t nanoseconds) {
  std::uint64_t start = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  std::uint64_t now = start;
  while (now - start < nanoseconds)
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
}

}  // namespace

void enqueue_fill_input(const PatternSpec& spec, int rank, void* input, std::uint64_t elements,
                        cudaStream_t stream) {
  if (elements == 0) return;
  fill_input_kernel<<<blocks_for(elements), kThreads, 0, stream>>>(spec, rank, input, elements);
}

void enqueue_fill_expected(const PatternSpec& spec, int rank, void* expected,
                           std::uint64_t elements, cudaStream_t stream) {
  if (elements == 0) return;
  fill_expected_kernel<<<blocks_for(elements), kThreads, 0, stream>>>(spec, rank, expected,
                                                                      elements);
}

void enqueue_poison(const PatternSpec& spec, const void* expected, void* output,
                    std::uint64_t elements, cudaStream_t stream) {
  if (elements == 0) return;
  const unsigned blocks = blocks_for(elements);
  switch (element_size(spec.type)) {
    case 1:
      poison_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const std::uint8_t*>(expected),
                                                     static_cast<std::uint8_t*>(output), elements);
      break;
    case 2:
      poison_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const std::uint16_t*>(expected),
                                                     static_cast<std::uint16_t*>(output), elements);
      break;
    case 4:
      poison_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const std::uint32_t*>(expected),
                                                     static_cast<std::uint32_t*>(output), elements);
      break;
    default:
      poison_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const std::uint64_t*>(expected),
                                                     static_cast<std::uint64_t*>(output), elements);
      break;
  }
}

void enqueue_count_mismatches(const PatternSpec& spec, const void* output, const void* expected,
                              std::uint64_t elements, unsigned long long* counter,
                              cudaStream_t stream) {
  if (elements == 0) return;
  count_mismatches_kernel<<<blocks_for(elements), kThreads, 0, stream>>>(spec, output, expected,
                                                                         elements, counter);
}

void enqueue_corrupt(const PatternSpec& spec, void* output, std::uint64_t elements,
                     cudaStream_t stream) {
  if (elements == 0) return;
  corrupt_kernel<<<blocks_for(elements / kCorruptionStride + 1), kThreads, 0, stream>>>(
      spec, output, elements);
}

void enqueue_spin(double seconds, cudaStream_t stream) {
  if (!(seconds > 0)) return;
  spin_kernel<<<1, 1, 0, stream>>>(static_cast<std::uint64_t>(seconds * 1e9));
}

}  // namespace commcert
