#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "core/units.hpp"

namespace commcert {
namespace {

TEST(ParseSize, ReadsBinarySuffixesLikeNcclTests) {
  EXPECT_EQ(parse_size("8"), 8u);
  EXPECT_EQ(parse_size("1K"), 1024u);
  EXPECT_EQ(parse_size("32M"), 32u << 20);
  EXPECT_EQ(parse_size("2g"), 2ull << 30);
  EXPECT_EQ(parse_size("1.5K"), 1536u);
  EXPECT_EQ(parse_size("4MiB"), 4u << 20);
  EXPECT_EQ(parse_size("64KB"), 64u << 10);
}

TEST(ParseSize, RejectsWhatItCannotRead) {
  for (const char* bad : {"", "-1", "+5", "abc", "12Q", "1.2.3M", "nan", "1e400"}) {
    EXPECT_THROW((void)parse_size(bad, "-b"), UsageError) << bad;
  }
}

}  // namespace
}  // namespace commcert
