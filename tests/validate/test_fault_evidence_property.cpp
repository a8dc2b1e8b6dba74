// A property test of docs/validator.md, "Evidence of a fault", over the whole space: passing
// fleets (the golden fleets' generator and small generated record sets), and for every record
// kind x every non-ok status x every way a record names a node, one such record about one node,
// placed first, last, in a second file and in a second run of the same directory. Every node
// the record names is then not certified and has a reason citing the record's file and line; no
// other node's verdict changes. A skipped record is no fault: it changes no verdict.
//
// Whom a record names is written out below from the JSON, independently of the reader: its
// host, its group_nodes, a link's ends, ranks through its run's rank map, a run record's rank
// map; a measured collective failure names its communicator (not its writer, who writes every
// group's record) and only the nodes of its wrong ranks when it names some but not all; a
// collective timeout names the nodes that never arrived when peers could say so, else every
// node of its run and of its rank states.

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support.hpp"
#include "validate/inputs.hpp"
#include "validate/validator.hpp"

namespace commcert {
namespace {

namespace fs = std::filesystem;

// A passing fleet on disk: the run directory a record of a fault goes into (it has a rank
// map), that run's id, its nodes and rank map, and the baseline every node passes.
struct Fleet {
  std::string name;
  fixtures::TempDir dir;
  std::string run_dir;
  std::string run_id;
  std::vector<std::string> nodes;
  std::vector<std::string> rank_nodes;  // global rank -> node
  Baseline baseline;
};

// The golden fleets' generator: three H100 nodes against the shipped baseline, with two GPUs
// and two ports each (and the baseline's node shape to match) to keep the cases quick.
std::unique_ptr<Fleet> golden_fleet() {
  auto fleet = std::make_unique<Fleet>();
  fleet->name = "golden";
  fixtures::FleetSpec spec;
  spec.nodes = 3;
  spec.gpus_per_node = 2;
  spec.ib_ports = 2;
  spec.seed = 7;
  fixtures::write_fleet(spec, fleet->dir.path());
  fleet->run_dir = "collectives-cluster";
  fleet->run_id = "collectives-cluster";
  for (int n = 0; n < spec.nodes; ++n) {
    fleet->nodes.push_back(fixtures::node_name(spec, n));
    for (int g = 0; g < spec.gpus_per_node; ++g)
      fleet->rank_nodes.push_back(fixtures::node_name(spec, n));
  }
  std::string yaml =
      fixtures::read_text(fixtures::source_path("suites/baselines/h100-sxm-8gpu-ndr400.yaml"));
  for (const std::string key : {"gpus: 8", "ib_ports: 8"}) {
    const auto at = yaml.find(key);
    if (at != std::string::npos) yaml.replace(at, key.size(), key.substr(0, key.size() - 1) + "2");
  }
  fleet->baseline = parse_baseline(yaml, "h100-two-gpus.yaml");
  EXPECT_EQ(fleet->baseline.gpus_per_node, 2);
  return fleet;
}

// A generated record set: 2-4 nodes, one rank each, node health and checked allreduce records
// per node and across them, in one run directory whose meta.json says ok.
std::unique_ptr<Fleet> generated_fleet(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto fleet = std::make_unique<Fleet>();
  fleet->name = fmt::format("generated-{}", seed);
  const int count = std::uniform_int_distribution<int>(2, 4)(rng);
  for (int i = 0; i < count; ++i)
    fleet->nodes.push_back(fmt::format("g{}-{}", seed, i));
  fleet->rank_nodes = fleet->nodes;
  fleet->run_dir = "sweep";
  fleet->run_id = fmt::format("sweep-{}", seed);
  std::string text = fixtures::run_record(fleet->nodes, fleet->run_id).dump() + "\n";
  for (const auto& n : fleet->nodes) {
    Json health = fixtures::record("health", n, "ok", -1, fleet->run_id);
    health["component"] = "node";
    text += health.dump() + "\n";
    Json node = fixtures::collective(1 << 20, 1.0, "node", n, {}, fleet->run_id);
    node["nranks"] = 1;
    text += node.dump() + "\n";
  }
  Json cluster =
      fixtures::collective(1 << 20, 1.0, "cluster", fleet->nodes.front(), {}, fleet->run_id);
  cluster["group_nodes"] = fleet->nodes;
  cluster["nranks"] = count;
  text += cluster.dump() + "\n";
  fleet->dir.write("sweep/records.jsonl", text);
  fleet->dir.write("sweep/meta.json",
                   Json({{"schema", 1}, {"run_id", fleet->run_id}, {"status", "ok"}}).dump());
  fleet->baseline = fixtures::baseline_of("required: [health.node, collective.allreduce]\n");
  return fleet;
}

FleetVerdict judge_dir(const fs::path& dir, const Baseline& baseline) {
  LoadedInputs inputs = load_inputs({dir.string()});
  return judge(inputs.evidence, baseline, nullptr, std::move(inputs.notes));
}

enum class Way { kHost, kRank, kGroup, kEnds, kCulprit, kRankMap };
enum class Placement { kFirst, kLast, kSecondFile, kSecondRun };

std::string to_string(Way way) {
  switch (way) {
    case Way::kHost:
      return "host";
    case Way::kRank:
      return "rank";
    case Way::kGroup:
      return "group_nodes";
    case Way::kEnds:
      return "link ends";
    case Way::kCulprit:
      return "culprit";
    case Way::kRankMap:
      return "rank map";
  }
  return "?";
}

std::string to_string(Placement placement) {
  switch (placement) {
    case Placement::kFirst:
      return "first";
    case Placement::kLast:
      return "last";
    case Placement::kSecondFile:
      return "second file";
    case Placement::kSecondRun:
      return "second run";
  }
  return "?";
}

// A kind of record: its `kind` and, for health, its `component` ("-" for none).
struct Kind {
  std::string kind;
  std::string component;
  [[nodiscard]] std::string label() const {
    return component.empty() ? kind : kind + "/" + component;
  }
  [[nodiscard]] bool per_gpu() const {
    return kind == "burn" || kind == "membw" || kind == "p2p" || component == "gpu";
  }
};

const std::vector<Kind>& kinds() {
  static const std::vector<Kind> k = {
      {"collective", ""},    {"burn", ""},       {"membw", ""},      {"health", "gpu"},
      {"health", "ib_port"}, {"health", "node"}, {"health", "-"},    {"p2p", ""},
      {"link", ""},          {"run", ""},        {"nvbandwidth", ""}};  // a kind nobody judges
  return k;
}

const std::vector<std::string>& statuses() {
  static const std::vector<std::string> s = {"fail", "error", "timeout", "skipped"};
  return s;
}

// The ways a record of this kind and status can name a node (a well-formed record only).
std::vector<Way> ways(const Kind& k, const std::string& status) {
  if (k.kind == "collective") {
    if (status == "error") return {Way::kHost, Way::kRank, Way::kGroup};
    if (status == "fail") return {Way::kGroup, Way::kCulprit};
    if (status == "timeout") return {Way::kHost, Way::kCulprit};
    return {Way::kHost, Way::kGroup};
  }
  if (k.kind == "link") {
    if (status == "fail") return {Way::kEnds};  // a measurement names two nodes
    return {Way::kHost, Way::kRank, Way::kEnds};
  }
  if (k.kind == "run") return {Way::kRankMap};
  if (k.component == "-" && status == "skipped") return {};  // a component is required
  return {Way::kHost, Way::kRank};
}

// One record of a fault (or a skipped one) about `target`; `writer` is another node.
struct Case {
  Kind kind;
  std::string status;
  Way way;
  Placement placement;
  std::string target;
  std::string writer;
  std::string run_id;
};

class Builder {
 public:
  explicit Builder(const Fleet& fleet) : fleet_(fleet) {}

