// commcert-fleet-gen: writes a synthetic fleet's records (tests, golden files, the certify
// performance measurement in bench/perf-certify).
#include <cstdio>
#include <map>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/units.hpp"
#include "fleet_generator.hpp"

namespace {

using commcert::fixtures::Fault;
using commcert::fixtures::FaultKind;

const std::map<std::string, FaultKind> kFaults = {
    {"wrong-data", FaultKind::kWrongData},
    {"corrupt-everywhere", FaultKind::kCorruptEverywhere},
    {"slow-collective", FaultKind::kSlowCollective},
    {"slow-cluster", FaultKind::kSlowCluster},
    {"straggler", FaultKind::kStraggler},
    {"hang", FaultKind::kHang},
    {"stuck", FaultKind::kStuck},
    {"burn-miscompare", FaultKind::kBurnMiscompare},
    {"burn-peer-mismatch", FaultKind::kBurnPeerMismatch},
    {"burn-slow", FaultKind::kBurnSlow},
    {"burn-skipped", FaultKind::kBurnSkipped},
    {"burn-error", FaultKind::kBurnError},
    {"no-burn", FaultKind::kNoBurn},
    {"membw-errors", FaultKind::kMembwErrors},
    {"membw-slow", FaultKind::kMembwSlow},
    {"ecc", FaultKind::kEcc},
    {"remap-pending", FaultKind::kRemapPending},
    {"remap-failure", FaultKind::kRemapFailure},
    {"pcie-downgrade", FaultKind::kPcieDowngrade},
    {"nvlink-down", FaultKind::kNvlinkDown},
    {"nvlink-errors", FaultKind::kNvlinkErrors},
    {"xid", FaultKind::kXid},
    {"throttle", FaultKind::kThrottle},
    {"ib-down", FaultKind::kIbDown},
    {"ib-rate", FaultKind::kIbRate},
    {"ib-flaps", FaultKind::kIbFlaps},
    {"gpu-missing", FaultKind::kGpuMissing},
    {"truncated", FaultKind::kTruncated},
};

// kind:node[:gpu[:port[:amount]]]
Fault parse_fault(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto colon = text.find(':', start);
    parts.push_back(text.substr(start, colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  const auto kind = kFaults.find(parts[0]);
  if (kind == kFaults.end() || parts.size() < 2) {
    throw commcert::UsageError(
        fmt::format("bad --fault '{}': kind:node[:gpu[:port[:amount]]]", text));
  }
  Fault f{kind->second};
  f.node = std::stoi(parts[1]);
  if (parts.size() > 2) f.gpu = std::stoi(parts[2]);
  if (parts.size() > 3) f.port = std::stoi(parts[3]);
  if (parts.size() > 4) f.amount = std::stod(parts[4]);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Write a synthetic fleet's records (commcert tests and benchmarks)"};
  commcert::fixtures::FleetSpec spec;
  std::string out;
  std::string min_size = "1G";
  std::string max_size = "2G";
  std::vector<std::string> faults;
  bool no_node = false, no_cluster = false;
  app.add_option("--out", out, "Results root to write run directories into")->required();
  app.add_option("--nodes", spec.nodes)->capture_default_str();
  app.add_option("--gpus", spec.gpus_per_node)->capture_default_str();
  app.add_option("--ib-ports", spec.ib_ports)->capture_default_str();
  app.add_option("--prefix", spec.prefix)->capture_default_str();
  app.add_option("--noise-pct", spec.noise_pct)->capture_default_str();
  app.add_option("--seed", spec.seed)->capture_default_str();
  app.add_option("--collectives", spec.collectives)->delimiter(',');
  app.add_option("--min-bytes", min_size)->capture_default_str();
  app.add_option("--max-bytes", max_size, "Sizes double from min to max")->capture_default_str();
  app.add_option("--fault", faults, "kind:node[:gpu[:port[:amount]]], repeatable");
  app.add_flag("--no-node-scope", no_node);
  app.add_flag("--no-cluster-scope", no_cluster);
  CLI11_PARSE(app, argc, argv);
  try {
    spec.sizes.clear();
    for (std::uint64_t s = commcert::parse_size(min_size); s <= commcert::parse_size(max_size);
         s *= 2) {
      spec.sizes.push_back(s);
    }
    for (const auto& f : faults)
      spec.faults.push_back(parse_fault(f));
    spec.node_scope = !no_node;
    spec.cluster_scope = !no_cluster;
    for (const auto& dir : commcert::fixtures::write_fleet(spec, out))
      std::puts(dir.c_str());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "commcert-fleet-gen: %s\n", error.what());
    return 2;
  }
  return 0;
}
