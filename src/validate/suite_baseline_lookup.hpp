#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "validate/baseline.hpp"
#include "validate/suite.hpp"

namespace commcert {

// Suites and baselines are named either by a path (it holds a '/' or ends in .yaml) or by the
// name of one compiled into the binary (`quick`, `cpu-mpi-ci`), so a node with only the binary
// can run and judge a suite. A path that exists wins over a name.
[[nodiscard]] Suite load_suite_ref(std::string_view ref);
// A baseline named by a suite is found relative to the suite's file.
[[nodiscard]] Baseline load_baseline_ref(std::string_view ref,
                                         const std::filesystem::path& relative_to = {});

// "quick, acceptance, ..." for error messages and --help.
[[nodiscard]] std::string embedded_suite_names();
[[nodiscard]] std::string embedded_baseline_names();

}  // namespace commcert
