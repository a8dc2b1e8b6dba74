#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "core/split.hpp"

namespace commcert {
namespace {

using Pieces = std::vector<std::string_view>;

TEST(SplitAt, SplitsAtEverySeparator) {
  EXPECT_EQ(split_at("write_bw,read_bw,write_lat"), (Pieces{"write_bw", "read_bw", "write_lat"}));
  EXPECT_EQ(split_at("ce"), (Pieces{"ce"}));
  EXPECT_EQ(split_at("allreduce:3:nan", ':'), (Pieces{"allreduce", "3", "nan"}));
}

// A flag's list with an empty entry ("ce,,sm", "ce,", "") must reach its parser, which names it
// as the mistake; dropping it would run something other than what was asked.
TEST(SplitAt, KeepsEmptyPiecesForTheCallerToReport) {
  EXPECT_EQ(split_at("ce,,sm"), (Pieces{"ce", "", "sm"}));
  EXPECT_EQ(split_at("ce,"), (Pieces{"ce", ""}));
  EXPECT_EQ(split_at(",ce"), (Pieces{"", "ce"}));
  EXPECT_EQ(split_at(""), (Pieces{""}));
}

}  // namespace
}  // namespace commcert