  [[nodiscard]] int rank_of(const std::string& node) const {
    const auto it = std::find(fleet_.rank_nodes.begin(), fleet_.rank_nodes.end(), node);
    return static_cast<int>(it - fleet_.rank_nodes.begin());
  }

  [[nodiscard]] Json make(const Case& c) const {
    const bool by_rank = c.way == Way::kRank;
    const bool host_is_target = c.way == Way::kHost || c.way == Way::kRankMap;
    const std::string host = host_is_target ? c.target : c.writer;
    const std::string kind = c.kind.kind == "nvbandwidth" ? "nvbandwidth" : c.kind.kind;
    Json r = fixtures::record(kind, host, c.status, c.kind.per_gpu() ? 0 : -1, c.run_id);
    r["rank"] = rank_of(by_rank ? c.target : host);
    r["reason"] = fmt::format("{} {} by {}", c.kind.label(), c.status, to_string(c.way));
    if (c.kind.kind == "health" && c.kind.component != "-") r["component"] = c.kind.component;
    if (c.kind.component == "ib_port") {
      r["device"] = "mlx5_0";
      r["port"] = 1;
    }
    if (c.kind.kind == "collective") collective(c, r);
    if (c.kind.kind == "link") link(c, r);
    if (c.kind.kind == "p2p" && c.status == "fail") {
      Json measured =
          fixtures::p2p(host, "gpu_gpu", 0, 1, 400, "copy_engine", "write", false, c.run_id);
      for (const auto& [key, value] : measured.items()) {
        if (!r.contains(key)) r[key] = value;
      }
    }
    if (c.kind.kind == "run") {
      const Json map = c.placement == Placement::kSecondRun
                           ? fixtures::run_record({c.target}, c.run_id)
                           : fixtures::run_record(fleet_.rank_nodes, c.run_id);
      r["command"] = "sweep";
      r["backend"] = "mpi";
      r["ranks"] = map["ranks"];
      r["rank"] = 0;
    }
    return r;
  }

