#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace commcert {

// "20261121T233900Z-sweep-3f9a1c": sortable by start time, unique across concurrent runs.
[[nodiscard]] std::string make_run_id(std::string_view command);

// Run ids become directory names: same character rules as node names, up to 128 characters.
void validate_run_id(std::string_view run_id);

// Creates <results_root>/<run_id>/ (and results_root) and returns it. An existing run directory
// is reused, so a later stage of the same run appends to its records; nothing in it is removed.
[[nodiscard]] std::filesystem::path create_run_directory(const std::filesystem::path& results_root,
                                                         std::string_view run_id);

}  // namespace commcert
