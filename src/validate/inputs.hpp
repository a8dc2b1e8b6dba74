#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "validate/evidence.hpp"
#include "validate/verdict.hpp"

namespace commcert {

struct LoadedInputs {
  Evidence evidence;
  std::filesystem::path first_directory;  // where verdict.json goes unless told otherwise
  std::vector<InputNote> notes;           // about runs (meta.json) and paths
};

// Each path is a records file, a run directory (records.jsonl, meta.json) or a results root
// whose immediate subdirectories are run directories. Throws UsageError for a path that does
// not exist or holds no records, and when the inputs name no node at all: an empty result set
// is an error, never a pass.
[[nodiscard]] LoadedInputs load_inputs(const std::vector<std::string>& paths);

}  // namespace commcert
