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

}  // namespace
}  // namespace commcert
