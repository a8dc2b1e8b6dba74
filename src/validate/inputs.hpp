#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "validate/evidence.hpp"
#include "validate/record_reader.hpp"
#include "validate/verdict.hpp"

namespace commcert {

struct LoadedInputs {
  Evidence evidence;
  std::filesystem::path first_directory;  // where verdict.json goes unless told otherwise
  std::vector<InputNote> notes;           // about runs (meta.json) and paths
};

struct InputOptions {
  // Judge the evidence of runs that never finished (meta.json or suite.json status `running`)
  // like that of finished ones; every node it touches carries a warning saying so.
  bool allow_partial = false;
  // The caller is the `commcert run` that writes these results: its own suite.json says
  // `running` until its verdict is written, which does not make the run unfinished.
  bool own_run = false;
  // Shown each record as it is read (RecordReader::observe); none when empty.
  RecordReader::RecordObserver on_record{};
};

// Each path is a records file, a run directory (records.jsonl, meta.json) or a results root
// whose immediate subdirectories are run directories. Throws UsageError for a path that does
// not exist or holds no records, and when the inputs name no node at all: an empty result set
// is an error, never a pass. A meta.json or suite.json field of the wrong type is a UsageError
// naming the file and the field.
[[nodiscard]] LoadedInputs load_inputs(const std::vector<std::string>& paths,
                                       const InputOptions& options = {});

}  // namespace commcert
