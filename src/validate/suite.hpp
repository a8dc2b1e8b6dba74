#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace commcert {

// The suite that produced the evidence, as far as the validator needs it: which checks it was
// meant to run, i.e. what a node must show to be certified. The schema is minimal on purpose
// (docs/validator.md "Suite files"); the stage runner extends the same file.
struct Suite {
  std::string path;
  std::string name;
  std::string description;
  std::vector<std::string> required;  // check ids
};

// Throws UsageError "FILE:LINE:COLUMN: key: problem".
[[nodiscard]] Suite load_suite(const std::filesystem::path& path);
[[nodiscard]] Suite parse_suite(std::string_view text, std::string_view origin);

}  // namespace commcert
