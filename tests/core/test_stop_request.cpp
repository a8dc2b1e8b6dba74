#include <csignal>

#include <gtest/gtest.h>

#include "core/stop_request.hpp"

namespace commcert {
namespace {

int g_outer_handler_calls = 0;
extern "C" void count_outer_handler_call(int /*signal*/) {
  ++g_outer_handler_calls;
}

class StopRequestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    stop_request().store(false);
    g_outer_handler_calls = 0;
    previous_interrupt_ = std::signal(SIGINT, count_outer_handler_call);
    previous_terminate_ = std::signal(SIGTERM, count_outer_handler_call);
  }
  void TearDown() override {
    std::signal(SIGINT, previous_interrupt_);
    std::signal(SIGTERM, previous_terminate_);
    stop_request().store(false);
  }

 private:
  void (*previous_interrupt_)(int) = nullptr;
  void (*previous_terminate_)(int) = nullptr;
};

TEST_F(StopRequestTest, InterruptAndTerminateInsideAStageRequestAStopInsteadOfEndingTheProcess) {
  for (const int signal : {SIGINT, SIGTERM}) {
    stop_request().store(false);
    const InterruptsRequestStop interrupts;
    ASSERT_EQ(std::raise(signal), 0);
    EXPECT_TRUE(stop_request().load()) << "signal " << signal;
    EXPECT_EQ(g_outer_handler_calls, 0) << "signal " << signal;
  }
}

TEST_F(StopRequestTest, TheHandlersInPlaceBeforeAreBackAfterTheStage) {
  { const InterruptsRequestStop interrupts; }
  ASSERT_EQ(std::raise(SIGINT), 0);
  ASSERT_EQ(std::raise(SIGTERM), 0);
  EXPECT_EQ(g_outer_handler_calls, 2);
  EXPECT_FALSE(stop_request().load());
}

TEST_F(StopRequestTest, ARequestStaysSetAfterTheStageEnds) {
  {
    const InterruptsRequestStop interrupts;
    ASSERT_EQ(std::raise(SIGTERM), 0);
  }
  EXPECT_TRUE(stop_request().load());
}

}  // namespace
}  // namespace commcert
