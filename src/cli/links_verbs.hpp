#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli/links_command.hpp"
#include "cli/stage_session.hpp"
#include "links/verbs_link_transport.hpp"

namespace commcert {

// The verbs transport of one process of `links`, and the rails every process agreed on.
struct VerbsSetup {
  std::unique_ptr<VerbsLinkTransport> transport;  // null: this process sits out
  std::vector<int> rail_of_rank;                  // by global rank; -1 sits out
  std::string problem;      // why this process sits out when it has a rail to test (its record)
  std::string unavailable;  // set when no process can test: the stage is skipped everywhere
};

// Collective: every process calls it. Each finds its rail (NIC<->GPU affinity, or local rank i
// on NIC i), opens the device and checks its port; the rails are then gathered from every process.
[[nodiscard]] VerbsSetup set_up_verbs(StageSession& session, const LinksSettings& settings);

}  // namespace commcert
