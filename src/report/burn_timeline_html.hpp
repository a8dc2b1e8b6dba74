#pragma once

#include <string>
#include <vector>

#include "report/run_details.hpp"

namespace commcert {

// The HTML report's "burn over time" figures: TFLOP/s, SM clock, power and temperature against
// time with one line per GPU (GPUs whose burn did not pass in red), and a strip per GPU showing
// when a clock-event (throttle) reason was active. Empty when no burn record has a timeline.
[[nodiscard]] std::string burn_timeline_figures(const std::vector<BurnGpu>& burns);

}  // namespace commcert
