#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "core/record.hpp"

namespace commcert {

// kind "p2p" (docs/records.md, docs/p2p.md): one copy or latency measurement between two
// memories of one node (GPU and GPU, host and GPU, or a GPU and itself), filled by
// cli/p2p_command.cpp (bench/p2p_plan.cpp computes the figures) and matched field by field by the
// validator's reader (validate/detail/p2p_parser.cpp). Every field name is spelled once, as the
// `k...` constant beside its member. Data flows from `src` to `dst`.

// Per-sample seconds and the figures derived from them (the median: one slow sample does not
// make a link slow, a slow link makes most of them slow).
struct P2pMeasurement {
  static constexpr const char* kBytes = "bytes";
  static constexpr const char* kCopiesPerSample = "copies_per_sample";
  static constexpr const char* kIterations = "iterations";
  static constexpr const char* kWarmup = "warmup_iterations";
  static constexpr const char* kSamples = "samples_s";
  static constexpr const char* kBytesPerS = "bytes_per_s";
  static constexpr const char* kLatencyS = "latency_s";
  std::uint64_t bytes = 0;    // per copy (pointer chase: the chased buffer)
  int copies_per_sample = 1;  // pointer chase: loads chased per sample
  int iterations = 0;
  int warmup = 0;
  std::vector<double> samples_s;      // one per timed sample
  std::optional<double> bytes_per_s;  // copies: bytes copied src->dst per second (median sample)
  std::optional<double> latency_s;    // pointer chase: the median time of one dependent load
};

// `origin.gpu` is the GPU whose copy engine or SMs ran the work.
struct P2pRecord : RecordHead {
  static constexpr const char* kKind = "p2p";
  static constexpr const char* kPath = "path";
  static constexpr const char* kMethod = "method";
  static constexpr const char* kAccess = "access";
  static constexpr const char* kBidirectional = "bidirectional";
  static constexpr const char* kSrcGpu = "src_gpu";
  static constexpr const char* kDstGpu = "dst_gpu";
  static constexpr const char* kHostNumaNode = "host_numa_node";
  static constexpr const char* kHostNumaLocal = "host_numa_local";
  static constexpr const char* kPeerAccess = "peer_access";
  std::optional<std::string> path;    // gpu_gpu | host_gpu | device_local; nullopt: nothing ran
  std::optional<std::string> method;  // copy_engine | sm_copy | pointer_chase
  // gpu_gpu: write (the source GPU pushes) or read (the destination GPU pulls).
  std::optional<std::string> access;
  bool bidirectional = false;  // dst->src ran at the same time; bytes_per_s is src->dst's share
  std::optional<int> src_gpu;  // node-wide GPU index; nullopt: host memory
  std::optional<int> dst_gpu;
  std::optional<int> host_numa_node;    // host_gpu: where the pinned buffer's pages are
  std::optional<bool> host_numa_local;  // host_gpu: that node is the GPU's own
  std::optional<bool> peer_access;      // gpu_gpu: cudaDeviceCanAccessPeer both ways
  std::optional<P2pMeasurement> measurement;
};

// The record as written: the common fields, `reason`, then the p2p fields in schema order.
[[nodiscard]] Json to_json(const P2pRecord& record);

}  // namespace commcert
