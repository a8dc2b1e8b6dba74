// How a stage ends on an error (StageSession::run), the same for every stage: what the user can
// fix before anything is written goes to the CLI edge; anything else is recorded where it
// happened and becomes exit status 3 through the one mapping from errors to statuses.
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "cli/stage_session.hpp"
#include "comm/mpi_session.hpp"
#include "comm/watchdog.hpp"
#include "core/api_error.hpp"
#include "core/errors.hpp"
#include "core/json.hpp"
#include "scripted_communicator.hpp"
#include "temp_directory.hpp"

namespace commcert {
namespace {

constexpr const char* kRunId = "20261126T140000Z-test-abcdef";

std::vector<Json> records_of(const std::filesystem::path& run) {
  std::vector<Json> records;
  std::ifstream in(run / "records.jsonl");
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) records.push_back(Json::parse(line));
  }
  return records;
}

Json meta_of(const std::filesystem::path& run) {
  std::ifstream in(run / "meta.json");
  std::stringstream text;
  text << in.rdbuf();
  return Json::parse(text.str());
}

// One process without MPI (the plugin pointed at nothing), writing into a fresh results root.
class StageErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {kMpiPluginVariable, "COMMCERT_FAULT"}) {
      const char* value = std::getenv(name);
      saved_.emplace_back(name, value ? std::optional<std::string>(value) : std::nullopt);
    }
    ::setenv(kMpiPluginVariable, (results_.path() / "no-such-plugin.so").c_str(), 1);
    ::unsetenv("COMMCERT_FAULT");
    options_.results_root = (results_.path() / "results").string();
    options_.run_id = kRunId;
    options_.node_name = "nodeA";
    options_.quiet = true;
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name, value->c_str(), 1);
      } else {
        ::unsetenv(name);
      }
    }
  }

  [[nodiscard]] std::filesystem::path run_directory() const {
    return std::filesystem::path(options_.results_root) / kRunId;
  }

  test_support::TempDirectory results_;
  StageOptions options_;
  int argc_ = 1;
  char program_[9] = "commcert";
  char* argv_storage_[2] = {program_, nullptr};
  char** argv_ = argv_storage_;
  Invocation invocation_{&argc_, &argv_, {"commcert", "burn"}};
  std::vector<std::pair<const char*, std::optional<std::string>>> saved_;
};

TEST_F(StageErrors, WorkThatSucceedsReturnsItsStatus) {
  StageSession session(invocation_, "burn", "burn", options_, 30.0);
  EXPECT_EQ(session.run([] { return 1; }), 1);
}

TEST_F(StageErrors, AnErrorAfterTheRunOpensIsRecordedAsThisStagesErrorAndEndsWithStatus3) {
  StageSession session(invocation_, "burn", "burn", options_, 30.0);
  try {
    (void)session.run([&]() -> int {
      session.start({StageSlot{}}, GpuRuntimeInfo{}, Json::object(), {});
      throw RuntimeFailure("the GPU fell off the bus");
    });
    FAIL() << "no exception";
  } catch (const ReportedFailure& error) {
    EXPECT_EQ(exit_code_for_error(error), 3);
    EXPECT_STREQ(error.what(), "the GPU fell off the bus");
  }
  const auto records = records_of(run_directory());
  ASSERT_EQ(records.size(), 2u);  // the run record, then the error
  EXPECT_EQ(records[0].at("kind"), "run");
  const Json& error = records[1];
  EXPECT_EQ(error.at("kind"), "burn");
  EXPECT_EQ(error.at("status"), "error");
  EXPECT_EQ(error.at("reason"), "the GPU fell off the bus");
  EXPECT_EQ(error.at("rank"), 0);
  EXPECT_EQ(error.at("host"), "nodeA");
  EXPECT_FALSE(error.contains("backend"));  // a stage without a data plane
  const Json meta = meta_of(run_directory());
  EXPECT_EQ(meta.at("status"), "error");
  EXPECT_EQ(meta.at("exit_code"), 3);
  EXPECT_FALSE(meta.at("end_time").is_null());
  EXPECT_EQ(meta.at("error"), Json({{"command", "burn"},
                                    {"process", 0},
                                    {"rank", 0},
                                    {"node", "nodeA"},
                                    {"reason", "the GPU fell off the bus"}}));
}

