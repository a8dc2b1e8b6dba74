#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/process.hpp"
#include "topology/topology.hpp"

namespace commcert {

// Where the topology a verdict is judged with comes from (docs/topology.md, "Where commcert takes
// it from"): a file whose format its content shows, or, in a Slurm job, `scontrol show topology`.

enum class TopologyFormat { kSlurm, kIbnetdiscover };

// Slurm's topology.conf and `scontrol show topology` begin every line that is not blank or a
// comment with `SwitchName=` (any case, blanks allowed before `=`); anything else is taken for
// ibnetdiscover's output, whose parser then names the first line it cannot read. A text with
// nothing but blanks and comments is taken for Slurm's (whose parser says it holds no switch).
[[nodiscard]] TopologyFormat detect_topology_format(std::string_view text);

// Reads `text` in the format detect_topology_format finds. Throws UsageError "ORIGIN:LINE: ..."
// as the chosen parser does (slurm_topology.hpp, ibnetdiscover.hpp).
[[nodiscard]] Topology parse_topology(std::string_view text, std::string_view origin);

// parse_topology of a file of at most kMaxTopologyFileBytes; a file that cannot be read is a
// UsageError naming it.
[[nodiscard]] Topology read_topology_file(const std::filesystem::path& path);

// Runs a command (argv, timeout in seconds): run_process, or a stand-in in tests.
using TopologyCommandRunner =
    std::function<ProcessResult(const std::vector<std::string>& argv, double timeout_s)>;

// How long `scontrol show topology` may take: it asks slurmctld, which answers in well under a
// second; its own message timeout is 10 s by default.
inline constexpr double kScontrolTopologyTimeoutS = 30;

// The topology found, or why none was.
struct FoundTopology {
  std::optional<Topology> topology;
  std::string source;       // the file, or "scontrol show topology"; empty when none
  std::string unavailable;  // looked for and not found: one line saying why; empty otherwise
};

// `file` when given (read_topology_file; its UsageErrors propagate: a malformed file the user
// named is an error before anything runs). Without one, in a Slurm job (`slurm_job_id` set and
// not empty), the output of `scontrol show topology` run through `run`: when scontrol cannot be
// run, fails, times out, prints nothing or prints what is not a topology, there is none and
// `unavailable` says why. Outside Slurm, none and nothing to say.
[[nodiscard]] FoundTopology find_topology(const std::optional<std::string>& file,
                                          const char* slurm_job_id,
                                          const TopologyCommandRunner& run = run_process);

}  // namespace commcert
