#pragma once

#include <string>
#include <vector>

#include "core/json.hpp"

namespace commcert::test_support {

// One record as today's C++ writer functions produce it from fixed, plausible inputs.
struct RecordSample {
  std::string name;  // what it shows, e.g. "burn ok: a measured GEMM with NVML telemetry"
  Json record;
};

// Records of every kind whose writer function runs without a GPU, MPI or a run directory:
// collective_record and timeout_record (collective ok, fail, skipped, timeout),
// burn_measurement and membw_measurement (measured ok and fail), node_health_records (every
// health component: ok, error, skipped). Records assembled inline in a command (the run record,
// the sweep's error record, a stage's control-plane timeout) are not here: tests/fixtures/
// records/v1 has them as the binary wrote them. Burn and membw records are put together as
// burn_command.cpp and membw_command.cpp do it (a BurnRecord or MembwRecord with status, reason and
// measurement).
[[nodiscard]] std::vector<RecordSample> record_samples(const std::string& run_id);

}  // namespace commcert::test_support
