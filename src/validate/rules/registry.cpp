#include "validate/rules/rules.hpp"

// Each factory is defined in its rule's file; the declarations stand here, beside the table.
namespace commcert::rules {

// Fail closed.
std::unique_ptr<Rule> make_required_evidence_rule();
std::unique_ptr<Rule> make_input_integrity_rule();
std::unique_ptr<Rule> make_fault_evidence_rule();
// Correctness and liveness.
std::unique_ptr<Rule> make_collective_wrong_data_rule();
std::unique_ptr<Rule> make_collective_timeout_rule();
std::unique_ptr<Rule> make_burn_correctness_rule();
std::unique_ptr<Rule> make_membw_integrity_rule();
std::unique_ptr<Rule> make_health_stage_fail_rule();
// Hardware state.
std::unique_ptr<Rule> make_gpu_lost_rule();
std::unique_ptr<Rule> make_gpu_ecc_rule();
std::unique_ptr<Rule> make_row_remap_rule();
std::unique_ptr<Rule> make_retired_pages_rule();
std::unique_ptr<Rule> make_pcie_link_rule();
std::unique_ptr<Rule> make_nvlink_rule();
std::unique_ptr<Rule> make_xid_rule();
std::unique_ptr<Rule> make_throttle_rule();
std::unique_ptr<Rule> make_ib_port_rule();
std::unique_ptr<Rule> make_node_inventory_rule();
// Performance: absolute, relative to the baseline, relative to the fleet.
std::unique_ptr<Rule> make_floor_rule();
std::unique_ptr<Rule> make_ceiling_rule();
std::unique_ptr<Rule> make_equality_rule();
std::unique_ptr<Rule> make_regression_rule();
std::unique_ptr<Rule> make_warn_band_rule();
std::unique_ptr<Rule> make_fleet_outlier_rule();
std::unique_ptr<Rule> make_straggler_rule();
// Localization: pairwise rounds name the node or link behind a cluster-wide shortfall.
std::unique_ptr<Rule> make_pair_localization_rule();
// Localization: bisection over node groups names the node behind a cluster-wide shortfall.
std::unique_ptr<Rule> make_bisect_localization_rule();
// Link tests between nodes (links stage).
std::unique_ptr<Rule> make_link_rule();
std::unique_ptr<Rule> make_link_counter_rule();
// Copies inside a node (p2p stage).
std::unique_ptr<Rule> make_p2p_pair_rule();
std::unique_ptr<Rule> make_p2p_host_rule();
std::unique_ptr<Rule> make_p2p_gpu_figures_rule();

}  // namespace commcert::rules

namespace commcert {

std::vector<std::unique_ptr<Rule>> make_rules() {
  using Factory = std::unique_ptr<Rule> (*)();
  // The table of every rule; add a rule by adding its line.
  static constexpr Factory kRules[] = {
      &rules::make_required_evidence_rule,
      &rules::make_input_integrity_rule,
      &rules::make_collective_wrong_data_rule,
      &rules::make_collective_timeout_rule,
      &rules::make_burn_correctness_rule,
      &rules::make_membw_integrity_rule,
      &rules::make_health_stage_fail_rule,
      &rules::make_gpu_lost_rule,
      &rules::make_gpu_ecc_rule,
      &rules::make_row_remap_rule,
      &rules::make_retired_pages_rule,
      &rules::make_pcie_link_rule,
      &rules::make_nvlink_rule,
      &rules::make_xid_rule,
      &rules::make_throttle_rule,
      &rules::make_ib_port_rule,
      &rules::make_node_inventory_rule,
      &rules::make_floor_rule,
      &rules::make_ceiling_rule,
      &rules::make_equality_rule,
      &rules::make_regression_rule,
      &rules::make_warn_band_rule,
      &rules::make_fleet_outlier_rule,
      &rules::make_straggler_rule,
      &rules::make_pair_localization_rule,
      &rules::make_bisect_localization_rule,
      &rules::make_link_rule,
      &rules::make_link_counter_rule,
      &rules::make_p2p_pair_rule,
      &rules::make_p2p_host_rule,
      &rules::make_p2p_gpu_figures_rule,
      // Last: of equal reasons, those of the rule of a record's own kind come first.
      &rules::make_fault_evidence_rule,
  };
  std::vector<std::unique_ptr<Rule>> rules;
  for (const Factory factory : kRules)
    rules.push_back(factory());
  return rules;
}

std::span<const GpuCountLimit> declared_gpu_count_limits() {
  static const std::vector<GpuCountLimit> kDeclared = [] {
    std::vector<GpuCountLimit> declared;
    for (const auto& rule : make_rules()) {
      const auto limits = rule->gpu_limits();
      declared.insert(declared.end(), limits.begin(), limits.end());
    }
    return declared;
  }();
  return kDeclared;
}

}  // namespace commcert
