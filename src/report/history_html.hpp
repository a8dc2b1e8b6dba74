#pragma once

#include <string>

#include "report/run_details.hpp"

namespace commcert {

// The HTML report's "History" section (`report --history DB`): per node, its latest runs (date,
// run, state) and each figure's value in them with the change from the first to the last.
// Empty when the report has no trends.
[[nodiscard]] std::string history_section(const RunDetails& run);

}  // namespace commcert
