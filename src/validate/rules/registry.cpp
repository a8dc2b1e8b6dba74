#include "validate/rules/rules.hpp"

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
      &rules::make_link_rule,
      &rules::make_link_counter_rule,
  };
  std::vector<std::unique_ptr<Rule>> rules;
  for (const Factory factory : kRules)
    rules.push_back(factory());
  return rules;
}

}  // namespace commcert
