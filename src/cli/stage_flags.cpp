#include "cli/stage_flags.hpp"

#include <utility>

#include "core/errors.hpp"
#include "core/units.hpp"

namespace commcert {

StageFlags::StageFlags(StageFlagSpec spec) : spec_(std::move(spec)) {
  if (spec_.iterations) iterations_ = spec_.iterations->value;
  if (spec_.warmup) warmup_ = spec_.warmup->value;
  if (spec_.gpus_per_process) gpus_per_process_ = *spec_.gpus_per_process;
  timeout_ = spec_.timeout;
}

void StageFlags::add_to(CLI::App& app) {
  if (spec_.iterations) {
    app.add_option("-n,--iterations", iterations_, spec_.iterations->help)
        ->check(CLI::Range(1, spec_.iterations->max))
        ->capture_default_str();
  }
  if (spec_.warmup) {
    app.add_option("-w,--warmup", warmup_, spec_.warmup->help)
        ->check(CLI::Range(0, spec_.warmup->max))
        ->capture_default_str();
  }
  if (spec_.gpus_per_process) {
    app.add_option("-g,--ngpus", gpus_per_process_, "GPUs per process (0 = every visible GPU)")
        ->check(CLI::Range(0, 64))
        ->capture_default_str();
  }
  app.add_option("-T,--timeout", timeout_, spec_.timeout_help)
      ->envname("COMMCERT_TIMEOUT")
      ->capture_default_str();
  add_stage_options(app, output_);
}

double StageFlags::timeout_s() const {
  const double seconds = parse_duration_seconds(timeout_, "-T/--timeout");
  if (!(seconds > 0)) {
    throw UsageError(
        "-T/--timeout: must be longer than 0 s" +
        (spec_.zero_timeout_note.empty() ? std::string() : " (" + spec_.zero_timeout_note + ")"));
  }
  return seconds;
}

void StageFlags::validate_output() const {
  validate_stage_options(output_);
}

}  // namespace commcert