  // Whom the record names, from its JSON alone (the header of this file).
  [[nodiscard]] std::set<std::string> named(const Json& r,
                                            const std::vector<std::string>& rank_map) const {
    std::set<std::string> out;
    const std::string status = r["status"];
    if (status == "skipped") return out;
    const std::string kind = r["kind"];
    const auto by_rank = [&](const Json& rank) {
      if (rank.is_number_integer() && rank.get<std::size_t>() < rank_map.size())
        out.insert(rank_map[rank.get<std::size_t>()]);
    };
    const bool measured_collective = kind == "collective" && status == "fail";
    if (measured_collective) {
      std::set<std::string> members;
      for (const auto& n : r["group_nodes"])
        members.insert(n);
      std::set<std::string> wrong;
      for (const auto& w : r["wrong_ranks"])
        wrong.insert(w["host"].get<std::string>());
      const bool everywhere = members.size() > 1 && std::includes(wrong.begin(), wrong.end(),
                                                                  members.begin(), members.end());
      return wrong.empty() || everywhere ? members : wrong;
    }
    if (kind == "collective" && status == "timeout") {
      if (r.value("attributed", false) && !r["not_arrived"].empty()) {
        for (const auto& n : r["not_arrived"])
          out.insert(n["host"].get<std::string>());
        return out;
      }
      out.insert(r["host"].get<std::string>());
      for (const auto& s : r["rank_states"])
        out.insert(s["host"].get<std::string>());
      out.insert(rank_map.begin(), rank_map.end());
      return out;
    }
    out.insert(r["host"].get<std::string>());
    by_rank(r["rank"]);
    if (r.contains("group_nodes")) {
      for (const auto& n : r["group_nodes"])
        out.insert(n.get<std::string>());
    }
    if (kind == "link") {
      for (const auto& n : r.value("nodes", Json::array()))
        out.insert(n.get<std::string>());
      for (const auto& rank : r.value("ranks", Json::array()))
        by_rank(rank);
    }
    if (kind == "run") {
      for (const auto& entry : r["ranks"])
        out.insert(entry["node"].get<std::string>());
    }
    return out;
  }

