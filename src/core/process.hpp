#pragma once

#include <string>
#include <vector>

namespace commcert {

struct ProcessResult {
  int exit_code = -1;  // -1 when it could not start, was killed or timed out
  bool timed_out = false;
  std::string output;  // stdout
  std::string error;   // stderr, or why it could not start
};

// Runs argv[0] (looked up in PATH) with exactly these arguments: no shell, so nothing in an
// argument (a node name, a reason) can be interpreted. Kills it after `timeout_seconds`.
[[nodiscard]] ProcessResult run_process(const std::vector<std::string>& argv,
                                        double timeout_seconds);

}  // namespace commcert
