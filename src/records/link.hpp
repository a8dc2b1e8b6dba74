#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "core/record.hpp"

namespace commcert {

// kind "link" (docs/records.md, docs/links.md): one link test between two nodes on one rail,
// filled by cli/links_command.cpp (links/link_measurement.cpp computes the figures) and matched
// field by field by the validator's reader (validate/detail/link_parser.cpp). Every field name is
// spelled once, as the `k...` constant beside its member.

// One end's port error counters: how much each grew while the test ran (after - before).
struct LinkCounterDeltas {
  static constexpr const char* kNode = "node";
  static constexpr const char* kDevice = "device";
  static constexpr const char* kPort = "port";
  static constexpr const char* kDeltas = "deltas";
  static constexpr const char* kSaturated = "saturated";
  std::string node;
  std::string device;
  int port = 0;
  std::map<std::string, std::int64_t> deltas;
  // Error counters at their maximum after the test: they cannot show growth, so their delta is a
  // lower bound (links/verbs_counters.hpp).
  std::vector<std::string> saturated;
};

// Per-iteration seconds and the figures derived from them (medians: one slow iteration does
// not make a link slow, a slow link makes most of them slow).
struct LinkMeasurement {
  static constexpr const char* kBytes = "bytes";
  static constexpr const char* kWindow = "window";
  static constexpr const char* kIterations = "iterations";
  static constexpr const char* kWarmup = "warmup_iterations";
  static constexpr const char* kSamples = "samples_s";
  static constexpr const char* kMinS = "min_s";
  static constexpr const char* kMedianS = "median_s";
  static constexpr const char* kMaxS = "max_s";
  static constexpr const char* kBytesPerS = "bytes_per_s";
  static constexpr const char* kLatencyS = "latency_s";
  std::uint64_t bytes = 0;  // per message
  int window = 1;           // messages in flight per iteration
  int iterations = 0;
  int warmup = 0;
  std::vector<double> samples_s;  // one per timed iteration (latency: half the round trip)
  double min_s = 0;
  double median_s = 0;
  double max_s = 0;
  std::optional<double> bytes_per_s;  // bandwidth tests: bytes moved per iteration / median
  std::optional<double> latency_s;    // latency test: the median one-way time
};

struct LinkRecord : RecordHead {
  static constexpr const char* kKind = "link";
  static constexpr const char* kTransport = "transport";
  static constexpr const char* kMemory = "memory";
  static constexpr const char* kTest = "test";
  static constexpr const char* kRound = "round";
  static constexpr const char* kRail = "rail";
  static constexpr const char* kNodes = "nodes";
  static constexpr const char* kRanks = "ranks";
  static constexpr const char* kDevices = "devices";
  static constexpr const char* kRegistrations = "registrations";
  static constexpr const char* kCounterDeltas = "counter_deltas";
  std::string transport;            // "mpi" or "verbs"
  std::string memory;               // "host" or "gpu"
  std::optional<std::string> test;  // nullopt: the record says why nothing was tested
  std::optional<int> round;
  std::optional<int> rail;
  std::vector<std::string> nodes;  // [initiator's node, peer's node]; one node for a lone skip
  std::vector<int> ranks;
  std::vector<std::optional<std::string>> devices;  // per end: "mlx5_0:1"; null for MPI
  // Per end, how the buffer was registered with the NIC: "host" (ibv_reg_mr on host memory),
  // "dmabuf" or "peer_memory" (GPU memory: GPUDirect RDMA); null for MPI.
  std::vector<std::optional<std::string>> registrations;
  std::optional<LinkMeasurement> measurement;
  std::optional<std::vector<LinkCounterDeltas>> counter_deltas;  // nullopt: not read (MPI)
};

// The record as written: the common fields, `reason`, then the link's fields in schema order.
[[nodiscard]] Json to_json(const LinkRecord& record);

}  // namespace commcert
