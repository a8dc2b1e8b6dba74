#pragma once

// One factory per rule; each rule is a class in its own file. registry.cpp lists them.

#include <memory>

#include "validate/rules/rule.hpp"

namespace commcert::rules {

// Fail closed.
std::unique_ptr<Rule> make_required_evidence_rule();
std::unique_ptr<Rule> make_input_integrity_rule();
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
// Link tests between nodes (links stage).
std::unique_ptr<Rule> make_link_rule();
std::unique_ptr<Rule> make_link_counter_rule();

}  // namespace commcert::rules
