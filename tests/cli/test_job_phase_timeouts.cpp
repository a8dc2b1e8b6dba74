#include <gtest/gtest.h>

#include "cli/process_group.hpp"
#include "core/errors.hpp"

namespace commcert {
namespace {

TEST(EndOfJobTimeout, DefaultsWhenUnsetAndReadsDurations) {
  EXPECT_DOUBLE_EQ(end_of_job_timeout_s(std::nullopt), kDefaultEndOfJobTimeoutS);
  EXPECT_DOUBLE_EQ(end_of_job_timeout_s("3"), 3.0);
  EXPECT_DOUBLE_EQ(end_of_job_timeout_s("90s"), 90.0);
  EXPECT_DOUBLE_EQ(end_of_job_timeout_s("2m"), 120.0);
  EXPECT_DOUBLE_EQ(end_of_job_timeout_s("500ms"), 0.5);
}

TEST(EndOfJobTimeout, AcceptsUpToADayAndNothingBeyond) {
  EXPECT_DOUBLE_EQ(end_of_job_timeout_s("24h"), 86400.0);
  EXPECT_DOUBLE_EQ(end_of_job_timeout_s("86399"), 86399.0);
  EXPECT_THROW((void)end_of_job_timeout_s("86401"), UsageError);
  EXPECT_THROW((void)end_of_job_timeout_s("2600000h"), UsageError);
}

TEST(EndOfJobTimeout, RefusesWhatIsNoPositiveFiniteDurationNamingTheVariable) {
  for (const char* bad : {"0", "-5", "nan", "inf", "", "soon", "5 parsecs", "1e999"}) {
    try {
      (void)end_of_job_timeout_s(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& error) {
      EXPECT_NE(std::string(error.what()).find("COMMCERT_END_TIMEOUT"), std::string::npos);
    }
  }
}

TEST(StartUpTimeout, DefaultsToFiveMinutesSoLargeJobsCanStart) {
  EXPECT_DOUBLE_EQ(start_up_timeout_s(std::nullopt), kDefaultStartUpTimeoutS);
  EXPECT_DOUBLE_EQ(kDefaultStartUpTimeoutS, 300.0);
  EXPECT_DOUBLE_EQ(start_up_timeout_s("3"), 3.0);
  EXPECT_DOUBLE_EQ(start_up_timeout_s("10m"), 600.0);
}

TEST(StartUpTimeout, AcceptsUpToADayAndNothingBeyond) {
  EXPECT_DOUBLE_EQ(start_up_timeout_s("86399"), 86399.0);
  EXPECT_DOUBLE_EQ(start_up_timeout_s("86400"), 86400.0);
  EXPECT_THROW((void)start_up_timeout_s("86401"), UsageError);
}

TEST(StartUpTimeout, RefusesWhatIsNoPositiveFiniteDurationNamingItsOwnVariable) {
  for (const char* bad : {"0", "-1", "nan", "", "later"}) {
    try {
      (void)start_up_timeout_s(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& error) {
      EXPECT_NE(std::string(error.what()).find("COMMCERT_START_TIMEOUT"), std::string::npos);
      EXPECT_EQ(std::string(error.what()).find("COMMCERT_END_TIMEOUT"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace commcert
