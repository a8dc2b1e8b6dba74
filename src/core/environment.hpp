#pragma once

#include <string_view>

#include "core/json.hpp"

namespace commcert {

// True for the variables meta.json may record. The list is deliberately short: results get
// copied off clusters and attached to tickets, so anything that could hold a secret stays out.
[[nodiscard]] bool is_recorded_environment_variable(std::string_view name);

// {name: value} for every recorded variable in this process's environment, sorted by name.
[[nodiscard]] Json recorded_environment();

}  // namespace commcert
