#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace commcert::fixtures {

// A fault the generator plants in an otherwise healthy fleet. `node` is a node index; `gpu`,
// `port` and `amount` (a fraction, a count or an XID, per kind) where the kind needs them.
enum class FaultKind {
  kWrongData,          // the node's ranks return wrong elements (node and cluster collectives)
  kCorruptEverywhere,  // every rank of the cluster collective returns wrong data
  kSlowCollective,     // node-scope busbw lower by `amount`
  kSlowCluster,        // cluster-scope busbw lower by `amount` (nobody to blame)
  kStraggler,          // the node's rank leads by `amount` of the median rank time (cluster)
  kHang,               // the node's rank never arrives: cluster run ends in a timeout
  kStuck,              // the cluster run times out with every rank inside the operation
  kBurnMiscompare,
  kBurnPeerMismatch,
  kBurnSlow,     // TFLOP/s lower by `amount`
  kBurnSkipped,  // the node's burn records say skipped (no driver)
  kBurnError,    // the GPU's burn record says error
  kNoBurn,       // no burn records for the node
  kMembwErrors,
  kMembwSlow,  // copy bandwidth lower by `amount`
  kEcc,        // `amount` volatile uncorrectable ECC errors
  kRemapPending,
  kRemapFailure,
  kPcieDowngrade,  // the GPU trained at x8
  kNvlinkDown,     // link `port` inactive
  kNvlinkErrors,   // replay errors on link `port`
  kXid,            // XID `amount` on the GPU
  kThrottle,       // hw_slowdown clock event (a warning only)
  kIbDown,         // IB port `port` is DOWN
  kIbRate,         // IB port `port` at `amount` Gb/s
  kIbFlaps,        // IB port `port` link_downed = `amount`
  kGpuMissing,     // the node shows one GPU fewer, and the last GPU has no records
  kTruncated,      // the node's last health record is cut mid-line (a crash)
};

struct Fault {
  FaultKind kind;
  int node = 0;
  int gpu = 0;
  int port = 0;
  double amount = 0;
};

struct FleetSpec {
  int nodes = 8;
  int gpus_per_node = 8;
  int ib_ports = 8;
  std::string prefix = "node";
  double noise_pct = 2.0;  // every figure varies uniformly within +-noise_pct
  std::uint64_t seed = 1;
  std::vector<std::string> collectives = {"allreduce"};
  std::vector<std::uint64_t> sizes = {std::uint64_t{1} << 30, std::uint64_t{2} << 30};
  bool node_scope = true;
  bool cluster_scope = true;
  bool health = true;
  bool burn = true;
  bool membw = true;
  std::vector<Fault> faults;
};

// Nominal healthy figures: the h100-sxm-8gpu-ndr400 baseline's expected values.
struct Nominal {
  static constexpr double kBusbwNode = 480e9;     // bytes/s
  static constexpr double kBusbwCluster = 370e9;  // bytes/s
  static constexpr double kTflopsBf16 = 730;
  static constexpr double kCopy = 2540e9;  // bytes/s
  static constexpr double kH2d = 55e9;     // bytes/s
  static constexpr double kTemperature = 40;
  static constexpr double kIbRate = 400;
};

// Writes <root>/<run>/records.jsonl and meta.json for the runs the spec asks for: health,
// burn, membw, collectives-node, collectives-cluster. Returns the run directories.
std::vector<std::filesystem::path> write_fleet(const FleetSpec& spec,
                                               const std::filesystem::path& root);

[[nodiscard]] std::string node_name(const FleetSpec& spec, int node);

}  // namespace commcert::fixtures