 private:
  void collective(const Case& c, Json& r) const {
    r["backend"] = "mpi";
    if (c.status == "fail") {
      // A measurement of 1 MiB: below every bound's sizes, judged for its outputs only.
      const bool culprit = c.way == Way::kCulprit;
      Json m = fixtures::collective(
          1 << 20, 1.0, culprit ? "cluster" : "node", c.target,
          culprit ? std::vector<std::pair<int, std::string>>{{rank_of(c.target), c.target}}
                  : std::vector<std::pair<int, std::string>>{},
          c.run_id);
      m["host"] = c.writer;
      m["status"] = "fail";
      m["reason"] = r["reason"];
      m["group_nodes"] = culprit ? Json(fleet_.nodes) : Json::array({c.target});
      if (!culprit) m["wrong_elements"] = 0;  // a failure that names no rank
      r = m;
      return;
    }
    if (c.status == "timeout") {
      r["scope"] = "cluster";
      r["operation"] = "allreduce float sum 1 GiB out-of-place";
      r["timeout_s"] = 60;
      r["nranks"] = static_cast<int>(fleet_.rank_nodes.size());
      const bool culprit = c.way == Way::kCulprit;
      r["attributed"] = culprit;
      r["not_arrived"] = culprit ? Json::array({{{"rank", rank_of(c.target)}, {"host", c.target}}})
                                 : Json::array();
      r["rank_states"] =
          Json::array({{{"rank", rank_of(c.target)}, {"host", c.target}, {"responded", true}}});
      return;
    }
    r["collective"] = "allreduce";
    if (c.status == "skipped") {
      r["scope"] = "node";
      r["group_nodes"] = Json::array({c.target});
    }
    if (c.way == Way::kGroup) r["group_nodes"] = Json::array({c.target});
  }

  void link(const Case& c, Json& r) const {
    if (c.status == "fail") {
      Json m =
          fixtures::link(c.writer, c.target, 20.0, "write_bw", std::uint64_t{4} << 20, c.run_id);
      m["status"] = "fail";
      m["reason"] = r["reason"];
      m["ranks"] = {rank_of(c.writer), rank_of(c.target)};
      r = m;
      return;
    }
    r["transport"] = "mpi";
    r["memory"] = "host";
    r["test"] = nullptr;
    r["rail"] = 0;
    if (c.way == Way::kEnds) {
      r["nodes"] = {c.writer, c.target};
      r["ranks"] = {rank_of(c.writer), rank_of(c.target)};
    } else if (c.way == Way::kRank) {
      r["ranks"] = {rank_of(c.writer), rank_of(c.target)};
    }
  }

  const Fleet& fleet_;
};

std::string dump_lines(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& l : lines)
    text += l + "\n";
  return text;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
    start = end == std::string::npos ? text.size() : end + 1;
  }
  return lines;
}

struct Tally {
  std::size_t cases = 0;
  std::set<std::string> kinds_and_statuses;
};

