#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/library_report.hpp"
#include "core/build_info.hpp"
#include "core/errors.hpp"
#include "core/printable.hpp"

namespace commcert {
namespace {

// One line whatever the message quotes: a value given on the command line or read from a file
// (a node name with a newline) is escaped, so a bad input is always one line of error.
void print_error(std::string_view prefix, std::string_view message) {
  if (launcher_rank_hint() == 0) fmt::print(stderr, "{}: error: {}\n", prefix, printable(message));
}

// Under a launcher only rank 0 prints a usage error. Any rank's exit makes mpirun end the job, so
// a rank that exits first could cut rank 0 off before its one line reached the launcher (under
// load rank 0 may not even have parsed yet). The other ranks wait; mpirun ends the job as soon as
// rank 0 exits, so the wait does not lengthen the failed run.
int usage_error_exit() {
  std::fflush(nullptr);
  if (launcher_rank_hint() != 0) std::this_thread::sleep_for(std::chrono::seconds(5));
  return to_int(ExitCode::kUsage);
}

// Each subcommand's parser and the command it runs.
using Dispatch = std::vector<std::pair<CLI::App*, Command*>>;

// The libraries are looked up only when --version is asked for: each lookup loads one.
std::string version_text() {
  const std::string cuda = build_info::kWithCuda
                               ? fmt::format("CUDA {} (archs {})", build_info::kCudaMajor,
                                             build_info::kCudaArchitectures)
                               : std::string("no CUDA");
  return fmt::format("commcert {} ({}, {}; {}, {})\nlibraries:\n{}", build_info::kVersion,
                     build_info::kGitDescribe, build_info::kBuildType, cuda,
                     build_info::kWithMpi ? "MPI plugin" : "no MPI",
                     format_library_lines(runtime_libraries()));
}

// A command line CLI11 could not parse: a subcommand's help, or a usage error naming the commands
// when none was given.
int parse_error_exit(const CLI::ParseError& error, const Dispatch& dispatch) {
  // Help on a subcommand arrives as CallForHelp from that subcommand's parser too.
  if (error.get_exit_code() == 0) {
    for (const auto& [sub, command] : dispatch) {
      if (sub->parsed() && launcher_rank_hint() == 0) std::fputs(sub->help().c_str(), stdout);
    }
    return to_int(ExitCode::kOk);
  }
  // Without a command CLI11 says only "A subcommand is required" (or that a word was not
  // expected): name the words that would have worked.
  const bool no_command = std::none_of(dispatch.begin(), dispatch.end(),
                                       [](const auto& entry) { return entry.first->parsed(); });
  if (no_command) {
    std::string words;
    for (const auto& [sub, command] : dispatch)
      words += fmt::format("{}{}", words.empty() ? "" : ", ", command->name());
    print_error("commcert",
                fmt::format("{}: the command is one of {} (commcert --help)", error.what(), words));
    return usage_error_exit();
  }
  print_error("commcert", error.what());
  return usage_error_exit();
}

}  // namespace

int launcher_rank_hint() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (const char* value = std::getenv(name); value && *value) return std::atoi(value);
  }
  return 0;
}

int run_cli(int argc, char** argv) {
  CLI::App app{"commcert: certify GPU nodes before they join the schedulable pool", "commcert"};
  app.require_subcommand(1);
  // The libraries are looked up only when --version is asked for: each lookup loads one.
  app.set_version_flag("--version", version_text);
  auto commands = make_commands();
  Dispatch dispatch;
  for (auto& command : commands) {
    CLI::App* sub =
        app.add_subcommand(std::string(command->name()), std::string(command->summary()));
    command->configure(*sub);
    dispatch.emplace_back(sub, command.get());
  }

  Invocation invocation{&argc, &argv, {}};
  for (int i = 0; i < argc; ++i)
    invocation.arguments.emplace_back(argv[i]);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    if (launcher_rank_hint() == 0) std::fputs(app.help().c_str(), stdout);
    return to_int(ExitCode::kOk);
  } catch (const CLI::CallForAllHelp&) {
    if (launcher_rank_hint() == 0)
      std::fputs(app.help("", CLI::AppFormatMode::All).c_str(), stdout);
    return to_int(ExitCode::kOk);
  } catch (const CLI::CallForVersion& version) {
    if (launcher_rank_hint() == 0) fmt::print("{}", version.what());
    return to_int(ExitCode::kOk);
  } catch (const CLI::ParseError& error) {
    return parse_error_exit(error, dispatch);
  } catch (const UsageError& error) {
    print_error("commcert", error.what());
    return usage_error_exit();
  }

  for (auto& [sub, command] : dispatch) {
    if (!sub->parsed()) continue;
    const std::string prefix = fmt::format("commcert {}", command->name());
    try {
      return command->run(invocation);
    } catch (const UsageError& error) {
      print_error(prefix, error.what());
      return usage_error_exit();
    } catch (const ReportedFailure& error) {
      return exit_code_for_error(error);  // the failing rank said it and recorded it
    } catch (const std::exception& error) {
      fmt::print(stderr, "{}: error: {}\n", prefix, printable(error.what()));
      return exit_code_for_error(error);
    }
  }
  return usage_error_exit();
}

}  // namespace commcert