// Two GPUs driven by one process (sweep -g 2, burn -g 0): CUDA ordinals 4 and 6, node-wide
// indices 1 and 3.
std::vector<StageSlot> two_gpu_slots() {
  std::vector<StageSlot> slots(2);
  for (int i = 0; i < 2; ++i) {
    GpuIdentity gpu;
    gpu.index = 1 + 2 * i;
    gpu.uuid = "GPU-" + std::to_string(i);
    gpu.pci_bus_id = "0000:1" + std::to_string(i) + ":00.0";
    slots[static_cast<std::size_t>(i)].device = "GPU " + std::to_string(gpu.index);
    slots[static_cast<std::size_t>(i)].gpu = gpu;
    slots[static_cast<std::size_t>(i)].cuda_device = 4 + 2 * i;
  }
  return slots;
}

ApiFailure failed_call_on_device(int device) {
  ApiError error;
  error.api = "CUDA";
  error.call = "cudaStreamSynchronize(stream)";
  error.where = "src/comm/nccl_communicator.cpp:1";
  error.code = 700;
  error.code_name = "cudaErrorIllegalAddress";
  error.device = device;
  return ApiFailure(error);
}

TEST_F(StageErrors, AProcessDrivingSeveralGpusRecordsTheErrorOnTheRankWhoseGpuFailed) {
  StageSession session(invocation_, "sweep", "collective", options_, 30.0);
  EXPECT_THROW((void)session.run([&]() -> int {
    session.identify(two_gpu_slots());
    session.open(GpuRuntimeInfo{}, Json::object(), {}, BackendChoice{"nccl", "requested", ""});
    throw failed_call_on_device(6);
  }),
               ReportedFailure);
  const auto records = records_of(run_directory());
  ASSERT_EQ(records.size(), 2u);
  const Json& error = records[1];
  EXPECT_EQ(error.at("status"), "error");
  EXPECT_EQ(error.at("rank"), 1);
  EXPECT_EQ(error.at("local_rank"), 1);
  EXPECT_EQ(error.at("gpu").at("index"), 3);
  EXPECT_EQ(error.at("gpu").at("uuid"), "GPU-1");
  EXPECT_EQ(error.at("api_error").at("device"), 6);
  EXPECT_EQ(meta_of(run_directory()).at("error").at("rank"), 1);
}

TEST(SlotOfError, TheSlotDrivingTheFailedCallsDeviceElseTheProcesssFirst) {
  const auto slots = two_gpu_slots();
  EXPECT_EQ(slot_of_error(failed_call_on_device(4), slots), 0u);
  EXPECT_EQ(slot_of_error(failed_call_on_device(6), slots), 1u);
  EXPECT_EQ(slot_of_error(failed_call_on_device(5), slots), 0u);  // not one of ours
  EXPECT_EQ(slot_of_error(RuntimeFailure("no device named"), slots), 0u);
  EXPECT_EQ(slot_of_error(failed_call_on_device(6), {StageSlot{}}), 0u);
}

TEST_F(StageErrors, AHealthStagesErrorStandsForTheNodeComponent) {
  StageSession session(invocation_, "health", "health", options_, 30.0);
  session.set_failure_component("node");
  EXPECT_THROW((void)session.run([&]() -> int {
    session.start({StageSlot{}}, GpuRuntimeInfo{}, Json::object(), {});
    throw RuntimeFailure("sysfs unreadable");
  }),
               ReportedFailure);
  const auto records = records_of(run_directory());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].at("kind"), "health");
  EXPECT_EQ(records[1].at("component"), "node");
}

