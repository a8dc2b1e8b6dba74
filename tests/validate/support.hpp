#pragma once

// Helpers for the validator's tests: temporary result trees, records written as JSON lines,
// and certification of what was written.

#include <filesystem>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "fleet_generator.hpp"
#include "validate/baseline.hpp"
#include "validate/evidence.hpp"
#include "validate/finding.hpp"
#include "validate/verdict.hpp"

namespace commcert::fixtures {

// A fresh directory under the build tree, removed at the end of the test.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  // Writes `text` to path()/name and returns the full path.
  std::filesystem::path write(const std::string& name, const std::string& text) const;

 private:
  std::filesystem::path path_;
};

[[nodiscard]] std::filesystem::path source_path(const std::string& relative);
// The whole file as text; empty when it cannot be read.
[[nodiscard]] std::string read_text(const std::filesystem::path& path);
[[nodiscard]] Baseline shipped_baseline(const std::string& name);  // suites/baselines/<name>.yaml

// Record builders with the common fields filled (docs/records.md).
[[nodiscard]] Json record(const std::string& kind, const std::string& host,
                          const std::string& status = "ok", int gpu = -1,
                          const std::string& run = "run1");
[[nodiscard]] Json run_record(const std::vector<std::string>& rank_nodes,
                              const std::string& run = "run1");
// A measured allreduce over the run's ranks: busbw in GB/s; wrong ranks as (rank, host).
[[nodiscard]] Json collective(std::uint64_t bytes, double busbw_gb,
                              const std::string& scope = "cluster", const std::string& host = "n0",
                              const std::vector<std::pair<int, std::string>>& wrong = {},
                              const std::string& run = "run1",
                              const std::string& name = "allreduce");
// A measured p2p record on node `host`: `figure` is GB/s for copies, µs for the pointer chase.
// host_gpu: src or dst -1 is the host.
inline constexpr std::uint64_t kP2pBytes = std::uint64_t{256} << 20;
[[nodiscard]] Json p2p(const std::string& host, const std::string& path, int src, int dst,
                       double figure, const std::string& method = "copy_engine",
                       const std::string& access = "write", bool bidirectional = false,
                       const std::string& run = "run1");
// A measured link record between two nodes: `figure` is GB/s for bandwidth tests, µs for
// write_lat.
[[nodiscard]] Json link(const std::string& from, const std::string& to, double figure,
                        const std::string& test = "write_bw",
                        std::uint64_t bytes = std::uint64_t{4} << 20,
                        const std::string& run = "run1");
[[nodiscard]] Json gpu_health(const std::string& host, int gpu);
// A healthy RDMA port (port 1, ACTIVE, LinkUp, no counters) of `device` on `host`.
[[nodiscard]] Json ib_port(const std::string& host, const std::string& device,
                           double rate_gbps = 400);
[[nodiscard]] Json burn(const std::string& host, int gpu, double tflops);
[[nodiscard]] Json membw(const std::string& host, int gpu, double copy_gb);

// Evidence from JSON lines, read through the real reader (records.jsonl in a temp dir).
[[nodiscard]] Evidence evidence_of(const std::vector<Json>& records);

// A minimal baseline: the YAML text after `schema`/`sku` lines.
[[nodiscard]] Baseline baseline_of(const std::string& yaml_body);
// allreduce required and judged from 1 GiB against a cluster floor of 100 GB/s, fleet rules off;
// `pairs_line` (e.g. "    pairs: {floor_gb_per_s: 80}\n") is added to its collective bounds.
[[nodiscard]] Baseline cluster_floor_baseline(const std::string& pairs_line = "");

// Runs every rule and folds, as `commcert certify` does.
[[nodiscard]] FleetVerdict certify(const Evidence& evidence, const Baseline& baseline);
// Writes a synthetic fleet and certifies it against a shipped baseline.
[[nodiscard]] FleetVerdict certify_fleet(const FleetSpec& spec, const Baseline& baseline);

[[nodiscard]] const NodeVerdict& node(const FleetVerdict& verdict, const std::string& name);
[[nodiscard]] std::vector<std::string> nodes_in(const FleetVerdict& verdict, NodeState state);
// Codes of a node's reasons, in order.
[[nodiscard]] std::vector<std::string> codes(const NodeVerdict& node);
[[nodiscard]] bool has_code(const NodeVerdict& node, const std::string& code);
[[nodiscard]] const Reason& reason(const NodeVerdict& node, const std::string& code);

// Runs one rule over evidence and returns its findings.
[[nodiscard]] std::vector<Finding> run_rule(const std::string& rule_id, const Evidence& evidence,
                                            const Baseline& baseline);

}  // namespace commcert::fixtures
