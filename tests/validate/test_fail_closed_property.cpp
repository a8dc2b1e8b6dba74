// A property test that tries to break the one rule (docs/validator.md, "The rule"): generated
// record sets (fields dropped, nodes renamed, nodes only mentioned by others, statuses flipped,
// wrong_elements set, runs mixed and left unfinished, files truncated) are certified through
// the real reader and validator, and every certified node must have its own positive evidence
// for every required check, as judged by an independent, deliberately simple oracle below.
//
// Fixed seed, a few seconds in CI. The long run (docs/testing.md): COMMCERT_FAIL_CLOSED_CASES
// (default 300) cases from COMMCERT_FAIL_CLOSED_SEED, with --gtest_filter='FailClosedProperty.*'.

#include <cstdlib>
#include <map>
#include <random>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "support.hpp"
#include "validate/inputs.hpp"
#include "validate/validator.hpp"

namespace commcert {
namespace {

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  return std::strtoull(text, nullptr, 10);
}

// One run directory: records, what its meta.json says, whether its last line was cut short.
struct GeneratedRun {
  std::string dir;
  std::vector<Json> records;
  std::string meta_status;  // empty: no meta.json
  bool truncated = false;   // the last record's line lost its second half
};

class Generator {
 public:
  explicit Generator(std::uint64_t seed) : rng_(seed) {}

  std::vector<GeneratedRun> make() {
    const int node_count = pick(1, 4);
    std::vector<std::string> nodes;
    for (int i = 0; i < node_count; ++i)
      nodes.push_back(fmt::format("n{}", i));
    std::vector<GeneratedRun> runs;
    const int run_count = pick(1, 2);
    for (int r = 0; r < run_count; ++r) {
      GeneratedRun run;
      const std::string run_id = fmt::format("run{}", r);
      run.dir = run_id;
      if (chance(85)) run.records.push_back(fixtures::run_record(nodes, run_id));
      for (const auto& n : nodes) {
        Json health = fixtures::record("health", n, "ok", -1, run_id);
        health["component"] = "node";
        run.records.push_back(health);
        Json node_scope = fixtures::collective(1 << 20, 1.0, "node", nodes.front(), {}, run_id);
        node_scope["group_nodes"] = Json::array({n});
        node_scope["nranks"] = 1;
        run.records.push_back(node_scope);
      }
      if (chance(60)) {
        Json cluster = fixtures::collective(1 << 20, 1.0, "cluster", nodes.front(), {}, run_id);
        cluster["group_nodes"] = nodes;
        run.records.push_back(cluster);
      }
      const int mutations = pick(0, 4);
      for (int m = 0; m < mutations; ++m)
        mutate(run, runs, nodes);
      if (chance(30)) run.meta_status = chance(50) ? "running" : "ok";
      run.truncated = chance(10);
      runs.push_back(std::move(run));
    }
    return runs;
  }

 private:
  int pick(int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng_); }
  bool chance(int percent) { return pick(1, 100) <= percent; }
  template <typename T>
  const T& any_of(const std::vector<T>& items) {
    return items[static_cast<std::size_t>(pick(0, static_cast<int>(items.size()) - 1))];
  }

