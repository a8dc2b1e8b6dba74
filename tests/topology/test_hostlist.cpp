// Hostlist expressions as Slurm writes them: ranges, padding, cross products, exact names, the
// size bound at its limit and one past it, and every malformed expression's message.
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "topology/hostlist.hpp"

namespace commcert {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> expand(std::string_view expression) {
  return expand_hostlist(expression, "topology.conf:7");
}

// The message expand_hostlist throws for `expression`; empty if it throws none.
std::string error_of(std::string_view expression, std::size_t limit = kMaxHostlistNames) {
  try {
    (void)expand_hostlist(expression, "topology.conf:7", limit);
  } catch (const UsageError& error) {
    return error.what();
  }
  return "";
}

TEST(HostlistTest, KeepsTheZeroPaddingOfARange) {
  const std::vector<std::string> names = expand("gpu[001-010]");
  ASSERT_EQ(names.size(), 10u);
  EXPECT_EQ(names.front(), "gpu001");
  EXPECT_EQ(names[8], "gpu009");
  EXPECT_EQ(names.back(), "gpu010");
  EXPECT_THAT(expand("gpu[001-032]").back(), "gpu032");
}

TEST(HostlistTest, ExpandsListsOfRangesInTheOrderWritten) {
  EXPECT_THAT(expand("node[1-3,7,10-12]"),
              ElementsAre("node1", "node2", "node3", "node7", "node10", "node11", "node12"));
  EXPECT_THAT(expand("node[10-12,1]"), ElementsAre("node10", "node11", "node12", "node1"));
}

TEST(HostlistTest, PadsToTheWidthOfTheLowerBoundAsSlurmDoes) {
  EXPECT_THAT(expand("n[8-10]"), ElementsAre("n8", "n9", "n10"));
  EXPECT_THAT(expand("n[08-10]"), ElementsAre("n08", "n09", "n10"));
  EXPECT_THAT(expand("n[1-010]").back(), "n10");
  EXPECT_THAT(expand("n[098-100]"), ElementsAre("n098", "n099", "n100"));
  EXPECT_THAT(expand("n[5]"), ElementsAre("n5"));
  EXPECT_THAT(expand("n[007]"), ElementsAre("n007"));
}

TEST(HostlistTest, ExpandsSeveralBracketsAsACrossProductLeftmostSlowest) {
  EXPECT_THAT(expand("a[1-2]b[3-4]"), ElementsAre("a1b3", "a1b4", "a2b3", "a2b4"));
  EXPECT_THAT(expand("rack[1-2]-gpu[01-02]-ib"),
              ElementsAre("rack1-gpu01-ib", "rack1-gpu02-ib", "rack2-gpu01-ib", "rack2-gpu02-ib"));
}

TEST(HostlistTest, ReadsCommaSeparatedTermsOutsideBrackets) {
  EXPECT_THAT(expand("n1,n2,gpu[01-02]"), ElementsAre("n1", "n2", "gpu01", "gpu02"));
  EXPECT_THAT(expand("login1"), ElementsAre("login1"));
  EXPECT_THAT(expand("[1-2]x"), ElementsAre("1x", "2x"));
}

TEST(HostlistTest, KeepsNamesExactSoPrefixesStayDistinct) {
  const std::vector<std::string> names = expand("node1,node10,node100,node[1,10,100]");
  EXPECT_THAT(names, ElementsAre("node1", "node10", "node100", "node1", "node10", "node100"));
  const std::set<std::string> distinct(names.begin(), names.end());
  EXPECT_EQ(distinct.size(), 3u);
  EXPECT_THAT(expand("gpu.rack-1_a"), ElementsAre("gpu.rack-1_a"));
  EXPECT_THAT(expand("gpu-a[1,10],xn1,n1,node1.cluster.local,node1"),
              ElementsAre("gpu-a1", "gpu-a10", "xn1", "n1", "node1.cluster.local", "node1"));
}

TEST(HostlistTest, ExpandsExactlyTheLimitAndRefusesOneMore) {
  EXPECT_EQ(expand_hostlist("n[1-3]", "x", 3).size(), 3u);
  EXPECT_THAT(error_of("n[1-4]", 3), HasSubstr("expands to more than 3 names"));
  EXPECT_EQ(expand_hostlist("n[1-2],m1", "x", 3).size(), 3u);
  EXPECT_THAT(error_of("n[1-2],m[1-2]", 3), HasSubstr("more than 3 names"));
  EXPECT_EQ(expand_hostlist("a[1-3]b", "x", 3).size(), 3u);
  EXPECT_THAT(error_of("a[1-2]b[1-2]", 3), HasSubstr("more than 3 names"));
  EXPECT_THAT(error_of("a,b,c,d", 3), HasSubstr("more than 3 names"));
}

TEST(HostlistTest, ExpandsAMillionNamesAndRefusesAMillionAndOne) {
  const std::vector<std::string> names = expand("n[1-1000000]");
  ASSERT_EQ(names.size(), kMaxHostlistNames);
  EXPECT_EQ(names.back(), "n1000000");
  EXPECT_THAT(error_of("n[0-1000000]"),
              HasSubstr("topology.conf:7: hostlist 'n[0-1000000]': expands to more than "
                        "1000000 names"));
  EXPECT_EQ(expand("a[1-1000]b[1-1000]").size(), kMaxHostlistNames);
  EXPECT_THAT(error_of("a[1-1000]b[1-1001]"), HasSubstr("more than 1000000 names"));
  EXPECT_THAT(error_of("n[1-1000000],m"), HasSubstr("more than 1000000 names"));
}

TEST(HostlistTest, RefusesAbsurdRangesWithoutAllocatingThem) {
  EXPECT_THAT(error_of("n[1-999999999]"), HasSubstr("more than 1000000 names"));
  EXPECT_THAT(error_of("n[0-18446744073709551615]"), HasSubstr("more than 1000000 names"));
  EXPECT_THAT(error_of("a[1-100000]b[1-100000]c[1-100000]"), HasSubstr("more than"));
  // A bound written with a thousand zeros would make names a thousand characters long: the
  // first name is refused before the others are made.
  EXPECT_THAT(error_of("n[" + std::string(1000, '0') + "1-500000]"),
              HasSubstr("longer than 64 characters"));
}

TEST(HostlistTest, RefusesTheLargestNumberPlusOne) {
  EXPECT_EQ(expand("n[18446744073709551615]").front(), "n18446744073709551615");
  EXPECT_THAT(error_of("n[18446744073709551616]"), HasSubstr("too large a number"));
}

struct MalformedCase {
  std::string expression;
  std::string message;
};

class MalformedHostlistTest : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(MalformedHostlistTest, IsRefusedNamingFileLineAndExpression) {
  const std::string message = error_of(GetParam().expression);
  EXPECT_THAT(message, HasSubstr("topology.conf:7")) << GetParam().expression;
  EXPECT_THAT(message, HasSubstr(GetParam().message)) << GetParam().expression;
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MalformedHostlistTest,
    ::testing::Values(
        MalformedCase{"", "hostlist '': empty"}, MalformedCase{"gpu[1-3", "'[' without ']'"},
        MalformedCase{"gpu1-3]", "']' without '['"},
        MalformedCase{"gpu[[1-3]]", "'[' inside brackets"},
        MalformedCase{"gpu[1-3]]", "']' without '['"}, MalformedCase{"gpu[]", "empty brackets"},
        MalformedCase{"gpu[3-1]", "range 3-1 is reversed"},
        MalformedCase{"gpu[010-009]", "range 010-009 is reversed"},
        MalformedCase{"gpu[1-]", "'1-' is not a number"},
        MalformedCase{"gpu[-1]", "'-1' is not a number"},
        MalformedCase{"gpu[a-b]", "'a-b' is not a number"},
        MalformedCase{"gpu[1-2-3]", "'1-2-3' is not a number"},
        MalformedCase{"gpu[ 1]", "' 1' is not a number"},
        MalformedCase{"gpu[+1]", "'+1' is not a number"},
        MalformedCase{"gpu[1,,3]", "an empty range"}, MalformedCase{"gpu[1,]", "an empty range"},
        MalformedCase{"n1,,n2", "an empty name"}, MalformedCase{",n1", "an empty name"},
        MalformedCase{"n1,", "an empty name"}, MalformedCase{"gpu 1", "invalid node name 'gpu 1'"},
        MalformedCase{"-gpu[1-2]", "must not start with '-' or '.'"},
        MalformedCase{"gpu[1-2]/ib", "only letters, digits"},
        MalformedCase{"gpu\n1", "invalid node name"}));

TEST(HostlistTest, EscapesControlCharactersInItsMessage) {
  const std::string message = error_of("gpu[1\n");
  EXPECT_THAT(message, HasSubstr("gpu[1\\n"));
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace commcert