TEST_F(StageErrors, ATimeoutRecordCarriesTheComponentAndARecordPerSubjectNamingItsNodes) {
  // The watchdog's timeout ends the process (status 4) after the records are written; the
  // child forked here writes into the same run directory the parent reads.
  const std::string style = GTEST_FLAG_GET(death_test_style);
  GTEST_FLAG_SET(death_test_style, "fast");
  EXPECT_EXIT(
      {
        StageSession session(invocation_, "links", "link", options_, 0.3);
        session.set_failure_component("node");
        session.set_timeout_nodes([](const TimeoutReport&) {
          return std::vector<std::vector<std::string>>{{"nodeA", "nodeB"}, {"nodeC"}};
        });
        (void)session.run([&]() -> int {
          session.start({StageSlot{}}, GpuRuntimeInfo{}, Json::object(), {});
          session.watchdog().set_context("links: round 0 write_bw 4 MiB nodeA->nodeB");
          WatchedSection section(session.guard());
          std::this_thread::sleep_for(std::chrono::seconds(10));
          return 0;
        });
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(4), "timeout");
  GTEST_FLAG_SET(death_test_style, style);
  const auto records = records_of(run_directory());
  ASSERT_EQ(records.size(), 3u);  // the run record, then one timeout per subject
  for (std::size_t i = 1; i < 3; ++i) {
    EXPECT_EQ(records[i].at("status"), "timeout");
    EXPECT_EQ(records[i].at("kind"), "link");
    EXPECT_EQ(records[i].at("component"), "node");
    EXPECT_EQ(records[i].at("operation"), "links: round 0 write_bw 4 MiB nodeA->nodeB");
  }
  EXPECT_EQ(records[1].at("nodes"), Json({"nodeA", "nodeB"}));
  EXPECT_EQ(records[2].at("nodes"), Json({"nodeC"}));
}

TEST_F(StageErrors, TheErrorRecordNamesTheDataPlaneAndItsCommunicatorsAreAborted) {
  test_support::ScriptedCommunicator communicator{1};
  StageSession session(invocation_, "sweep", "collective", options_, 30.0);
  EXPECT_THROW((void)session.run([&]() -> int {
    session.set_data_plane(&communicator);
    session.identify({StageSlot{}});
    session.open(GpuRuntimeInfo{}, Json::object(), {}, BackendChoice{"mpi", "requested", ""});
    throw std::runtime_error("MPI_Allreduce failed");
  }),
               ReportedFailure);
  EXPECT_EQ(communicator.aborts, 1);
  const auto records = records_of(run_directory());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].at("backend"), "mpi");
  EXPECT_EQ(records[1].at("kind"), "collective");
  EXPECT_EQ(records[1].at("backend"), "mpi");
  EXPECT_EQ(meta_of(run_directory()).at("backend").at("name"), "mpi");
}

TEST_F(StageErrors, AUsageErrorBeforeTheRunOpensReachesTheEdgeAndNothingIsWritten) {
  test_support::ScriptedCommunicator communicator{1};
  StageSession session(invocation_, "sweep", "collective", options_, 30.0);
  try {
    (void)session.run([&]() -> int {
      session.set_data_plane(&communicator);
      session.identify({StageSlot{}});
      throw UsageError("--pair-list: no rank runs on node 'node9' in this job");
    });
    FAIL() << "no exception";
  } catch (const ReportedFailure&) {
    FAIL() << "a usage error is the edge's to say";
  } catch (const UsageError& error) {
    EXPECT_EQ(exit_code_for_error(error), 2);
  }
  EXPECT_EQ(communicator.aborts, 0);
  EXPECT_FALSE(std::filesystem::exists(options_.results_root));
}

TEST_F(StageErrors, AUsageErrorOnceTheRunIsOpenIsAFailureOfTheRun) {
  // Something is written already, and one process alone may have met it: it is recorded and
  // the job ends like any other error.
  StageSession session(invocation_, "burn", "burn", options_, 30.0);
  EXPECT_THROW((void)session.run([&]() -> int {
    session.start({StageSlot{}}, GpuRuntimeInfo{}, Json::object(), {});
    throw UsageError("late");
  }),
               ReportedFailure);
  const auto records = records_of(run_directory());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].at("status"), "error");
  EXPECT_EQ(meta_of(run_directory()).at("exit_code"), 3);
}

TEST_F(StageErrors, AnErrorBeforeTheRunOpensIsSaidButNothingIsWritten) {
  test_support::ScriptedCommunicator communicator{1};
  StageSession session(invocation_, "sweep", "collective", options_, 30.0);
  EXPECT_THROW((void)session.run([&]() -> int {
    session.set_data_plane(&communicator);
    throw RuntimeFailure("ncclCommInitRank: unhandled system error");
  }),
               ReportedFailure);
  EXPECT_EQ(communicator.aborts, 1);
  EXPECT_FALSE(std::filesystem::exists(options_.results_root));
}

TEST(ExitCodeForError, UsageIs2AndEveryOtherErrorIs3) {
  EXPECT_EQ(exit_code_for_error(UsageError("x")), 2);
  EXPECT_EQ(exit_code_for_error(RuntimeFailure("x")), 3);
  EXPECT_EQ(exit_code_for_error(ReportedFailure("x")), 3);
  EXPECT_EQ(exit_code_for_error(std::runtime_error("x")), 3);
  EXPECT_EQ(exit_code_for_error(std::bad_alloc()), 3);
}

}  // namespace
}  // namespace commcert