  void mutate(GeneratedRun& run, const std::vector<GeneratedRun>& earlier,
              const std::vector<std::string>& nodes) {
    if (run.records.empty()) return;
    Json& r =
        run.records[static_cast<std::size_t>(pick(0, static_cast<int>(run.records.size()) - 1))];
    switch (pick(0, 8)) {
      case 0: {  // drop a field
        std::vector<std::string> keys;
        for (const auto& [key, value] : r.items())
          keys.push_back(key);
        if (!keys.empty()) r.erase(any_of(keys));
        break;
      }
      case 1: {  // rename a node wherever the record names it
        const std::string from = any_of(nodes);
        const std::string to = fmt::format("x{}", pick(0, 3));
        std::string text = r.dump();
        for (std::size_t at = 0; (at = text.find('"' + from + '"', at)) != std::string::npos;)
          text.replace(at, from.size() + 2, '"' + to + '"');
        r = Json::parse(text);
        break;
      }
      case 2:  // a node only mentioned by others
        if (r.contains("group_nodes"))
          r["group_nodes"].push_back(fmt::format("ghost{}", pick(0, 1)));
        break;
      case 3: {  // flip the status
        static const std::vector<std::string> statuses{"ok", "fail", "error", "skipped", "timeout"};
        r["status"] = any_of(statuses);
        break;
      }
      case 4: {  // wrong elements, counted or not
        const std::vector<Json> values{Json(1),   Json(5),       Json(-1), Json("NaN"),
                                       Json(2.5), Json(nullptr), Json(0)};
        r["wrong_elements"] = any_of(values);
        break;
      }
      case 5:  // mix runs: the record claims another run
        r["run_id"] = fmt::format("run{}", pick(0, 2));
        break;
      case 6:  // the scope changes
        r["scope"] = chance(50) ? "node" : "cluster";
        break;
      case 7:  // a record lost entirely
        run.records.erase(run.records.begin() + pick(0, static_cast<int>(run.records.size()) - 1));
        break;
      case 8:  // a record copied from an earlier run directory
        if (!earlier.empty() && !earlier.front().records.empty()) {
          run.records.push_back(any_of(earlier.front().records));
        }
        break;
    }
  }

  std::mt19937_64 rng_;
};

// The oracle: what positive evidence of a node's own looks like, from the JSON as written,
// independently of the validator's code. Deliberately narrow: it is a necessary condition.
class Oracle {
 public:
  explicit Oracle(const std::vector<GeneratedRun>& runs) {
    for (const auto& run : runs) {
      if (run.meta_status == "running") continue;  // evidence of an unfinished run
      const std::size_t intact = run.records.size() - (run.truncated && !run.records.empty());
      for (std::size_t i = 0; i < intact; ++i)
        records_.push_back(run.records[i]);
    }
    for (const auto& r : records_) {
      if (str(r, "kind") != "run" || !r.contains("ranks") || !r["ranks"].is_array()) continue;
      auto& members = rank_maps_[str(r, "run_id")];
      for (const auto& rank : r["ranks"])
        members.insert(str(rank, "node"));
    }
    for (const auto& r : records_)
      writers_.insert(str(r, "host"));
  }

  bool node_health(const std::string& node) const {
    for (const auto& r : records_) {
      if (str(r, "kind") == "health" && str(r, "component") == "node" && str(r, "status") == "ok" &&
          str(r, "host") == node && is_int(r, "schema")) {
        return true;
      }
    }
    return false;
  }

  bool allreduce(const std::string& node) const {
    for (const auto& r : records_) {
      if (str(r, "kind") != "collective" || str(r, "collective") != "allreduce" ||
          str(r, "status") != "ok" || r.value("check", false) != true) {
        continue;
      }
      if (!r.contains("wrong_elements") || !r["wrong_elements"].is_number_integer() ||
          r["wrong_elements"].get<std::int64_t>() != 0) {
        continue;
      }
      // wrong_ranks may be left out when nothing was wrong (wrong_elements 0 says so).
      if (r.contains("wrong_ranks") && !(r["wrong_ranks"].is_array() && r["wrong_ranks"].empty())) {
        continue;
      }
      const std::string scope = str(r, "scope");
      if (scope != "node" && scope != "cluster") continue;
      const std::string run = str(r, "run_id");
      bool attributed = false;
      if (r.contains("group_nodes") && r["group_nodes"].is_array()) {
        for (const auto& member : r["group_nodes"])
          attributed |= member.is_string() && member.get<std::string>() == node;
      } else if (scope == "cluster") {
        attributed = rank_maps_.count(run) && rank_maps_.at(run).count(node);
      }
      if (!attributed) continue;
      // The run must show the node took part: its rank map, or (without one) a record it wrote.
      if (rank_maps_.count(run) ? !rank_maps_.at(run).count(node) : !writers_.count(node)) {
        continue;
      }
      return true;
    }
    return false;
  }

