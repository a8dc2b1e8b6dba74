// Host pattern generation and checking (kernels/pattern_host.cpp): the MPI backend runs these
// around every measured size, so their throughput bounds how much of a sweep is not measurement.

#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>

#include "kernels/pattern_host.hpp"

namespace commcert {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

PatternSpec spec(CollectiveKind kind, DataType type, ReduceOp op = ReduceOp::kSum) {
  PatternSpec s;
  s.collective = kind;
  s.type = type;
  s.op = op;
  s.nranks = 8;
  s.root = 0;
  s.seed = 0x636f6d6d63657274ULL;
  return s;
}

// state.range(0): buffer size in MiB.
std::uint64_t elements_of(const benchmark::State& state, DataType type) {
  return static_cast<std::uint64_t>(state.range(0)) * kMiB /
         static_cast<std::uint64_t>(element_size(type));
}

void report(benchmark::State& state) {
  const auto bytes = static_cast<std::int64_t>(state.range(0)) * static_cast<std::int64_t>(kMiB);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * bytes);
}

template <DataType kType, CollectiveKind kKind>
void BM_FillInputHost(benchmark::State& state) {
  const PatternSpec s = spec(kKind, kType);
  const std::uint64_t n = elements_of(state, kType);
  std::vector<unsigned char> buffer(n * static_cast<std::uint64_t>(element_size(kType)));
  for (auto _ : state) {
    fill_input_host(s, 3, buffer.data(), n);
    benchmark::DoNotOptimize(buffer.data());
    benchmark::ClobberMemory();
  }
  report(state);
}

template <DataType kType, CollectiveKind kKind>
void BM_FillExpectedHost(benchmark::State& state) {
  PatternSpec s = spec(kKind, kType);
  const std::uint64_t n = elements_of(state, kType);
  s.count = kKind == CollectiveKind::kAllGather ? n / static_cast<std::uint64_t>(s.nranks) : n;
  std::vector<unsigned char> buffer(n * static_cast<std::uint64_t>(element_size(kType)));
  for (auto _ : state) {
    fill_expected_host(s, 3, buffer.data(), n);
    benchmark::DoNotOptimize(buffer.data());
    benchmark::ClobberMemory();
  }
  report(state);
}

// kOp sum: the bit-exact path (memcmp); avg on floats: the 2-ulp element-by-element path.
template <DataType kType, ReduceOp kOp>
void BM_CountMismatchesHost(benchmark::State& state) {
  PatternSpec s = spec(CollectiveKind::kAllReduce, kType, kOp);
  const std::uint64_t n = elements_of(state, kType);
  s.count = n;
  std::vector<unsigned char> expected(n * static_cast<std::uint64_t>(element_size(kType)));
  fill_expected_host(s, 0, expected.data(), n);
  const std::vector<unsigned char> output = expected;  // a correct output: the common case
  for (auto _ : state) {
    benchmark::DoNotOptimize(count_mismatches_host(s, output.data(), expected.data(), n));
  }
  report(state);
}

#define COMMCERT_SIZES Arg(1)->Arg(8)->Arg(64)->Unit(benchmark::kMillisecond)

BENCHMARK(BM_FillInputHost<DataType::kFloat, CollectiveKind::kAllReduce>)->COMMCERT_SIZES;
BENCHMARK(BM_FillInputHost<DataType::kHalf, CollectiveKind::kAllReduce>)->COMMCERT_SIZES;
BENCHMARK(BM_FillInputHost<DataType::kFloat, CollectiveKind::kAllGather>)->COMMCERT_SIZES;
BENCHMARK(BM_FillInputHost<DataType::kHalf, CollectiveKind::kAllGather>)->COMMCERT_SIZES;
BENCHMARK(BM_FillExpectedHost<DataType::kFloat, CollectiveKind::kAllReduce>)->COMMCERT_SIZES;
BENCHMARK(BM_FillExpectedHost<DataType::kHalf, CollectiveKind::kAllReduce>)->COMMCERT_SIZES;
BENCHMARK(BM_FillExpectedHost<DataType::kFloat, CollectiveKind::kAllGather>)->COMMCERT_SIZES;
BENCHMARK(BM_FillExpectedHost<DataType::kHalf, CollectiveKind::kAllGather>)->COMMCERT_SIZES;
BENCHMARK(BM_CountMismatchesHost<DataType::kFloat, ReduceOp::kSum>)->COMMCERT_SIZES;
BENCHMARK(BM_CountMismatchesHost<DataType::kHalf, ReduceOp::kSum>)->COMMCERT_SIZES;
BENCHMARK(BM_CountMismatchesHost<DataType::kFloat, ReduceOp::kAvg>)->COMMCERT_SIZES;
BENCHMARK(BM_CountMismatchesHost<DataType::kHalf, ReduceOp::kAvg>)->COMMCERT_SIZES;

}  // namespace
}  // namespace commcert
