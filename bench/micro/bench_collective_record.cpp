// One collective record is built and serialised per measured size and placement; rank 0 writes
// it while the other ranks wait at the next operation.

#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/collective_record.hpp"

namespace commcert {
namespace {

std::vector<RankIdentity> rank_map(int n) {
  std::vector<RankIdentity> ranks;
  for (int r = 0; r < n; ++r) {
    RankIdentity id;
    id.rank = r;
    id.process = r;
    id.node = "gpu-node-" + std::to_string(r / 8);
    id.hostname = id.node;
    id.local_rank = r % 8;
    id.pid = 4000 + r;
    id.device = "NVIDIA H100 80GB HBM3";
    ranks.push_back(id);
  }
  return ranks;
}

Measurement measurement(int nranks) {
  Measurement m;
  m.collective = CollectiveKind::kAllReduce;
  m.type = DataType::kFloat;
  m.op = ReduceOp::kSum;
  m.bytes = 64 << 20;
  m.count = m.bytes / 4;
  m.nranks = nranks;
  m.warmup_iterations = 1;
  for (int i = 0; i < 20; ++i)
    m.iteration_seconds.push_back(1e-3 + 1e-6 * i);
  for (int r = 0; r < nranks; ++r) {
    RankMeasurement rm;
    rm.rank = r;
    rm.mean_seconds = 1e-3 + 1e-6 * (r % 5);
    rm.checked = true;
    m.ranks.push_back(rm);
  }
  return m;
}

// state.range(0): ranks in the job.
void BM_CollectiveRecord(benchmark::State& state) {
  const int nranks = static_cast<int>(state.range(0));
  const auto ranks = rank_map(nranks);
  CollectiveRecordContext context;
  context.origin.run_id = "20261121T233900Z-sweep-3f9a1c";
  context.origin.host = ranks[0].node;
  context.backend = "nccl";
  context.ranks = &ranks;
  const Measurement m = measurement(nranks);
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string line = collective_record(context, m).dump();
    bytes += line.size();
    benchmark::DoNotOptimize(line.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}

BENCHMARK(BM_CollectiveRecord)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace commcert
