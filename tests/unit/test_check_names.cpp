#include <string>

#include <gtest/gtest.h>

#include "bench/collectives.hpp"
#include "validate/checks.hpp"

namespace commcert {
namespace {

// The validator keeps its own list of collective names (it must not link the sweep engine):
// every collective the sweep can record must have a check the validator knows.
TEST(CheckNames, EveryCollectiveTheSweepRecordsHasACheck) {
  for (const auto& info : all_collectives()) {
    const CheckInfo* check = find_check("collective." + std::string(info.name));
    ASSERT_NE(check, nullptr) << info.name;
    EXPECT_EQ(check->kind, CheckKind::kCollective);
    EXPECT_EQ(check->collective, info.name);
  }
}

}  // namespace
}  // namespace commcert
