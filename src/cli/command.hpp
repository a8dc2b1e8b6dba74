#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace commcert {

// The process's arguments, for MPI_Init and for meta.json.
struct Invocation {
  int* argc = nullptr;
  char*** argv = nullptr;
  std::vector<std::string> arguments;
};

// One subcommand: declares its options on its CLI11 subcommand, then runs with them.
class Command {
 public:
  virtual ~Command() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  [[nodiscard]] virtual std::string_view summary() const = 0;
  virtual void configure(CLI::App& app) = 0;
  // After parsing: the option values parsing alone cannot judge (sizes, durations, ranges),
  // checked without side effects so `commcert run` refuses a suite before any stage starts.
  // Throws UsageError naming the flag.
  virtual void check() const {}
  // Returns the process exit status. UsageError and RuntimeFailure propagate to main.
  virtual int run(Invocation& invocation) = 0;
};

// Every subcommand, in the order `commcert --help` lists them (commands.cpp).
[[nodiscard]] std::vector<std::unique_ptr<Command>> make_commands();

// Parses, dispatches, and turns exceptions into exit statuses and one-line errors.
int run_cli(int argc, char** argv);

// The rank the launcher assigned this process (OMPI/PMIx/PMI/Slurm environment), before any
// MPI call: only rank 0 prints usage errors, so a bad flag under mpirun is reported once.
[[nodiscard]] int launcher_rank_hint();

}  // namespace commcert