// Adds one record to the fleet as the case says, judges, checks the property, restores.
void check_case(const Fleet& fleet, const FleetVerdict& before, const Case& c, Tally& tally) {
  const Builder builder(fleet);
  const fs::path main = fleet.dir.path() / fleet.run_dir / "records.jsonl";
  const std::string original = fixtures::read_text(main);
  std::vector<std::string> lines = lines_of(original);
  const Json record = builder.make(c);
  fs::path file = main;
  std::size_t line = 0;
  std::vector<std::string> rank_map = fleet.rank_nodes;
  switch (c.placement) {
    case Placement::kFirst:
      lines.insert(lines.begin(), record.dump());
      line = 1;
      break;
    case Placement::kLast:
      lines.push_back(record.dump());
      line = lines.size();
      break;
    case Placement::kSecondRun:
      // A second command that wrote into the same directory, with its own rank map (a run
      // record of a fault is its own map).
      if (c.kind.kind != "run") {
        lines.push_back(fixtures::run_record(fleet.rank_nodes, c.run_id).dump());
      } else {
        rank_map = {c.target};
      }
      lines.push_back(record.dump());
      line = lines.size();
      break;
    case Placement::kSecondFile:
      file = fleet.dir.path() / "zz-second" / "records.jsonl";
      line = 1;
      break;
  }
  if (c.placement == Placement::kSecondFile) {
    fleet.dir.write("zz-second/records.jsonl", record.dump() + "\n");
  } else {
    fleet.dir.write(fleet.run_dir + "/records.jsonl", dump_lines(lines));
  }
  const std::set<std::string> named = builder.named(record, rank_map);
  const FleetVerdict after = judge_dir(fleet.dir.path(), fleet.baseline);
  fleet.dir.write(fleet.run_dir + "/records.jsonl", original);
  fs::remove_all(fleet.dir.path() / "zz-second");

  const std::string label =
      fmt::format("{}: {} {} named by {}, placed {}, about {}:\n{}", fleet.name, c.kind.label(),
                  c.status, to_string(c.way), to_string(c.placement), c.target, record.dump());
  ++tally.cases;
  tally.kinds_and_statuses.insert(c.kind.label() + " " + c.status);
  if (c.status != "skipped") {
    EXPECT_TRUE(named.count(c.target)) << "the case does not name its node: " << label;
  }
  for (const auto& n : after.nodes) {
    if (named.count(n.node)) {
      EXPECT_NE(n.state, NodeState::kCertified) << n.node << " certified; " << label;
      const bool cites = std::any_of(n.reasons.begin(), n.reasons.end(), [&](const Reason& r) {
        return r.effect != Effect::kWarn &&
               std::any_of(r.evidence.begin(), r.evidence.end(), [&](const EvidenceLocation& e) {
                 return e.file == file.string() && e.line == line;
               });
      });
      EXPECT_TRUE(cites) << n.node << " has no reason citing " << file.string() << ":" << line
                         << "; " << label;
      continue;
    }
    const auto was = std::find_if(before.nodes.begin(), before.nodes.end(),
                                  [&](const NodeVerdict& b) { return b.node == n.node; });
    ASSERT_NE(was, before.nodes.end()) << n.node << " appeared; " << label;
    EXPECT_EQ(n.state, was->state) << n.node << " changed; " << label;
    EXPECT_EQ(fixtures::codes(n), fixtures::codes(*was)) << n.node << " changed; " << label;
  }
}

void check_fleet(const Fleet& fleet, Tally& tally) {
  const FleetVerdict before = judge_dir(fleet.dir.path(), fleet.baseline);
  ASSERT_EQ(before.count(NodeState::kCertified), fleet.nodes.size()) << fleet.name;
  const std::string target = fleet.nodes.back();
  const std::string writer = fleet.nodes.front();
  for (const auto& kind : kinds()) {
    for (const auto& status : statuses()) {
      for (const Way way : ways(kind, status)) {
        for (const Placement placement :
             {Placement::kFirst, Placement::kLast, Placement::kSecondFile, Placement::kSecondRun}) {
          Case c{kind, status, way, placement, target, writer, fleet.run_id};
          if (placement == Placement::kSecondRun) c.run_id = fleet.run_id + "-again";
          // A run record in a second file is a second run: one run has one rank map.
          if (kind.kind == "run" && placement == Placement::kSecondFile)
            c.run_id = fleet.run_id + "-file";
          check_case(fleet, before, c, tally);
          if (::testing::Test::HasFailure()) return;
        }
      }
    }
  }
}

TEST(FaultEvidenceProperty, EveryFaultWeighsOnTheNodesItNamesAndNoOthers) {
  Tally tally;
  check_fleet(*golden_fleet(), tally);
  for (const std::uint64_t seed : {1, 2}) {
    if (HasFailure()) break;
    check_fleet(*generated_fleet(seed), tally);
  }
  // Every kind with every status was tried (a health record names its component but for the
  // skipped stage record, which must have one).
  EXPECT_EQ(tally.kinds_and_statuses.size(), kinds().size() * statuses().size() - 1);
  EXPECT_GT(tally.cases, 900u);
}

}  // namespace
}  // namespace commcert
