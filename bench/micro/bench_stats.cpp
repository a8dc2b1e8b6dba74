// summarize() runs once per measured size over its per-iteration times: 20 samples by default,
// up to 10 000 with adaptive iterations (--target-ci).

#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "core/stats.hpp"

namespace commcert {
namespace {

void BM_Summarize(benchmark::State& state) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> latency(-9.0, 0.2);  // ~120 us, a realistic spread
  std::vector<double> samples(static_cast<std::size_t>(state.range(0)));
  for (double& sample : samples)
    sample = latency(rng);
  for (auto _ : state)
    benchmark::DoNotOptimize(summarize(samples));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

BENCHMARK(BM_Summarize)->Arg(20)->Arg(10000);

}  // namespace
}  // namespace commcert
