#include "cli/baseline_command.hpp"
#include "cli/burn_command.hpp"
#include "cli/certify_command.hpp"
#include "cli/command.hpp"
#include "cli/compare_command.hpp"
#include "cli/health_command.hpp"
#include "cli/history_command.hpp"
#include "cli/ingest_command.hpp"
#include "cli/links_command.hpp"
#include "cli/membw_command.hpp"
#include "cli/p2p_command.hpp"
#include "cli/report_command.hpp"
#include "cli/run_command.hpp"
#include "cli/sweep_command.hpp"

namespace commcert {

std::vector<std::unique_ptr<Command>> make_commands() {
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(std::make_unique<RunCommand>());
  commands.push_back(std::make_unique<SweepCommand>());
  commands.push_back(std::make_unique<HealthCommand>());
  commands.push_back(std::make_unique<BurnCommand>());
  commands.push_back(std::make_unique<MembwCommand>());
  commands.push_back(std::make_unique<LinksCommand>());
  commands.push_back(std::make_unique<P2pCommand>());
  commands.push_back(std::make_unique<CertifyCommand>());
  commands.push_back(std::make_unique<ReportCommand>());
  commands.push_back(std::make_unique<BaselineCommand>());
  commands.push_back(std::make_unique<HistoryCommand>());
  commands.push_back(std::make_unique<CompareCommand>());
  commands.push_back(std::make_unique<IngestCommand>());
  return commands;
}

}  // namespace commcert
