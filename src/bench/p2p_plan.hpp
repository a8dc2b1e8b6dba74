#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/record.hpp"
#include "records/p2p.hpp"

namespace commcert {

// What `commcert p2p` measures inside one node (docs/p2p.md): which memories, by which engine,
// and the order in which a sample's work is queued. Pure logic: the CUDA engine
// (bench/gpu/p2p_engine_cuda.cpp) carries the plan out as written.

enum class P2pPath { kGpuGpu, kHostGpu, kDeviceLocal };
enum class P2pMethod { kCopyEngine, kSmCopy, kPointerChase };
// Which end issues the work of a GPU-to-GPU copy: the source pushes (write) or the destination
// pulls (read).
enum class P2pAccess { kWrite, kRead };

[[nodiscard]] std::string_view name_of(P2pPath path);
[[nodiscard]] std::string_view name_of(P2pMethod method);
[[nodiscard]] std::string_view name_of(P2pAccess access);

// One end of a copy: a GPU (its position in this process's list) or pinned host memory on a NUMA
// node (nullopt: the machine does not say which).
struct P2pEndpoint {
  std::optional<int> gpu;
  std::optional<int> numa_node;

  [[nodiscard]] static P2pEndpoint device(int gpu) { return {gpu, std::nullopt}; }
  [[nodiscard]] static P2pEndpoint host(std::optional<int> numa_node) {
    return {std::nullopt, numa_node};
  }
  [[nodiscard]] bool is_host() const { return !gpu.has_value(); }
  [[nodiscard]] bool operator==(const P2pEndpoint&) const = default;
};

// One stream of a measurement: `src` -> `dst`, issued on the stream of GPU `device`.
struct P2pStream {
  int device = 0;
  P2pEndpoint src;
  P2pEndpoint dst;

  [[nodiscard]] bool operator==(const P2pStream&) const = default;
};

// One measurement. Every stream of it runs at once (bidirectional: two streams, the second the
// reverse of the first) and gives one record. A test with a skip reason runs nothing and gives
// one `skipped` record.
struct P2pTest {
  P2pPath path = P2pPath::kGpuGpu;
  std::optional<P2pMethod> method;
  std::optional<P2pAccess> access;
  bool bidirectional = false;
  std::vector<P2pStream> streams;
  std::optional<bool> host_numa_local;  // host_gpu: the host memory is on the GPU's own node
  std::optional<bool> peer_access;      // gpu_gpu: both GPUs can map each other's memory
  std::optional<std::string> skip_reason;
  std::optional<int> skipped_src;  // a skipped pair's GPUs (positions), for its record
  std::optional<int> skipped_dst;
};

// Which parts run (the --methods and --paths flags).
struct P2pSelection {
  bool copy_engine = true;
  bool sm_copy = true;
  bool pointer_chase = true;
  bool gpu_gpu = true;
  bool host_gpu = true;
  bool device_local = true;
};

// Where host memory goes for each GPU: its own NUMA node and one other (the first online node
// that is not its own). A GPU whose node is unknown gets one test from unbound host memory.
struct HostNuma {
  std::vector<std::optional<int>> gpu_node;  // per GPU position
  std::vector<int> online_nodes;
};

// Every test for `gpu_count` GPUs. `peer_access[a][b]`: GPU a can map GPU b's memory (both ways
// are needed for a pair to be measured; a pair without is one skipped test that says so). One GPU
// gives the host and device-local tests and one `skipped: one GPU` pair test.
[[nodiscard]] std::vector<P2pTest> plan_p2p_tests(int gpu_count,
                                                  const std::vector<std::vector<bool>>& peer_access,
                                                  const HostNuma& numa,
                                                  const P2pSelection& selection);

// The order one sample's work is queued in, nvbandwidth's method: a spin kernel holds every
// stream first, then each stream's start event, the copies (taking turns across streams), the stop
// events, and only then the host releases the spin kernels, so no launch gap is timed.
struct QueueStep {
  enum class Kind { kSpin, kStart, kCopy, kStop, kRelease };
  Kind kind = Kind::kSpin;
  int stream = 0;  // -1 for the release

  [[nodiscard]] bool operator==(const QueueStep&) const = default;
};
[[nodiscard]] std::vector<QueueStep> plan_sample_queue(int streams, int copies_per_sample);

// A random single cycle through `slots` slots (Sattolo's shuffle): next[i] is the slot after
// slot i, and following it from slot 0 visits every slot before returning. What the pointer
// chase walks, so no prefetcher can guess the next load.
[[nodiscard]] std::vector<std::uint32_t> pointer_chase_cycle(std::uint32_t slots,
                                                             std::uint64_t seed);

// The online NUMA nodes sysfs lists (<sysfs>/devices/system/node/online); empty when unknown.
[[nodiscard]] std::vector<int> online_numa_nodes(const std::filesystem::path& sysfs_root);

// The measurement a stream's per-sample seconds give: copies, bytes * copies per second of the
// median sample; pointer chase, the median sample's seconds per load. Throws
// std::invalid_argument for no samples.
[[nodiscard]] P2pMeasurement p2p_measurement(P2pMethod method, std::uint64_t bytes,
                                             int copies_per_sample, int warmup,
                                             std::vector<double> samples_s);

// What one stream of a test ran, as its record says it: `gpus` by position, with their node-wide
// indices; the record's `gpu` is the one whose stream ran the work (a skipped pair: its source).
struct P2pStreamResult {
  RecordStatus status = RecordStatus::kOk;
  std::string reason;
  std::optional<P2pMeasurement> measurement;
};
[[nodiscard]] P2pRecord p2p_record(RecordOrigin origin, const P2pTest& test, std::size_t stream,
                                   const std::vector<GpuIdentity>& gpus, P2pStreamResult result);

}  // namespace commcert
