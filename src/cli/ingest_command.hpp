#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/command.hpp"

namespace commcert {

// `commcert ingest LOG... [--out DIR] [--run-id ID] [--collective NAME] [--node NAME]...`:
// nccl-tests logs and DCGM diagnostics (dcgmi diag -j) become one commcert run directory
// (records.jsonl, meta.json) that certify, compare and history read like any other
// (docs/ingest.md). Each file that does not name the node it ran on (a DCGM diagnostic, an
// nccl-tests log without `# Rank ... on HOST` lines) takes the next --node, in order. Exit status:
// 0 every test and row read; 1 records written, but some lines were unreadable, a test was refused
// or cut off; 2 usage, or nothing in the logs could be read.
class IngestCommand final : public Command {
 public:
  [[nodiscard]] std::string_view name() const override { return "ingest"; }
  [[nodiscard]] std::string_view summary() const override {
    return "Turn nccl-tests logs into commcert records that certify and compare can judge";
  }
  void configure(CLI::App& app) override;
  int run(Invocation& invocation) override;

 private:
  struct Flags {
    std::vector<std::string> logs;
    std::string out = "results";
    std::optional<std::string> run_id;
    std::optional<std::string> collective;
    std::vector<std::string> nodes;  // --node, one per file that names no node, in order
  };

  Flags flags_;
};

}  // namespace commcert
