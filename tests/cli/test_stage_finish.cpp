// The end every stage shares (agree_and_finish): every process leaves with the worst status any
// of them reached, and meta.json says so.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/stage_session.hpp"
#include "comm/control_plane.hpp"
#include "core/errors.hpp"
#include "core/json.hpp"
#include "core/run_output.hpp"
#include "temp_directory.hpp"

namespace commcert {
namespace {

// This process and one peer whose contribution to every all-reduce is scripted.
class OnePeerControlPlane final : public ControlPlane {
 public:
  explicit OnePeerControlPlane(double peer_value) : peer_value_(peer_value) {}
  [[nodiscard]] int process_index() const override { return 0; }
  [[nodiscard]] int process_count() const override { return 2; }
  std::vector<std::string> all_gather(const std::string& mine) override { return {mine, mine}; }
  std::string broadcast_from_root(const std::string& value) override { return value; }
  void all_reduce_max(std::span<double> values) override {
    for (double& value : values)
      value = std::max(value, peer_value_);
  }
  std::vector<std::vector<double>> gather_to_root(std::span<const double> mine) override {
    return {std::vector<double>(mine.begin(), mine.end())};
  }
  void barrier() override {}
  [[nodiscard]] bool has_side_channel() const override { return true; }
  void post_notice(std::span<const std::int64_t>) override {}
  std::optional<WatchdogNotice> poll_notice() override { return std::nullopt; }
  [[noreturn]] void abort_job(int) noexcept override { std::abort(); }

 private:
  double peer_value_;
};

Json read_meta(const RunOutput& output) {
  std::ifstream in(output.meta_path());
  std::stringstream text;
  text << in.rdbuf();
  return Json::parse(text.str());
}

struct Case {
  ExitCode mine;
  ExitCode peer;
  ExitCode agreed;
  const char* status;
};

TEST(AgreeAndFinish, EveryProcessLeavesWithTheWorstStatusAndMetaSaysSo) {
  const std::vector<Case> cases{
      {ExitCode::kOk, ExitCode::kOk, ExitCode::kOk, "ok"},
      {ExitCode::kOk, ExitCode::kFailed, ExitCode::kFailed, "fail"},
      {ExitCode::kFailed, ExitCode::kOk, ExitCode::kFailed, "fail"},
      {ExitCode::kFailed, ExitCode::kError, ExitCode::kError, "error"},
      {ExitCode::kTimeout, ExitCode::kError, ExitCode::kTimeout, "timeout"},
  };
  for (const auto& c : cases) {
    test_support::TempDirectory dir;
    RunOutput output(dir.path(), "run", true);
    OnePeerControlPlane control(to_int(c.peer));
    const int agreed =
        agree_and_finish(control, nullptr, output, to_int(c.mine), false, std::nullopt);
    EXPECT_EQ(agreed, to_int(c.agreed)) << to_int(c.mine) << " vs " << to_int(c.peer);
    const Json meta = read_meta(output);
    EXPECT_EQ(meta.at("status"), c.status);
    EXPECT_EQ(meta.at("exit_code"), to_int(c.agreed));
    EXPECT_EQ(meta.at("interrupted"), false);
    EXPECT_TRUE(meta.contains("end_time"));
  }
}

TEST(AgreeAndFinish, AnInterruptedRunSaysSoInMeta) {
  test_support::TempDirectory dir;
  RunOutput output(dir.path(), "run", true);
  OnePeerControlPlane control(0);
  EXPECT_EQ(agree_and_finish(control, nullptr, output, 0, true, std::nullopt), 0);
  EXPECT_EQ(read_meta(output).at("interrupted"), true);
}

}  // namespace
}  // namespace commcert
