#include "support.hpp"

#include <atomic>
#include <fstream>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

#include <fmt/format.h>

#include "validate/inputs.hpp"
#include "validate/metrics.hpp"
#include "validate/record_reader.hpp"
#include "validate/rules/rule.hpp"
#include "validate/validator.hpp"

namespace commcert::fixtures {

namespace fs = std::filesystem;

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  path_ = fs::path(COMMCERT_BINARY_DIR) / "test-tmp" /
          fmt::format("validate-{}-{}", ::getpid(), counter++);
  fs::remove_all(path_);
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

fs::path TempDir::write(const std::string& name, const std::string& text) const {
  const fs::path file = path_ / name;
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::trunc) << text;
  return file;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

fs::path source_path(const std::string& relative) {
  return fs::path(COMMCERT_SOURCE_DIR) / relative;
}

Baseline shipped_baseline(const std::string& name) {
  return load_baseline(source_path("suites/baselines/" + name + ".yaml"));
}

Json record(const std::string& kind, const std::string& host, const std::string& status, int gpu,
            const std::string& run) {
  Json r = {{"schema", 1},
            {"run_id", run},
            {"kind", kind},
            {"status", status},
            {"time", "2026-11-21T10:00:00.000Z"},
            {"host", host},
            {"rank", 0},
            {"local_rank", 0}};
  r["gpu"] = gpu < 0 ? Json(nullptr)
                     : Json({{"index", gpu},
                             {"uuid", fmt::format("GPU-{}-{}", host, gpu)},
                             {"pci_bus_id", nullptr},
                             {"name", nullptr}});
  if (status != "ok") r["reason"] = fmt::format("{} said {}", kind, status);
  return r;
}

Json run_record(const std::vector<std::string>& rank_nodes, const std::string& run) {
  Json r = record("run", rank_nodes.front(), "ok", -1, run);
  r["command"] = "sweep";
  r["backend"] = "mpi";
  Json ranks = Json::array();
  for (std::size_t i = 0; i < rank_nodes.size(); ++i) {
    ranks.push_back({{"rank", i},
                     {"process", i},
                     {"node", rank_nodes[i]},
                     {"hostname", "vm"},
                     {"local_rank", 0},
                     {"pid", 100 + i},
                     {"device", "host"},
                     {"gpu", nullptr}});
  }
  r["ranks"] = std::move(ranks);
  return r;
}

Json collective(std::uint64_t bytes, double busbw_gb, const std::string& scope,
                const std::string& host, const std::vector<std::pair<int, std::string>>& wrong,
                const std::string& run, const std::string& name) {
  Json c = record("collective", host, wrong.empty() ? "ok" : "fail", -1, run);
  c["backend"] = "mpi";
  c["collective"] = name;
  c["dtype"] = "float";
  c["redop"] = "sum";
  c["root"] = nullptr;
  c["bytes"] = bytes;
  c["count"] = bytes / 4;
  c["nranks"] = 4;
  c["nodes"] = 4;
  c["scope"] = scope;
  // A node-scope record names the node it measured (process 0 writes every node's record).
  if (scope == "node") c["group_nodes"] = Json::array({host});
  c["in_place"] = false;
  c["cycle"] = 0;
  c["check"] = true;
  c["iterations"] = 20;
  c["busbw_bytes_per_s"] = busbw_gb * 1e9;
  c["rank_time"] = {{"min_s", 0.9}, {"median_s", 1.0}, {"max_s", 1.1}};
  c["straggler"] = {{"rank", 0}, {"host", host}, {"time_s", 0.98}, {"lead_s", 0.02}};
  c["wrong_elements"] = wrong.empty() ? 0 : 100;
  Json w = Json::array();
  for (const auto& [rank, node] : wrong) {
    w.push_back(
        {{"rank", rank}, {"host", node}, {"wrong_elements", 100}, {"wrong_iterations", 20}});
  }
  c["wrong_ranks"] = std::move(w);
  if (!wrong.empty()) c["reason"] = "wrong elements";
  return c;
}

Json p2p(const std::string& host, const std::string& path, int src, int dst, double figure,
         const std::string& method, const std::string& access, bool bidirectional,
         const std::string& run) {
  const int issuer = access == "read" || src < 0 ? dst : src;
  Json r = record("p2p", host, "ok", issuer, run);
  const bool chase = method == "pointer_chase";
  r["path"] = path;
  r["method"] = method;
  r["access"] = path == "gpu_gpu" ? Json(access) : Json(nullptr);
  r["bidirectional"] = bidirectional;
  r["src_gpu"] = src >= 0 ? Json(src) : Json(nullptr);
  r["dst_gpu"] = dst >= 0 ? Json(dst) : Json(nullptr);
  r["host_numa_node"] = path == "host_gpu" ? Json(0) : Json(nullptr);
  r["host_numa_local"] = path == "host_gpu" ? Json(true) : Json(nullptr);
  r["peer_access"] = path == "gpu_gpu" ? Json(true) : Json(nullptr);
  r["bytes"] = kP2pBytes;
  r["copies_per_sample"] = chase ? 1000 : 8;
  r["iterations"] = 1;
  r["warmup_iterations"] = 0;
  const double seconds = chase ? figure * 1e-6 * 1000 : 8.0 * kP2pBytes / (figure * 1e9);
  r["samples_s"] = {seconds};
  r["bytes_per_s"] = chase ? Json(nullptr) : Json(figure * 1e9);
  r["latency_s"] = chase ? Json(figure * 1e-6) : Json(nullptr);
  return r;
}

Json link(const std::string& from, const std::string& to, double figure, const std::string& test,
          std::uint64_t bytes, const std::string& run) {
  Json r = record("link", from, "ok", -1, run);
  r["transport"] = "mpi";
  r["memory"] = "host";
  r["test"] = test;
  r["round"] = 0;
  r["rail"] = 0;
  r["nodes"] = {from, to};
  r["ranks"] = {0, 1};
  r["devices"] = {nullptr, nullptr};
  r["bytes"] = bytes;
  r["window"] = 1;
  r["iterations"] = 1;
  r["warmup_iterations"] = 0;
  const bool latency = test == "write_lat";
  const double seconds = latency ? figure * 1e-6 : static_cast<double>(bytes) / (figure * 1e9);
  r["samples_s"] = {seconds};
  r["min_s"] = r["median_s"] = r["max_s"] = seconds;
  r["bytes_per_s"] = latency ? Json(nullptr) : Json(figure * 1e9);
  r["latency_s"] = latency ? Json(seconds) : Json(nullptr);
  r["counter_deltas"] = nullptr;
  return r;
}

Json gpu_health(const std::string& host, int gpu) {
  Json r = record("health", host, "ok", gpu);
  r["component"] = "gpu";
  r["ecc"] = {{"enabled", true},
              {"volatile", {{"corrected", 0}, {"uncorrected", 0}}},
              {"aggregate", {{"corrected", 0}, {"uncorrected", 0}}}};
  r["remapped_rows"] = {
      {"correctable", 0}, {"uncorrectable", 0}, {"pending", false}, {"failure", false}};
  r["retired_pages"] = nullptr;
  r["pcie"] = {{"gen_current", 5},
               {"gen_max", 5},
               {"width_current", 16},
               {"width_max", 16},
               {"replay_count", 0}};
  r["nvlink"] = Json::array();
  for (int l = 0; l < 18; ++l) {
    r["nvlink"].push_back({{"link", l},
                           {"active", true},
                           {"replay_errors", 0},
                           {"recovery_errors", 0},
                           {"crc_flit_errors", 0},
                           {"crc_data_errors", 0}});
  }
  r["temperature_c"] = 40.0;
  r["clock_event_reasons"] = Json::array({"gpu_idle"});
  r["xid_events"] = Json::array();
  return r;
}

Json ib_port(const std::string& host, const std::string& device, double rate_gbps) {
  Json r = record("health", host);
  r["component"] = "ib_port";
  r["device"] = device;
  r["port"] = 1;
  r["state"] = "ACTIVE";
  r["phys_state"] = "LinkUp";
  r["rate_gbps"] = rate_gbps;
  r["counters"] = Json::object();
  return r;
}

Json burn(const std::string& host, int gpu, double tflops) {
  Json r = record("burn", host, "ok", gpu);
  r["kernel"] = "gemm_bf16";
  r["tflops"] = tflops;
  r["miscompares"] = 0;
  r["peer_mismatch"] = false;
  r["peer_gpus"] = 7;
  r["telemetry"] = nullptr;
  return r;
}

Json membw(const std::string& host, int gpu, double copy_gb) {
  Json r = record("membw", host, "ok", gpu);
  r["bandwidth"] = {{"read_bytes_per_s", copy_gb * 1e9},
                    {"write_bytes_per_s", copy_gb * 1e9},
                    {"copy_bytes_per_s", copy_gb * 1e9},
                    {"memcpy_d2d_bytes_per_s", copy_gb * 1e9},
                    {"datasheet_peak_bytes_per_s", nullptr}};
  r["host_transfer"] = {
      {"h2d_bytes_per_s", 55e9}, {"d2h_bytes_per_s", 55e9}, {"numa_node", 0}, {"pinned", true}};
  r["integrity"] = {{"bytes_tested", 1 << 30},
                    {"patterns", {"random"}},
                    {"errors", 0},
                    {"first_errors", Json::array()}};
  return r;
}

Evidence evidence_of(const std::vector<Json>& records) {
  TempDir dir;
  std::string text;
  for (const auto& r : records)
    text += r.dump() + "\n";
  const auto file = dir.write("records.jsonl", text);
  Evidence evidence;
  RecordReader reader(evidence);
  reader.read_file(file);
  evidence.finish();
  return evidence;
}

Baseline baseline_of(const std::string& yaml_body) {
  return parse_baseline("schema: 1\nsku: test\n" + yaml_body, "test.yaml");
}

Baseline cluster_floor_baseline(const std::string& pairs_line) {
  return baseline_of(
      "required: [collective.allreduce]\n"
      "fleet: {enabled: false}\n"
      "checks:\n"
      "  collective.allreduce:\n"
      "    min_bytes: 1G\n" +
      pairs_line +
      "    busbw_gb_per_s:\n"
      "      cluster: {floor: 100}\n");
}

FleetVerdict certify(const Evidence& evidence, const Baseline& baseline) {
  return judge(evidence, baseline, nullptr);
}

FleetVerdict certify_fleet(const FleetSpec& spec, const Baseline& baseline) {
  TempDir dir;
  write_fleet(spec, dir.path());
  LoadedInputs inputs = load_inputs({dir.path().string()});
  return judge(inputs.evidence, baseline, nullptr, std::move(inputs.notes));
}

const NodeVerdict& node(const FleetVerdict& verdict, const std::string& name) {
  for (const auto& n : verdict.nodes) {
    if (n.node == name) return n;
  }
  throw std::out_of_range("no verdict for node " + name);
}

std::vector<std::string> nodes_in(const FleetVerdict& verdict, NodeState state) {
  std::vector<std::string> out;
  for (const auto& n : verdict.nodes) {
    if (n.state == state) out.push_back(n.node);
  }
  return out;
}

std::vector<std::string> codes(const NodeVerdict& node) {
  std::vector<std::string> out;
  for (const auto& r : node.reasons)
    out.push_back(r.code);
  return out;
}

bool has_code(const NodeVerdict& node, const std::string& code) {
  for (const auto& r : node.reasons) {
    if (r.code == code) return true;
  }
  return false;
}

const Reason& reason(const NodeVerdict& node, const std::string& code) {
  for (const auto& r : node.reasons) {
    if (r.code == code) return r;
  }
  throw std::out_of_range(node.node + " has no reason " + code);
}

std::vector<Finding> run_rule(const std::string& rule_id, const Evidence& evidence,
                              const Baseline& baseline) {
  const MetricTable metrics(evidence, baseline);
  std::vector<NodeId> nodes(evidence.nodes.size());
  std::iota(nodes.begin(), nodes.end(), NodeId{0});
  const PairLocalization pairs = localize_pairs(evidence, baseline);
  const JudgeContext context{evidence, baseline, metrics, baseline.required, nodes, pairs};
  std::vector<Finding> out;
  for (const auto& rule : make_rules()) {
    if (rule->id() == rule_id) {
      rule->judge(context, out);
      return out;
    }
  }
  throw std::invalid_argument("no rule " + rule_id);
}

}  // namespace commcert::fixtures
