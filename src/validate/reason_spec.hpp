#pragma once

#include <string_view>

namespace commcert {

// What a reason does to its node. Quarantine dominates inconclusive, which dominates a warning.
enum class Effect { kWarn, kInconclusive, kQuarantine };

// DCGM's vocabulary, in increasing order of what it takes to return the node to the pool:
// monitor (usable, watch it), unknown (evidence missing), triage (find the cause), reset (drain
// and reset the GPU or node), isolate (drain; the part needs repair or replacement).
enum class Severity { kNone, kMonitor, kUnknown, kTriage, kReset, kIsolate };

[[nodiscard]] std::string_view to_string(Effect effect);
[[nodiscard]] std::string_view to_string(Severity severity);

// One row of the reason catalog: the text, JSON, NHC line and (later) the Slurm drain reason
// are all rendered from it, so they say the same thing.
struct ReasonSpec {
  std::string_view code;  // stable id, e.g. "collective.wrong_data"
  Effect effect;
  Severity severity;
  std::string_view message;  // template; {name} is replaced by the finding's field `name`
  std::string_view action;   // what a technician does next
};

}  // namespace commcert