 private:
  static std::string str(const Json& r, const char* key) {
    return r.is_object() && r.contains(key) && r[key].is_string() ? r[key].get<std::string>()
                                                                  : std::string();
  }
  static bool is_int(const Json& r, const char* key) {
    return r.contains(key) && r[key].is_number_integer();
  }

  std::vector<Json> records_;
  std::map<std::string, std::set<std::string>> rank_maps_;
  std::set<std::string> writers_;
};

struct Outcome {
  bool judged = false;
  std::size_t certified = 0;
};

Outcome check_case(std::uint64_t seed, const Baseline& baseline) {
  Generator generator(seed);
  const std::vector<GeneratedRun> runs = generator.make();
  fixtures::TempDir dir;
  std::string written;  // every file, for the failure message
  for (const auto& run : runs) {
    std::string text;
    for (const auto& r : run.records)
      text += r.dump() + "\n";
    if (run.truncated && !run.records.empty()) {
      const std::string last = run.records.back().dump() + "\n";
      text.resize(text.size() - last.size() / 2);
    }
    dir.write(run.dir + "/records.jsonl", text);
    written += fmt::format("{}/records.jsonl:\n{}\n", run.dir, text);
    if (!run.meta_status.empty()) {
      dir.write(run.dir + "/meta.json",
                Json({{"run_id", run.dir}, {"status", run.meta_status}}).dump());
      written += fmt::format("{}/meta.json: status {}\n", run.dir, run.meta_status);
    }
  }
  LoadedInputs inputs;
  try {
    inputs = load_inputs({dir.path().string()});
  } catch (const UsageError&) {
    return {};  // nothing names a node: an error, never a pass
  }
  const FleetVerdict verdict = judge(inputs.evidence, baseline, nullptr, std::move(inputs.notes));
  const Oracle oracle(runs);
  Outcome outcome{true, 0};
  for (const auto& n : verdict.nodes) {
    if (n.state != NodeState::kCertified) continue;
    ++outcome.certified;
    EXPECT_TRUE(oracle.node_health(n.node))
        << "seed " << seed << ": " << n.node << " certified without its own health.node record\n"
        << written;
    EXPECT_TRUE(oracle.allreduce(n.node))
        << "seed " << seed << ": " << n.node << " certified without its own allreduce evidence\n"
        << written;
  }
  return outcome;
}

TEST(FailClosedProperty, NoNodeIsCertifiedWithoutItsOwnEvidenceForEveryRequiredCheck) {
  const std::uint64_t seed = env_number("COMMCERT_FAIL_CLOSED_SEED", 20261122);
  const std::uint64_t cases = env_number("COMMCERT_FAIL_CLOSED_CASES", 300);
  const Baseline baseline =
      fixtures::baseline_of("required: [health.node, collective.allreduce]\n");
  std::size_t judged = 0, with_certified = 0, certified = 0;
  for (std::uint64_t i = 0; i < cases && !HasFailure(); ++i) {
    Outcome outcome;
    try {
      outcome = check_case(seed + i, baseline);
    } catch (const std::exception& error) {
      ADD_FAILURE() << "seed " << seed + i << ": " << error.what();
    }
    judged += outcome.judged;
    with_certified += outcome.certified > 0;
    certified += outcome.certified;
  }
  // The generator must exercise both sides: sets that certify and sets that must not (a
  // single case, rerun by its seed, proves nothing either way).
  if (cases >= 100) {
    EXPECT_GT(with_certified, cases / 10) << judged << " judged";
    EXPECT_LT(with_certified, judged) << certified << " nodes certified";
  }
}

}  // namespace
}  // namespace commcert
