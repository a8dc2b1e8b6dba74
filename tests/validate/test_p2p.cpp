// The p2p check: records read, GPU pairs judged as a matrix (rule.p2p_pairs), host<->GPU against
// the PCIe link (rule.p2p_host), and fail-closed evidence (docs/p2p.md). Every limit at its value
// and one step either side; every exclusion with the excluded record as the node's only evidence.
#include <algorithm>
#include <functional>
#include <optional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "support.hpp"
#include "validate/baseline_derivation.hpp"
#include "validate/p2p_judgement.hpp"

namespace commcert {
namespace {

using fixtures::p2p;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A node of `gpus` GPUs: every ordered pair measured (copy engine, write) at figure(src, dst),
// each GPU's host copies both ways at `host_gb`, and a health record per GPU (PCIe gen5 x16).
std::vector<Json> node_records(const std::string& host, int gpus,
                               const std::function<double(int, int)>& figure, double host_gb = 55.0,
                               bool health = true) {
  std::vector<Json> records = {fixtures::run_record({host})};
  for (int a = 0; a < gpus; ++a) {
    for (int b = 0; b < gpus; ++b) {
      if (a != b) records.push_back(p2p(host, "gpu_gpu", a, b, figure(a, b)));
    }
    records.push_back(p2p(host, "host_gpu", -1, a, host_gb));
    records.push_back(p2p(host, "host_gpu", a, -1, host_gb));
    records.push_back(p2p(host, "device_local", a, a, 1900.0));
    if (health) records.push_back(fixtures::gpu_health(host, a));
  }
  return records;
}

Baseline p2p_baseline(const std::string& p2p_keys = "", int gpus = 4, int nvlinks = 0) {
  const std::string nvlink_key =
      nvlinks > 0 ? ", nvlinks_per_gpu: " + std::to_string(nvlinks) : std::string();
  return fixtures::baseline_of("node: {gpus: " + std::to_string(gpus) + nvlink_key +
                               "}\nrequired: [p2p]\nfleet: {enabled: false}\n" +
                               (p2p_keys.empty() ? std::string() : "checks:\n  p2p:\n" + p2p_keys));
}

FleetVerdict judge(const std::vector<Json>& records, const Baseline& baseline = p2p_baseline()) {
  return fixtures::certify(fixtures::evidence_of(records), baseline);
}

const auto kHealthy = [](int, int) { return 390.0; };

TEST(P2pPcie, ThePerDirectionRateFollowsGenerationWidthAndLineCode) {
  EXPECT_NEAR(*pcie_bytes_per_s(5, 16), 63.015e9, 0.01e9);
  EXPECT_NEAR(*pcie_bytes_per_s(4, 16), 31.508e9, 0.01e9);
  EXPECT_NEAR(*pcie_bytes_per_s(3, 8), 7.877e9, 0.01e9);
  EXPECT_NEAR(*pcie_bytes_per_s(2, 16), 8.0e9, 0.01e9);
  EXPECT_NEAR(*pcie_bytes_per_s(1, 1), 0.25e9, 0.001e9);
  EXPECT_NEAR(*pcie_bytes_per_s(6, 16), 121.0e9, 0.01e9);
  EXPECT_EQ(pcie_bytes_per_s(7, 16), std::nullopt);
  EXPECT_EQ(pcie_bytes_per_s(0, 16), std::nullopt);
  EXPECT_EQ(pcie_bytes_per_s(5, 0), std::nullopt);
}

std::vector<P2pPairFigure> matrix(int gpus, const std::function<bool(int, int)>& slow) {
  std::vector<P2pPairFigure> out;
  for (int a = 0; a < gpus; ++a) {
    for (int b = 0; b < gpus; ++b) {
      if (a != b) out.push_back({a, b, slow(a, b) ? 100.0 : 390.0, slow(a, b), {}});
    }
  }
  return out;
}

TEST(P2pMatrix, OneGpuSlowToAllPeersIsTheGpuAndExplainsItsPairs) {
  const auto figures = matrix(4, [](int a, int b) { return a == 2 || b == 2; });
  const auto found = classify_pair_matrix(figures);
  EXPECT_THAT(found.slow_gpus, ElementsAre(2));
  EXPECT_THAT(found.slow_pairs, IsEmpty());
}

TEST(P2pMatrix, OneDirectionSlowWithEachPeerIsStillSlowToAll) {
  const auto figures = matrix(4, [](int a, int) { return a == 1; });  // 1 -> every peer
  EXPECT_THAT(classify_pair_matrix(figures).slow_gpus, ElementsAre(1));
}

TEST(P2pMatrix, OneSlowPairIsTheLinkAndBlamesNeitherGpu) {
  const auto figures = matrix(4, [](int a, int b) { return a == 0 && b == 3; });
  const auto found = classify_pair_matrix(figures);
  EXPECT_THAT(found.slow_gpus, IsEmpty());
  ASSERT_EQ(found.slow_pairs.size(), 1u);
  EXPECT_EQ(figures[found.slow_pairs[0]].src, 0);
  EXPECT_EQ(figures[found.slow_pairs[0]].dst, 3);
}

TEST(P2pMatrix, AGpuWithOnePeerCannotBeToldFromItsLink) {
  const auto figures = matrix(2, [](int, int) { return true; });
  const auto found = classify_pair_matrix(figures);
  EXPECT_THAT(found.slow_gpus, IsEmpty());
  EXPECT_EQ(found.slow_pairs.size(), 2u);
}

TEST(P2pMatrix, AGpuSlowWithAllButOnePeerIsNotSlowToAll) {
  const auto figures =
      matrix(4, [](int a, int b) { return (a == 2 || b == 2) && a != 3 && b != 3; });
  const auto found = classify_pair_matrix(figures);
  EXPECT_THAT(found.slow_gpus, IsEmpty());
  EXPECT_EQ(found.slow_pairs.size(), 4u);  // 2<->0, 2<->1
}

// max_asymmetry_pct 25: the slower direction passes at 75 % of the faster, fails just below.
TEST(P2pMatrix, AsymmetryPassesAtItsLimitAndFailsJustBelow) {
  for (const auto& [slower, flagged] :
       std::vector<std::pair<double, bool>>{{75.0, false}, {75.001, false}, {74.999, true}}) {
    SCOPED_TRACE(slower);
    const std::vector<P2pPairFigure> figures = {{0, 1, 100.0, false, {}},
                                                {1, 0, slower, false, {}}};
    const auto found = asymmetric_pairs(figures, 25.0);
    EXPECT_EQ(found.size(), flagged ? 1u : 0u);
    if (flagged) {
      EXPECT_EQ(found[0].first, 1u);
      EXPECT_EQ(found[0].second, 0u);
    }
  }
}

TEST(P2p, AHealthyNodeIsCertified) {
  const auto verdict = judge(node_records("n0", 4, kHealthy));
  EXPECT_THAT(fixtures::nodes_in(verdict, NodeState::kCertified), ElementsAre("n0"));
  EXPECT_THAT(fixtures::codes(fixtures::node(verdict, "n0")), IsEmpty());
}

TEST(P2p, AGpuSlowToAllPeersQuarantinesTheNodeNamingTheGpu) {
  const auto verdict =
      judge(node_records("n0", 4, [](int a, int b) { return a == 2 || b == 2 ? 150.0 : 390.0; }));
  EXPECT_THAT(fixtures::nodes_in(verdict, NodeState::kQuarantined), ElementsAre("n0"));
  const auto& node = fixtures::node(verdict, "n0");
  const Reason& r = fixtures::reason(node, "p2p.slow_gpu");
  EXPECT_THAT(r.message, HasSubstr("gpu 2"));
  EXPECT_THAT(r.message, HasSubstr("slow to all 3 peers"));
  EXPECT_THAT(r.message, HasSubstr("copy_engine write"));
  EXPECT_FALSE(fixtures::has_code(node, "p2p.slow_pair"));
}

TEST(P2p, OneSlowPairQuarantinesTheNodeNamingThePair) {
  const auto verdict =
      judge(node_records("n0", 4, [](int a, int b) { return a == 0 && b == 1 ? 150.0 : 390.0; }));
  const auto& node = fixtures::node(verdict, "n0");
  EXPECT_THAT(fixtures::nodes_in(verdict, NodeState::kQuarantined), ElementsAre("n0"));
  EXPECT_THAT(fixtures::reason(node, "p2p.slow_pair").message, HasSubstr("gpu 0 -> gpu 1"));
  EXPECT_FALSE(fixtures::has_code(node, "p2p.slow_gpu"));
  // 150 against 390 the other way is also asymmetric, but a slow direction is reported once.
  EXPECT_FALSE(fixtures::has_code(node, "p2p.asymmetric"));
}

TEST(P2p, AnAsymmetricPairAboveTheLimitsIsQuarantinedAsAsymmetric) {
  // With max_deficit_pct 30 the limit is 273 (390 * 0.7): 280 is not slow, yet 28 % below the
  // other direction's 390.
  const auto verdict =
      judge(node_records("n0", 4, [](int a, int b) { return a == 3 && b == 0 ? 280.0 : 390.0; }),
            p2p_baseline("    max_deficit_pct: 30\n"));
  const auto& node = fixtures::node(verdict, "n0");
  EXPECT_THAT(fixtures::reason(node, "p2p.asymmetric").message, HasSubstr("gpu 3 -> gpu 0"));
  EXPECT_FALSE(fixtures::has_code(node, "p2p.slow_pair"));
}

// The floor at its limit and one step either side (two GPUs: two pairs, no reference).
TEST(P2p, ThePairFloorPassesAtItsLimitAndFailsJustBelow) {
  for (const auto& [figure, slow] :
       std::vector<std::pair<double, bool>>{{315.0, false}, {315.001, false}, {314.999, true}}) {
    SCOPED_TRACE(figure);
    const auto evidence = fixtures::evidence_of(
        node_records("n0", 2, [figure = figure](int, int) { return figure; }));
    const P2pJudgement j =
        judge_p2p_pairs(evidence, p2p_baseline("    pair_floor_gb_per_s: 315\n", 2).p2p);
    ASSERT_EQ(j.series.size(), 1u);
    for (const auto& pair : j.series[0].pairs)
      EXPECT_EQ(pair.slow, slow);
  }
}

// The relative limit: 25 % below the upper quartile of the node's pairs (here 400 -> 300).
TEST(P2p, TheRelativeLimitPassesAtItsValueAndFailsJustBelow) {
  for (const auto& [figure, slow] :
       std::vector<std::pair<double, bool>>{{300.0, false}, {300.001, false}, {299.999, true}}) {
    SCOPED_TRACE(figure);
    const auto evidence = fixtures::evidence_of(node_records(
        "n0", 4, [figure = figure](int a, int b) { return a == 0 && b == 1 ? figure : 400.0; }));
    const P2pJudgement j = judge_p2p_pairs(evidence, P2pSpec{});
    ASSERT_EQ(j.series.size(), 1u);
    EXPECT_DOUBLE_EQ(j.series[0].limit, 300.0);
    const auto& pairs = j.series[0].pairs;
    const auto it = std::find_if(pairs.begin(), pairs.end(),
                                 [](const P2pPairFigure& p) { return p.src == 0 && p.dst == 1; });
    ASSERT_NE(it, pairs.end());
    EXPECT_EQ(it->slow, slow);
  }
}

// min_pairs: a series of exactly that many ordered pairs gets a reference, one fewer does not
// (and, with no floor, is not judged at all).
TEST(P2p, TheReferenceNeedsMinPairsPairsAtTheLimitAndOneStepEitherSide) {
  const auto evidence =
      fixtures::evidence_of({fixtures::run_record({"n0"}), p2p("n0", "gpu_gpu", 0, 1, 400.0),
                             p2p("n0", "gpu_gpu", 1, 2, 400.0), p2p("n0", "gpu_gpu", 2, 0, 100.0)});
  for (const auto& [min_pairs, judged] :
       std::vector<std::pair<int, bool>>{{2, true}, {3, true}, {4, false}}) {
    SCOPED_TRACE(min_pairs);
    P2pSpec spec;
    spec.min_pairs = min_pairs;
    const P2pJudgement j = judge_p2p_pairs(evidence, spec);
    EXPECT_EQ(j.series.size(), judged ? 1u : 0u);
    EXPECT_EQ(j.verdicts.size(), judged ? 1u : 0u);  // 2 -> 0 at 100 against 300
  }
}

TEST(P2p, PairLatencyIsJudgedAgainstItsCeilingAtTheLimitAndEitherSide) {
  for (const auto& [us, slow] :
       std::vector<std::pair<double, bool>>{{2.0, false}, {1.999, false}, {2.001, true}}) {
    SCOPED_TRACE(us);
    auto records = node_records("n0", 2, kHealthy);
    records.push_back(p2p("n0", "gpu_gpu", 0, 1, us, "pointer_chase", "read"));
    records.push_back(p2p("n0", "gpu_gpu", 1, 0, 1.5, "pointer_chase", "read"));
    const auto verdict = judge(records, p2p_baseline("    pair_latency_ceiling_us: 2\n", 2));
    EXPECT_EQ(fixtures::has_code(fixtures::node(verdict, "n0"), "p2p.slow_pair"), slow);
  }
}

// Host copies from the GPU's own node must reach 75 % of gen5 x16's 63.015 GB/s = 47.26 GB/s.
TEST(P2p, HostCopiesPassAtThePcieLimitAndFailJustBelow) {
  const double limit = *pcie_bytes_per_s(5, 16) / 1e9 * 0.75;
  for (const auto& [figure, slow] : std::vector<std::pair<double, bool>>{
           {limit, false}, {limit + 0.001, false}, {limit - 0.001, true}}) {
    SCOPED_TRACE(figure);
    const auto verdict = judge(node_records("n0", 2, kHealthy, figure), p2p_baseline("", 2));
    const auto& node = fixtures::node(verdict, "n0");
    EXPECT_EQ(fixtures::has_code(node, "p2p.host_slow"), slow);
    if (slow) {
      EXPECT_THAT(fixtures::reason(node, "p2p.host_slow").message,
                  HasSubstr("75% of PCIe gen5 x16"));
    }
  }
}

// n0's records of two GPUs with `gpu`'s copies from the host at `to_gpu` GB/s and to it at
// `from_gpu`; the other host copies at 55 GB/s.
std::vector<Json> slow_host_copies(int gpu, double to_gpu, double from_gpu, bool health = true) {
  auto records = node_records("n0", 2, kHealthy, 55.0, health);
  for (auto& r : records) {
    if (r.at("kind") != "p2p" || r.at("path") != "host_gpu") continue;
    if (r.at("dst_gpu") == gpu) r = p2p("n0", "host_gpu", -1, gpu, to_gpu);
    if (r.at("src_gpu") == gpu) r = p2p("n0", "host_gpu", gpu, -1, from_gpu);
  }
  return records;
}

std::vector<Json> slow_host_copies_of_gpu1(double to_gpu, double from_gpu, bool health = true) {
  return slow_host_copies(1, to_gpu, from_gpu, health);
}

TEST(P2p, EachSlowHostCopyNamesItsGpuDirectionFigureAndLimit) {
  const auto verdict = judge(slow_host_copies_of_gpu1(40.0, 30.0), p2p_baseline("", 2));
  const auto& node = fixtures::node(verdict, "n0");
  std::vector<std::string> messages;
  for (const Reason& r : node.reasons) {
    if (r.code != "p2p.host_slow") continue;
    messages.push_back(r.message);
    // What verdict.json shows: the GPU, the check, the figure against 75 % of gen5 x16.
    EXPECT_EQ(r.gpu_index, 1);
    EXPECT_EQ(r.gpu_uuid, "GPU-n0-1");
    EXPECT_EQ(r.check, "p2p");
    EXPECT_EQ(r.unit, "GB/s");
    ASSERT_TRUE(r.limit.has_value());
    EXPECT_NEAR(*r.limit, 47.26, 0.01);
    EXPECT_TRUE(r.measured == std::optional<double>(40.0) ||
                r.measured == std::optional<double>(30.0));
  }
  EXPECT_THAT(messages,
              ::testing::UnorderedElementsAre(
                  "gpu 1 (GPU-n0-1): host->GPU 40 GB/s from NUMA node 0, below 75% of PCIe gen5 "
                  "x16 (47.26 GB/s)",
                  "gpu 1 (GPU-n0-1): GPU->host 30 GB/s from NUMA node 0, below 75% of PCIe gen5 "
                  "x16 (47.26 GB/s)"));
  // GPU 0's copy to the host: the direction is told by the host end, not by the GPU's number.
  EXPECT_THAT(fixtures::reason(
                  fixtures::node(judge(slow_host_copies(0, 55.0, 30.0), p2p_baseline("", 2)), "n0"),
                  "p2p.host_slow")
                  .message,
              HasSubstr("gpu 0 (GPU-n0-0): GPU->host 30 GB/s"));
  // A record that names another GPU than its copy's (hand-made): the copy's GPU is named without
  // the other's identity.
  for (const auto& [copied, named] : std::vector<std::pair<int, int>>{{0, 1}, {1, 0}}) {
    auto foreign = slow_host_copies(copied, 40.0, 55.0);
    for (auto& r : foreign) {
      if (r.at("kind") == "p2p" && r.at("dst_gpu") == copied && r.at("path") == "host_gpu") {
        r["gpu"]["index"] = named;
        r["gpu"]["uuid"] = "GPU-n0-" + std::to_string(named);
      }
    }
    const FleetVerdict judged = judge(foreign, p2p_baseline("", 2));
    const Reason& r = fixtures::reason(fixtures::node(judged, "n0"), "p2p.host_slow");
    EXPECT_EQ(r.gpu_index, copied);
    EXPECT_EQ(r.gpu_uuid, "");
  }
}

TEST(P2p, WithoutAPcieRecordTheHostFloorJudgesAndAnUnknownNumaNodeIsSaid) {
  // No health record: the baseline's own host floor is the limit.
  const auto floor = judge(slow_host_copies_of_gpu1(40.0, 55.0, false),
                           p2p_baseline("    host_floor_gb_per_s: 45\n", 2));
  EXPECT_EQ(fixtures::reason(fixtures::node(floor, "n0"), "p2p.host_slow").message,
            "gpu 1 (GPU-n0-1): host->GPU 40 GB/s from NUMA node 0, below the baseline's host "
            "floor (45 GB/s)");
  // Neither: not judged, and a copy whose NUMA node was not read says so.
  auto records = slow_host_copies_of_gpu1(40.0, 55.0, false);
  for (auto& r : records) {
    if (r.at("kind") == "p2p" && r.at("dst_gpu") == 1 && r.at("path") == "host_gpu") {
      r["host_numa_node"] = nullptr;
    }
  }
  const auto unjudged = judge(records, p2p_baseline("", 2));
  std::vector<std::string> messages;
  for (const Reason& r : fixtures::node(unjudged, "n0").reasons) {
    if (r.code == "p2p.host_unjudged") messages.push_back(r.message);
  }
  EXPECT_THAT(messages, ::testing::Contains(HasSubstr(
                            "gpu 1 (GPU-n0-1): host->GPU 40 GB/s from an unknown NUMA node not "
                            "judged")));
  // Not judged: no limit in verdict.json.
  EXPECT_FALSE(
      fixtures::reason(fixtures::node(unjudged, "n0"), "p2p.host_unjudged").limit.has_value());
}

TEST(P2p, AHostLinkThatTrainedDownIsHeldToWhatTheSlotSupports) {
  auto records = node_records("n0", 2, kHealthy, 30.0);  // what gen4 x16 gives
  for (auto& r : records) {
    if (r.at("kind") == "health") r["pcie"]["gen_current"] = 4;
  }
  const auto verdict = judge(records, p2p_baseline("", 2));
  EXPECT_TRUE(fixtures::has_code(fixtures::node(verdict, "n0"), "p2p.host_slow"));
}

// Host memory on the other socket, one record per GPU at remote(gpu), host->GPU.
std::vector<Json> with_remote_host(std::vector<Json> records, int gpus,
                                   const std::function<double(int)>& remote) {
  for (int gpu = 0; gpu < gpus; ++gpu) {
    Json r = p2p("n0", "host_gpu", -1, gpu, remote(gpu));
    r["host_numa_node"] = 1;
    r["host_numa_local"] = false;
    records.push_back(r);
  }
  return records;
}

// The other socket is not held to PCIe's rate (14 GB/s passes a gen5 x16 link) but to the node's
// other GPUs: max_deficit_pct (25 %) below their upper quartile, at the limit and either side.
TEST(P2p, HostMemoryOnTheOtherSocketIsHeldToTheNodesOtherGpus) {
  for (const auto& [figure, slow] :
       std::vector<std::pair<double, bool>>{{30.01, false}, {30.0, false}, {29.99, true}}) {
    SCOPED_TRACE(figure);
    const auto verdict = judge(with_remote_host(node_records("n0", 4, kHealthy), 4,
                                                [&](int gpu) { return gpu == 3 ? figure : 40.0; }));
    const NodeVerdict& node = fixtures::node(verdict, "n0");
    EXPECT_EQ(node.state, slow ? NodeState::kQuarantined : NodeState::kCertified);
    if (!slow) continue;
    const Reason& r = fixtures::reason(node, "p2p.host_remote_slow");
    EXPECT_THAT(r.message, HasSubstr("gpu 3"));
    EXPECT_THAT(r.message,
                HasSubstr("host->GPU from the other socket (NUMA node 1): 29.99 GB/s, "
                          "limit 30 GB/s from the node's GPUs (upper quartile 40 GB/s)"));
  }
  // One GPU far off at 14 GB/s with too few peers to compare and no floor is not judged.
  const auto alone =
      judge(with_remote_host(node_records("n0", 2, kHealthy), 1, [](int) { return 14.0; }),
            p2p_baseline("", 2));
  EXPECT_THAT(fixtures::nodes_in(alone, NodeState::kCertified), ElementsAre("n0"));
}

TEST(P2p, TheRemoteHostFloorJudgesAtItsLimitAndEitherSide) {
  for (const auto& [figure, slow] :
       std::vector<std::pair<double, bool>>{{20.01, false}, {20.0, false}, {19.99, true}}) {
    SCOPED_TRACE(figure);
    const auto verdict =
        judge(with_remote_host(node_records("n0", 2, kHealthy), 2, [&](int) { return figure; }),
              p2p_baseline("    host_remote_floor_gb_per_s: 20\n", 2));
    EXPECT_EQ(fixtures::node(verdict, "n0").state,
              slow ? NodeState::kQuarantined : NodeState::kCertified);
  }
}

// Copies within a GPU's memory: each GPU against the node's others (and the floor), per method.
TEST(P2p, DeviceLocalCopiesAreHeldToTheNodesOtherGpusAtTheLimitAndEitherSide) {
  for (const auto& [figure, slow] :
       std::vector<std::pair<double, bool>>{{1425.1, false}, {1425.0, false}, {1424.9, true}}) {
    SCOPED_TRACE(figure);
    auto records = node_records("n0", 4, kHealthy);
    records.push_back(p2p("n0", "device_local", 1, 1, figure));  // the worse figure counts
    const FleetVerdict verdict = judge(records);
    const NodeVerdict& node = fixtures::node(verdict, "n0");
    EXPECT_EQ(node.state, slow ? NodeState::kQuarantined : NodeState::kCertified);
    if (slow) {
      EXPECT_THAT(fixtures::reason(node, "p2p.device_local_slow").message, HasSubstr("gpu 1"));
    }
  }
  for (const auto& [figure, slow] :
       std::vector<std::pair<double, bool>>{{1500.1, false}, {1500.0, false}, {1499.9, true}}) {
    auto records = node_records("n0", 2, kHealthy);
    records.push_back(p2p("n0", "device_local", 0, 0, figure));
    EXPECT_EQ(fixtures::node(
                  judge(records, p2p_baseline("    device_local_floor_gb_per_s: 1500\n", 2)), "n0")
                  .state,
              slow ? NodeState::kQuarantined : NodeState::kCertified)
        << figure;
  }
}

// Pointer-chase latency within a GPU: above the node's lower quartile / (1 - 25 %) is slow.
TEST(P2p, DeviceLocalLatencyIsHeldToTheNodesOtherGpus) {
  for (const auto& [figure, slow] :
       std::vector<std::pair<double, bool>>{{0.666, false}, {0.6667, true}, {0.7, true}}) {
    SCOPED_TRACE(figure);
    auto records = node_records("n0", 4, kHealthy);
    for (int gpu = 0; gpu < 4; ++gpu)
      records.push_back(
          p2p("n0", "device_local", gpu, gpu, gpu == 2 ? figure : 0.5, "pointer_chase"));
    const FleetVerdict verdict = judge(records);
    const NodeVerdict& node = fixtures::node(verdict, "n0");
    EXPECT_EQ(node.state, slow ? NodeState::kQuarantined : NodeState::kCertified);
  }
}

// Fail closed: a host figure with no PCIe record to judge it by is never a pass.
TEST(P2p, AHostFigureWithoutAPcieRecordIsInconclusiveAndSaysWhy) {
  const auto verdict = judge(node_records("n0", 2, kHealthy, 55.0, false), p2p_baseline("", 2));
  EXPECT_THAT(fixtures::nodes_in(verdict, NodeState::kInconclusive), ElementsAre("n0"));
  const Reason& r = fixtures::reason(fixtures::node(verdict, "n0"), "p2p.host_unjudged");
  EXPECT_THAT(r.message, HasSubstr("no health record gives the GPU's PCIe link"));
  EXPECT_THAT(r.message, HasSubstr(" 55 GB/s from "));  // the figure that was not judged
}

TEST(P2p, WithoutAPcieRecordTheHostFloorJudgesAtItsLimitAndEitherSide) {
  for (const auto& [figure, slow] :
       std::vector<std::pair<double, bool>>{{48.0, false}, {48.001, false}, {47.999, true}}) {
    SCOPED_TRACE(figure);
    const auto verdict = judge(node_records("n0", 2, kHealthy, figure, false),
                               p2p_baseline("    host_floor_gb_per_s: 48\n", 2));
    const auto& node = fixtures::node(verdict, "n0");
    EXPECT_EQ(fixtures::has_code(node, "p2p.host_slow"), slow);
    EXPECT_FALSE(fixtures::has_code(node, "p2p.host_unjudged"));
  }
}

Json skipped_pair(const std::string& host, const std::string& reason,
                  std::optional<bool> peer_access = std::nullopt, int src = 0, int dst = -1) {
  Json r = fixtures::record("p2p", host, "skipped", src);
  r["reason"] = reason;
  r["path"] = "gpu_gpu";
  r["method"] = nullptr;
  r["access"] = nullptr;
  r["bidirectional"] = false;
  r["src_gpu"] = src;
  r["dst_gpu"] = dst >= 0 ? Json(dst) : Json(nullptr);
  r["host_numa_node"] = nullptr;
  r["host_numa_local"] = nullptr;
  r["peer_access"] = peer_access ? Json(*peer_access) : Json(nullptr);
  return r;
}

// A `skipped: one GPU` pair record alone certifies nothing.
TEST(P2pFailClosed, AOneGpuPairRecordAloneLeavesTheNodeInconclusive) {
  const auto verdict = judge({fixtures::run_record({"n0"}), skipped_pair("n0", "one GPU")});
  EXPECT_THAT(fixtures::nodes_in(verdict, NodeState::kInconclusive), ElementsAre("n0"));
  EXPECT_THAT(fixtures::reason(fixtures::node(verdict, "n0"), "evidence.skipped").message,
              HasSubstr("one GPU"));
}

// Host and local copies do not stand in for the pairs a multi-GPU baseline expects.
TEST(P2pFailClosed, MeasuredHostCopiesWithAOneGpuPairRecordDoNotCertifyPairHealth) {
  auto records = node_records("n0", 1, kHealthy);
  records.push_back(skipped_pair("n0", "one GPU"));
  const auto verdict = judge(records, p2p_baseline("", 8));
  EXPECT_THAT(fixtures::nodes_in(verdict, NodeState::kInconclusive), ElementsAre("n0"));
  EXPECT_THAT(fixtures::reason(fixtures::node(verdict, "n0"), "evidence.skipped").message,
              HasSubstr("for GPU pairs: one GPU"));
}

TEST(P2pFailClosed, AOneGpuBaselineNeedsNoPairs) {
  auto records = node_records("n0", 1, kHealthy);
  records.push_back(skipped_pair("n0", "one GPU"));
  const auto verdict = judge(records, p2p_baseline("", 1));
  EXPECT_THAT(fixtures::nodes_in(verdict, NodeState::kCertified), ElementsAre("n0"));
}

TEST(P2pFailClosed, ASkippedCpuOnlyRecordAloneLeavesTheNodeInconclusive) {
  Json r = fixtures::record("p2p", "n0", "skipped");
  r["reason"] = "no usable GPU: this build has no CUDA support";
  for (const char* key : {"path", "method", "access", "src_gpu", "dst_gpu", "host_numa_node",
                          "host_numa_local", "peer_access"}) {
    r[key] = nullptr;
  }
  r["bidirectional"] = false;
  const auto verdict = judge({fixtures::run_record({"n0"}), r});
  EXPECT_THAT(fixtures::nodes_in(verdict, NodeState::kInconclusive), ElementsAre("n0"));
  EXPECT_THAT(fixtures::reason(fixtures::node(verdict, "n0"), "evidence.skipped").message,
              HasSubstr("no CUDA support"));
}

TEST(P2pFailClosed, APairWithoutPeerAccessQuarantinesOnlyWhereNvlinkIsExpected) {
  std::vector<Json> records;
  for (auto& r : node_records("n0", 3, kHealthy)) {
    const bool pair_0_2 = r.at("kind") == "p2p" && r.at("path") == "gpu_gpu" &&
                          r.at("src_gpu").get<int>() + r.at("dst_gpu").get<int>() == 2;
    if (!pair_0_2) records.push_back(std::move(r));
  }
  const std::string no_access = "no peer access between these GPUs (cudaDeviceCanAccessPeer)";
  records.push_back(skipped_pair("n0", no_access, false, 0, 2));
  records.push_back(skipped_pair("n0", no_access, false, 2, 0));
  const auto nvlink = judge(records, p2p_baseline("", 3, 18));
  EXPECT_THAT(fixtures::nodes_in(nvlink, NodeState::kQuarantined), ElementsAre("n0"));
  const auto& reasons = fixtures::node(nvlink, "n0");
  EXPECT_THAT(fixtures::reason(reasons, "p2p.no_peer_access").message,
              HasSubstr("gpu 0 <-> gpu 2"));
  const auto pcie_only = judge(records, p2p_baseline("", 3));
  EXPECT_FALSE(fixtures::has_code(fixtures::node(pcie_only, "n0"), "p2p.no_peer_access"));
  EXPECT_THAT(fixtures::nodes_in(pcie_only, NodeState::kCertified), ElementsAre("n0"));
}

// Each pair without peer access is one reason, whichever direction or directions its records
// name, GPU 0 included, where the baseline expects even one NVLink per GPU; a record that names
// no GPU at one end names no pair.
TEST(P2pFailClosed, EachPairWithoutPeerAccessIsOneReasonWithItsRecord) {
  std::vector<Json> records;
  for (auto& r : node_records("n0", 3, kHealthy)) {
    if (r.at("kind") != "p2p" || r.at("path") != "gpu_gpu") records.push_back(std::move(r));
  }
  const std::string no_access = "no peer access between these GPUs (cudaDeviceCanAccessPeer)";
  records.push_back(skipped_pair("n0", no_access, false, 0, 1));  // one direction, from GPU 0
  records.push_back(skipped_pair("n0", no_access, false, 2, 0));  // one direction, to GPU 0
  records.push_back(skipped_pair("n0", no_access, false, 1, 2));  // both directions
  records.push_back(skipped_pair("n0", no_access, false, 2, 1));
  records.push_back(skipped_pair("n0", no_access, false, 0, -1));  // no peer named
  Json no_source = skipped_pair("n0", no_access, false, 0, 1);
  no_source["src_gpu"] = nullptr;  // no source named
  records.push_back(no_source);
  const auto verdict = judge(records, p2p_baseline("", 3, 1));
  std::vector<std::string> said;
  for (const auto& r : fixtures::node(verdict, "n0").reasons) {
    if (r.code != "p2p.no_peer_access") continue;
    said.push_back(r.message);
    EXPECT_EQ(r.check, "p2p");
    EXPECT_EQ(r.rule, "rule.p2p_pairs");
    EXPECT_EQ(r.evidence.size(), 1u);
  }
  const std::string why =
      ": the GPUs cannot map each other's memory (cudaDeviceCanAccessPeer), the baseline expects "
      "1 NVLinks per GPU";
  EXPECT_THAT(
      said, ElementsAre("gpu 0 <-> gpu 1" + why, "gpu 0 <-> gpu 2" + why, "gpu 1 <-> gpu 2" + why));
}

// The reasons of a node's pairs word for word: the GPU by its own node's identity (a second
// node's GPU 2 is not the first node's), the pair floor, the asymmetry limit.
TEST(P2p, PairReasonsNameTheirOwnGpuFigureAndLimit) {
  // n0: one slow pair; n1: GPU 2 slow to all. Both are reasons, each of its own node: n1 is
  // named first (another run's rank map), its records come after n0's and highest GPU first.
  std::vector<Json> records = {fixtures::run_record({"n1", "n0"}, "run0")};
  for (auto& r :
       node_records("n0", 4, [](int a, int b) { return a == 0 && b == 1 ? 150.0 : 390.0; }))
    records.push_back(std::move(r));
  auto n1 = node_records("n1", 4, [](int a, int b) { return a == 2 || b == 2 ? 150.0 : 390.0; });
  std::reverse(n1.begin() + 1, n1.end());
  for (auto& r : n1)
    records.push_back(std::move(r));
  const auto verdict = judge(records);
  const Reason& gpu = fixtures::reason(fixtures::node(verdict, "n1"), "p2p.slow_gpu");
  EXPECT_THAT(gpu.message,
              ::testing::StartsWith("gpu 2 (GPU-n1-2): copy_engine write: slow to all 3 peers"));
  EXPECT_EQ(gpu.rule, "rule.p2p_pairs");
  // And the other way round: the slow node named after one whose records come first.
  auto later = node_records("n0", 4, kHealthy);
  for (auto& r :
       node_records("n1", 4, [](int a, int b) { return a == 2 || b == 2 ? 150.0 : 390.0; }))
    later.push_back(std::move(r));
  const auto second = judge(later);
  EXPECT_THAT(fixtures::reason(fixtures::node(second, "n1"), "p2p.slow_gpu").message,
              ::testing::StartsWith("gpu 2 (GPU-n1-2): "));
  const Reason& slow = fixtures::reason(fixtures::node(verdict, "n0"), "p2p.slow_pair");
  EXPECT_THAT(slow.message, ::testing::MatchesRegex("gpu 0 -> gpu 1 copy_engine write: 150 GB/s, "
                                                    "pairs need [0-9.]+ GB/s \\(run run1\\)"));
  EXPECT_EQ(slow.check, "p2p");
  EXPECT_EQ(slow.rule, "rule.p2p_pairs");
  EXPECT_EQ(slow.measured, std::optional<double>(150.0));
  ASSERT_TRUE(slow.limit.has_value());
  EXPECT_GT(*slow.limit, 150.0);
  EXPECT_EQ(slow.unit, "GB/s");
  EXPECT_FALSE(slow.evidence.empty());
  const auto asymmetric =
      judge(node_records("n0", 4, [](int a, int b) { return a == 3 && b == 0 ? 280.0 : 390.0; }),
            p2p_baseline("    max_deficit_pct: 30\n"));
  const Reason& apart = fixtures::reason(fixtures::node(asymmetric, "n0"), "p2p.asymmetric");
  EXPECT_EQ(apart.message,
            "gpu 3 -> gpu 0 copy_engine write: 280 GB/s, the other way 390 GB/s (more than 25% "
            "apart, run run1)");
  EXPECT_EQ(apart.limit, std::optional<double>(25.0));
  EXPECT_EQ(apart.unit, "%");
}

TEST(P2pRecords, AMeasurementThatNamesNoPairIsLostInputNotAPass) {
  Json broken = p2p("n0", "gpu_gpu", 0, 1, 390.0);
  broken["dst_gpu"] = nullptr;
  const Evidence evidence = fixtures::evidence_of({fixtures::run_record({"n0"}), broken});
  ASSERT_EQ(evidence.issues.size(), 1u);
  EXPECT_THAT(evidence.issues[0].detail, HasSubstr("src_gpu"));
  EXPECT_THAT(evidence.p2p, IsEmpty());
}

TEST(P2pBaseline, KeysAreReadWrittenBackAndAnUnknownKeyIsRefused) {
  const Baseline b = p2p_baseline(
      "    pair_floor_gb_per_s: 315\n    pair_latency_ceiling_us: 3\n    max_deficit_pct: 20\n"
      "    max_asymmetry_pct: 15\n    min_pairs: 4\n    host_min_pcie_pct: 80\n"
      "    host_floor_gb_per_s: 40\n    host_remote_floor_gb_per_s: 20\n"
      "    device_local_floor_gb_per_s: 1500\n");
  EXPECT_EQ(b.p2p.pair_floor_gb_per_s, 315.0);
  EXPECT_EQ(b.p2p.pair_latency_ceiling_us, 3.0);
  EXPECT_EQ(b.p2p.max_deficit_pct, 20.0);
  EXPECT_EQ(b.p2p.max_asymmetry_pct, 15.0);
  EXPECT_EQ(b.p2p.min_pairs, 4);
  EXPECT_EQ(b.p2p.host_min_pcie_pct, 80.0);
  EXPECT_EQ(b.p2p.host_floor_gb_per_s, 40.0);
  EXPECT_EQ(b.p2p.host_remote_floor_gb_per_s, 20.0);
  EXPECT_EQ(b.p2p.device_local_floor_gb_per_s, 1500.0);
  EXPECT_EQ(parse_baseline(baseline_to_yaml(b), "written").p2p, b.p2p);
  EXPECT_THROW((void)p2p_baseline("    pair_floor: 315\n"), UsageError);
  EXPECT_THROW((void)p2p_baseline("    pair_floor_gb_per_s: 0\n"), UsageError);
  EXPECT_THROW((void)p2p_baseline("    device_local_floor_gb_per_s: -1\n"), UsageError);
}

// `baseline derive` sets every p2p limit from a healthy node's figures (the median less the
// floor margin, the latency ceiling the median plus it) and requires p2p; the limits it derives
// pass the fleet they came from.
TEST(P2pBaseline, DeriveSetsEachLimitFromTheFleetsFigures) {
  auto records = with_remote_host(node_records("n0", 4, kHealthy), 4, [](int) { return 40.0; });
  for (int gpu = 0; gpu < 4; ++gpu)
    records.push_back(p2p("n0", "gpu_gpu", gpu, (gpu + 1) % 4, 2.0, "pointer_chase"));
  const Evidence evidence = fixtures::evidence_of(records);
  const Derivation d = derive_baseline(evidence, Baseline{}, DerivationOptions{});
  EXPECT_EQ(d.baseline.p2p.pair_floor_gb_per_s, 351.0);    // 390 - 10 %
  EXPECT_EQ(d.baseline.p2p.pair_latency_ceiling_us, 2.2);  // 2 + 10 %
  EXPECT_EQ(d.baseline.p2p.host_floor_gb_per_s, 49.5);     // 55 - 10 %
  EXPECT_EQ(d.baseline.p2p.host_remote_floor_gb_per_s, 36.0);
  EXPECT_EQ(d.baseline.p2p.device_local_floor_gb_per_s, 1710.0);
  EXPECT_THAT(d.baseline.required, ::testing::Contains("p2p"));
  EXPECT_THAT(d.yaml, HasSubstr("pair_floor_gb_per_s: 351"));
  const FleetVerdict again = fixtures::certify(evidence, parse_baseline(d.yaml, "derived"));
  EXPECT_THAT(fixtures::nodes_in(again, NodeState::kCertified), ElementsAre("n0"));
}

}  // namespace
}  // namespace commcert
