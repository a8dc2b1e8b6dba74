#include <array>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "comm/fault_injection.hpp"
#include "core/errors.hpp"

namespace commcert {
namespace {

using ::testing::HasSubstr;

bool same(const Fault& a, const Fault& b) {
  return a.kind == b.kind && a.rank == b.rank && a.argument == b.argument && a.peer == b.peer;
}

TEST(ParseFaultPlan, EmptyMeansNoFault) {
  const FaultPlan plan = parse_fault_plan("");
  EXPECT_TRUE(plan.empty());
  EXPECT_TRUE(plan.faults().empty());
  EXPECT_EQ(plan.describe(), "");
  EXPECT_FALSE(plan.delay_seconds(0).has_value());
  EXPECT_FALSE(plan.corrupts(0));
  EXPECT_FALSE(plan.hang_before_operation(0).has_value());
}

TEST(ParseFaultPlan, EachKind) {
  const FaultPlan delay = parse_fault_plan("delay:1:500");
  ASSERT_EQ(delay.faults().size(), 1u);
  EXPECT_TRUE(same(delay.faults()[0], {FaultKind::kDelay, 1, 500}));

  const FaultPlan corrupt = parse_fault_plan("corrupt:2");
  ASSERT_EQ(corrupt.faults().size(), 1u);
  EXPECT_TRUE(same(corrupt.faults()[0], {FaultKind::kCorrupt, 2, 0}));

  const FaultPlan hang_now = parse_fault_plan("hang:3");
  ASSERT_EQ(hang_now.faults().size(), 1u);
  EXPECT_TRUE(same(hang_now.faults()[0], {FaultKind::kHang, 3, 0}));  // default: operation 0

  const FaultPlan hang_later = parse_fault_plan("hang:0:12");
  ASSERT_EQ(hang_later.faults().size(), 1u);
  EXPECT_TRUE(same(hang_later.faults()[0], {FaultKind::kHang, 0, 12}));

  const FaultPlan stale = parse_fault_plan("stale:1");
  ASSERT_EQ(stale.faults().size(), 1u);
  EXPECT_TRUE(same(stale.faults()[0], {FaultKind::kStale, 1, 0}));

  const FaultPlan partial = parse_fault_plan("partial:3");
  ASSERT_EQ(partial.faults().size(), 1u);
  EXPECT_TRUE(same(partial.faults()[0], {FaultKind::kPartial, 3, 0}));

  const FaultPlan fail_now = parse_fault_plan("fail:2");
  ASSERT_EQ(fail_now.faults().size(), 1u);
  EXPECT_TRUE(same(fail_now.faults()[0], {FaultKind::kFail, 2, 0}));  // default: operation 0
  const FaultPlan fail_later = parse_fault_plan("fail:1:5");
  EXPECT_EQ(fail_later.failing_operation(1), std::optional<std::uint64_t>(5));
  EXPECT_EQ(fail_later.failing_operation(0), std::nullopt);
  EXPECT_EQ(fail_later.hang_before_operation(1), std::nullopt);  // a failure is not a hang
  EXPECT_EQ(fail_later.describe(), "fail:1:5");
}

TEST(ParseFaultPlan, SeveralFaultsInOrder) {
  const FaultPlan plan = parse_fault_plan("delay:0:250,corrupt:3,hang:2:7");
  ASSERT_EQ(plan.faults().size(), 3u);
  EXPECT_TRUE(same(plan.faults()[0], {FaultKind::kDelay, 0, 250}));
  EXPECT_TRUE(same(plan.faults()[1], {FaultKind::kCorrupt, 3, 0}));
  EXPECT_TRUE(same(plan.faults()[2], {FaultKind::kHang, 2, 7}));
  EXPECT_FALSE(plan.empty());
}

// fail: the plan answers for its own rank and kind only, among other faults, in any order.
TEST(ParseFaultPlan, AFailingOperationBelongsToItsRankAndKindOnly) {
  const FaultPlan plan = parse_fault_plan("hang:0:7,fail:1:5,corrupt:2");
  ASSERT_EQ(plan.faults().size(), 3u);
  EXPECT_TRUE(same(plan.faults()[2], {FaultKind::kCorrupt, 2, 0}));  // parsing went on after fail
  EXPECT_EQ(plan.failing_operation(1), std::optional<std::uint64_t>(5));
  EXPECT_EQ(plan.failing_operation(0), std::nullopt);  // rank 0 hangs, it does not fail
  EXPECT_EQ(plan.failing_operation(2), std::nullopt);  // nor does a higher rank
  // Entries after a hang are parsed too.
  EXPECT_EQ(parse_fault_plan("hang:2:7,corrupt:3").faults().size(), 2u);
}

TEST(ParseFaultPlan, AMalformedFailSaysWhatIsWrong) {
  const auto message = [](const char* text) {
    try {
      (void)parse_fault_plan(text);
    } catch (const UsageError& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(message("fail:1:2:3"), HasSubstr("too many fields in 'fail:1:2:3'"));
  EXPECT_THAT(message("fail:1:x"), HasSubstr("invalid operation 'x' in 'fail:1:x'"));
}

TEST(ParseFaultPlan, MalformedFormsAreUsageErrorsNamingTheVariable) {
  const char* const malformed[] = {
      "delay",         // no rank
      "delay:1",       // no duration
      "delay:1:",      // empty duration
      "delay:1:5:6",   // too many fields
      "delay:x:5",     // rank not a number
      "delay:-1:5",    // negative rank
      "delay:1:-5",    // negative duration
      "delay:1:5us",   // units are not accepted: microseconds only
      "delay:1.5:5",   // fractional rank
      "corrupt",       // no rank
      "stale",         // no rank
      "stale:1:2",     // stale takes no argument
      "partial:",      // empty rank
      "partial:1:50",  // partial takes no argument (it always writes the first half)
      "corrupt:",      // empty rank
      "corrupt:1:2",   // corrupt takes no argument
      "hang:1:2:3",    // too many fields
      "fail",          // no rank
      "fail:1:2:3",    // too many fields
      "fail:1:x",      // operation not a number
      "freeze",        // no process
      "freeze:1:2",    // freeze takes no argument
      "hang:1:abc",    // operation not a number
      "hang::1",       // empty rank
      "explode:1",     // unknown kind
      "Delay:1:5",     // kinds are lower case
      ":1",            // no kind
      ",",             // two empty entries
      "corrupt:1,",    // trailing comma
      ",corrupt:1",    // leading comma
      "corrupt:1,,hang:2",
      " corrupt:1",  // spaces are not trimmed
      "corrupt: 1",
      "corrupt:1 ",
      "corrupt:0x1",
      "delay:1:99999999999999999999",  // does not fit
      "corrupt:4294967296",            // a rank beyond int must not wrap to rank 0
      "hang:2147483648",               // nor to a negative rank
  };
  for (const char* text : malformed) {
    try {
      (void)parse_fault_plan(text);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const UsageError& error) {
      EXPECT_NE(std::string(error.what()).find("COMMCERT_FAULT"), std::string::npos)
          << text << ": " << error.what();
    }
  }
}

TEST(ParseFaultPlan, AMalformedEntryIsRefusedSayingWhyAndListingEveryForm) {
  // What a user reads when COMMCERT_FAULT is wrong: the reason for this entry, the entry, and
  // every form the variable accepts, so the fix needs no other page.
  const std::pair<const char*, const char*> cases[] = {
      {"delay", "missing rank"},
      {"delay:1", "delay needs a duration in microseconds"},
      {"corrupt:1:2", "corrupt takes no argument"},
      {"linkdelay:1:2", "linkdelay needs a peer rank and microseconds"},
      {"linkdelay:1:1:5", "a link needs two different ranks"},
      {"hang:1:2:3", "too many fields"},
      {"freeze:1:2", "freeze takes no argument"},
      {"stale:1:2", "stale takes no argument"},
      {"partial:1:50", "partial takes no argument"},
      {"explode:1", "unknown fault kind 'explode'"},
  };
  const char* const forms[] = {
      "delay:<rank>:<us>", "corrupt:<rank>", "hang:<rank>[:<op>]", "linkdelay:<rank>:<peer>:<us>",
      "freeze:<process>",  "stale:<rank>",   "partial:<rank>"};
  for (const auto& [text, why] : cases) {
    try {
      (void)parse_fault_plan(text);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const UsageError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find(std::string("COMMCERT_FAULT: ") + why + " in '" + text + "'"),
                std::string::npos)
          << message;
      for (const char* form : forms)
        EXPECT_NE(message.find(form), std::string::npos) << form << " missing from: " << message;
    }
  }
}

TEST(ParseFaultPlan, LargestValidRank) {
  const FaultPlan plan = parse_fault_plan("corrupt:2147483647");
  ASSERT_EQ(plan.faults().size(), 1u);
  EXPECT_EQ(plan.faults()[0].rank, 2147483647);
}

TEST(FaultPlan, QueriesAnswerPerRank) {
  const FaultPlan plan = parse_fault_plan("delay:1:1500,corrupt:2,hang:3:4");
  ASSERT_TRUE(plan.delay_seconds(1).has_value());
  EXPECT_DOUBLE_EQ(*plan.delay_seconds(1), 1500e-6);
  EXPECT_FALSE(plan.delay_seconds(0).has_value());
  EXPECT_FALSE(plan.delay_seconds(2).has_value());

  EXPECT_TRUE(plan.corrupts(2));
  EXPECT_FALSE(plan.corrupts(1));
  EXPECT_FALSE(plan.corrupts(3));

  ASSERT_TRUE(plan.hang_before_operation(3).has_value());
  EXPECT_EQ(*plan.hang_before_operation(3), 4u);
  EXPECT_FALSE(plan.hang_before_operation(2).has_value());

  // A zero delay is still a delay fault (it exercises the path), distinct from none.
  const FaultPlan zero = parse_fault_plan("delay:0:0");
  ASSERT_TRUE(zero.delay_seconds(0).has_value());
  EXPECT_DOUBLE_EQ(*zero.delay_seconds(0), 0.0);
}

TEST(FaultPlan, StaleLeavesTheWholeOutputAndOnlyOnItsRank) {
  const FaultPlan plan = parse_fault_plan("stale:2");
  EXPECT_EQ(plan.unwritten_elements(2, 1000), 1000u);
  EXPECT_EQ(plan.unwritten_elements(2, 1), 1u);
  EXPECT_EQ(plan.unwritten_elements(2, 0), 0u);
  EXPECT_EQ(plan.unwritten_elements(1, 1000), 0u);
  EXPECT_EQ(plan.unwritten_elements(3, 1000), 0u);
  EXPECT_FALSE(plan.corrupts(2));
}

TEST(FaultPlan, PartialWritesTheFirstHalfRoundedDown) {
  const FaultPlan plan = parse_fault_plan("partial:0");
  // Unwritten: the second half, and the odd element with it; never nothing, so even a
  // one-element output is left stale and the check has something to catch.
  EXPECT_EQ(plan.unwritten_elements(0, 1000), 500u);
  EXPECT_EQ(plan.unwritten_elements(0, 1001), 501u);
  EXPECT_EQ(plan.unwritten_elements(0, 2), 1u);
  EXPECT_EQ(plan.unwritten_elements(0, 1), 1u);
  EXPECT_EQ(plan.unwritten_elements(0, 0), 0u);
  EXPECT_EQ(plan.unwritten_elements(1, 1000), 0u);
}

TEST(FaultPlan, StaleWinsOverPartialOnOneRank) {
  EXPECT_EQ(parse_fault_plan("partial:1,stale:1").unwritten_elements(1, 10), 10u);
  EXPECT_EQ(parse_fault_plan("stale:1,partial:1").unwritten_elements(1, 10), 10u);
}

TEST(FaultPlan, OtherFaultsWriteTheWholeOutput) {
  const FaultPlan plan = parse_fault_plan("delay:0:10,corrupt:0,hang:0:5,linkdelay:0:1:3,freeze:0");
  EXPECT_EQ(plan.unwritten_elements(0, 64), 0u);
}

TEST(RestoreUnwrittenTail, PutsBackOnlyTheTail) {
  // The operation wrote 1..8; the saved tail (the poison) goes back over its last three bytes.
  std::array<unsigned char, 8> output{1, 2, 3, 4, 5, 6, 7, 8};
  const std::array<unsigned char, 3> before{0xee, 0xee, 0xee};
  restore_unwritten_tail(before.data(), output.data(), output.size(), before.size());
  EXPECT_EQ(output, (std::array<unsigned char, 8>{1, 2, 3, 4, 5, 0xee, 0xee, 0xee}));
}

TEST(RestoreUnwrittenTail, WholeOutputAndNothing) {
  std::array<unsigned char, 4> output{1, 2, 3, 4};
  const std::array<unsigned char, 4> before{9, 9, 9, 9};
  restore_unwritten_tail(before.data(), output.data(), output.size(), 0);
  EXPECT_EQ(output, (std::array<unsigned char, 4>{1, 2, 3, 4}));
  restore_unwritten_tail(before.data(), output.data(), output.size(), output.size());
  EXPECT_EQ(output, before);
}

TEST(FaultPlan, FreezeAtEndNamesOneProcess) {
  const FaultPlan plan = parse_fault_plan("freeze:2,hang:1");
  EXPECT_TRUE(plan.freezes_at_end(2));
  EXPECT_FALSE(plan.freezes_at_end(1));  // a hang is not a freeze at the end
  EXPECT_FALSE(plan.freezes_at_end(3));
  EXPECT_THROW(plan.validate_ranks(2), UsageError);  // no process 2 in a job of two
}

TEST(FaultPlan, SeveralFaultsOnOneRank) {
  const FaultPlan plan = parse_fault_plan("corrupt:1,delay:1:10,hang:1");
  EXPECT_TRUE(plan.corrupts(1));
  EXPECT_DOUBLE_EQ(*plan.delay_seconds(1), 10e-6);
  EXPECT_EQ(*plan.hang_before_operation(1), 0u);
}

TEST(FaultPlan, ValidateRanks) {
  const FaultPlan plan = parse_fault_plan("corrupt:3");
  EXPECT_NO_THROW(plan.validate_ranks(4));
  EXPECT_NO_THROW(plan.validate_ranks(16));
  EXPECT_THROW(plan.validate_ranks(3), UsageError);
  EXPECT_THROW(plan.validate_ranks(1), UsageError);
  try {
    plan.validate_ranks(2);
  } catch (const UsageError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("COMMCERT_FAULT"), std::string::npos) << message;
    EXPECT_NE(message.find('3'), std::string::npos) << message;
  }
  EXPECT_NO_THROW(FaultPlan{}.validate_ranks(1));
  // Any fault beyond the job fails validation, not only the first.
  EXPECT_THROW(parse_fault_plan("corrupt:0,hang:5").validate_ranks(4), UsageError);
}

TEST(FaultPlan, DescribeRoundTrips) {
  const char* const texts[] = {
      "delay:1:500",        "corrupt:2", "hang:3:0", "hang:0:9",  "delay:0:1,corrupt:1,hang:2:3",
      "linkdelay:1:3:4000", "freeze:2",  "stale:0",  "partial:3", "partial:1,stale:2"};
  for (const char* text : texts) {
    const FaultPlan plan = parse_fault_plan(text);
    EXPECT_EQ(plan.describe(), text);
    const FaultPlan again = parse_fault_plan(plan.describe());
    ASSERT_EQ(again.faults().size(), plan.faults().size());
    for (std::size_t i = 0; i < plan.faults().size(); ++i) {
      EXPECT_TRUE(same(again.faults()[i], plan.faults()[i])) << text;
    }
  }
  // The default operation of hang is spelled out.
  EXPECT_EQ(parse_fault_plan("hang:3").describe(), "hang:3:0");
}

TEST(FaultPlan, ALinkDelayHitsItsRankOnlyInAGroupWithThePeer) {
  const FaultPlan plan = parse_fault_plan("linkdelay:1:3:4000,corrupt:0");
  EXPECT_FALSE(plan.delay_seconds(1));  // not a plain delay until a round places both ends
  // Cluster scope: one group holds everyone.
  EXPECT_DOUBLE_EQ(*plan.for_groups({0, 0, 0, 0}).delay_seconds(1), 4e-3);
  // Pairs (1,3) and (0,2): the link is inside a pair.
  EXPECT_DOUBLE_EQ(*plan.for_groups({1, 0, 1, 0}).delay_seconds(1), 4e-3);
  // Pairs (0,1) and (2,3), and a round where rank 3 sits out: the link is not exercised.
  EXPECT_FALSE(plan.for_groups({0, 0, 1, 1}).delay_seconds(1));
  EXPECT_FALSE(plan.for_groups({0, 0, 0, -1}).delay_seconds(1));
  EXPECT_FALSE(plan.for_groups({0, -1, 0, -1}).delay_seconds(3));
  EXPECT_TRUE(plan.for_groups({0, 0, 1, 1}).corrupts(0));  // other faults pass through
  EXPECT_THROW(plan.validate_ranks(3), UsageError);        // the peer is beyond the job
  EXPECT_THROW((void)parse_fault_plan("linkdelay:1:1:10"), UsageError);
  EXPECT_THROW((void)parse_fault_plan("linkdelay:1:2"), UsageError);
}

// What a user reads for each malformed field: the field's own name, the text, the entry.
TEST(ParseFaultPlan, EachMalformedFieldIsNamedInTheMessage) {
  const std::pair<const char*, const char*> cases[] = {
      {"delay:x:5", "COMMCERT_FAULT: invalid rank 'x' in 'delay:x:5'"},
      {"delay:1:x", "COMMCERT_FAULT: invalid delay 'x' in 'delay:1:x'"},
      {"linkdelay:1:x:5", "COMMCERT_FAULT: invalid peer rank 'x' in 'linkdelay:1:x:5'"},
      {"linkdelay:1:2:x", "COMMCERT_FAULT: invalid delay 'x' in 'linkdelay:1:2:x'"},
      {"hang:1:x", "COMMCERT_FAULT: invalid operation 'x' in 'hang:1:x'"},
      {"corrupt:2147483648",
       "COMMCERT_FAULT: rank 2147483648 out of range in 'corrupt:2147483648'"},
      {"linkdelay:0:2147483648:5",
       "COMMCERT_FAULT: rank 2147483648 out of range in 'linkdelay:0:2147483648:5'"},
      {"linkdelay:1:2:3:4",
       "COMMCERT_FAULT: linkdelay needs a peer rank and microseconds in 'linkdelay:1:2:3:4'"},
      {"zap:1", "COMMCERT_FAULT: unknown fault kind 'zap' in 'zap:1'"},
      {"unknown:1", "COMMCERT_FAULT: unknown fault kind 'unknown' in 'unknown:1'"},
  };
  for (const auto& [text, expected] : cases) {
    try {
      (void)parse_fault_plan(text);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const UsageError& error) {
      EXPECT_THAT(error.what(), ::testing::StartsWith(expected)) << text;
    }
  }
}

// The text is a view: its last number ends where the view ends, even where the memory behind it
// holds more digits.
TEST(ParseFaultPlan, TheLastNumberEndsWhereTheViewEnds) {
  const std::string_view longer = "corrupt:12345";
  const FaultPlan plan = parse_fault_plan(longer.substr(0, 9));  // "corrupt:1"
  ASSERT_EQ(plan.faults().size(), 1u);
  EXPECT_TRUE(same(plan.faults()[0], {FaultKind::kCorrupt, 1, 0}));
}

// A link's peer may be any other rank of int's range, below or above its rank.
TEST(ParseFaultPlan, ALinkDelaysPeerIsAnyOtherRank) {
  const FaultPlan plan = parse_fault_plan("linkdelay:2:1:5,linkdelay:0:2147483647:7");
  ASSERT_EQ(plan.faults().size(), 2u);
  EXPECT_TRUE(same(plan.faults()[0], {FaultKind::kLinkDelay, 2, 5, 1}));
  EXPECT_TRUE(same(plan.faults()[1], {FaultKind::kLinkDelay, 0, 7, 2147483647}));
}

// Every kind after the first is parsed too, whichever kind comes first.
TEST(ParseFaultPlan, EntriesAfterAnyKindAreParsed) {
  for (const char* first : {"delay:0:5", "corrupt:0", "linkdelay:0:1:5", "hang:0:1", "fail:0:1",
                            "freeze:0", "stale:0", "partial:0"}) {
    const std::string text = std::string(first) + ",corrupt:3";
    const FaultPlan plan = parse_fault_plan(text);
    ASSERT_EQ(plan.faults().size(), 2u) << text;
    EXPECT_TRUE(same(plan.faults()[1], {FaultKind::kCorrupt, 3, 0})) << text;
  }
  const FaultPlan freeze = parse_fault_plan("freeze:2");
  ASSERT_EQ(freeze.faults().size(), 1u);
  EXPECT_TRUE(same(freeze.faults()[0], {FaultKind::kFreezeAtEnd, 2, 0}));
}

// Each query answers for its own kind and rank only: a higher or lower rank's fault, or another
// kind's, is not the asked rank's.
TEST(FaultPlan, EachQueryIgnoresOtherRanksAndKinds) {
  const FaultPlan hang = parse_fault_plan("hang:1:4");
  EXPECT_EQ(hang.hang_before_operation(2), std::nullopt);
  EXPECT_EQ(hang.hang_before_operation(0), std::nullopt);
  for (const char* other : {"stale:2", "partial:2", "fail:2"}) {
    EXPECT_FALSE(parse_fault_plan(other).freezes_at_end(2)) << other;
  }
  // The freeze is found behind another fault.
  EXPECT_TRUE(parse_fault_plan("hang:1,freeze:2").freezes_at_end(2));
  // A failing operation writes its output (or fails): only stale and partial leave it.
  EXPECT_EQ(parse_fault_plan("fail:0").unwritten_elements(0, 10), 0u);
}

TEST(RestoreUnwrittenTail, ALastByteAloneIsPutBack) {
  std::array<unsigned char, 4> output{1, 2, 3, 4};
  const std::array<unsigned char, 1> before{9};
  restore_unwritten_tail(before.data(), output.data(), output.size(), before.size());
  EXPECT_EQ(output, (std::array<unsigned char, 4>{1, 2, 3, 9}));
}

// A round's groups: rank 0 is a rank like the others, a rank the round does not list sits out,
// two ranks that both sit out share no link, and every other fault passes through in order.
TEST(FaultPlan, ForGroupsPlacesLinksByTheRoundsGroupsOnly) {
  EXPECT_DOUBLE_EQ(*parse_fault_plan("linkdelay:0:1:5").for_groups({0, 0}).delay_seconds(0), 5e-6);
  EXPECT_DOUBLE_EQ(*parse_fault_plan("linkdelay:1:3:5").for_groups({0, 1, 0, 1}).delay_seconds(1),
                   5e-6);
  const FaultPlan link = parse_fault_plan("linkdelay:1:3:4000");
  EXPECT_FALSE(link.for_groups({0, -1, 0, -1}).delay_seconds(1));  // both ends sit out
  // Ranks beyond the round's list sit out, whatever group the other end is in.
  EXPECT_FALSE(link.for_groups({0, 0}).delay_seconds(1));
  EXPECT_FALSE(link.for_groups({1, 1}).delay_seconds(1));
  EXPECT_FALSE(link.for_groups({0, 0, 0}).delay_seconds(1));
  EXPECT_FALSE(parse_fault_plan("linkdelay:5:1:4000").for_groups({0, 0}).delay_seconds(5));
  EXPECT_FALSE(parse_fault_plan("linkdelay:5:1:4000").for_groups({1, 1}).delay_seconds(5));

  const FaultPlan mixed = parse_fault_plan(
      "corrupt:0,linkdelay:0:1:5,freeze:1,stale:2,partial:3,fail:1:2,linkdelay:2:3:7,hang:3:9");
  const FaultPlan round = mixed.for_groups({0, 0, 1, 1});
  EXPECT_EQ(round.describe(),
            "corrupt:0,delay:0:5,freeze:1,stale:2,partial:3,fail:1:2,delay:2:7,"
            "hang:3:9");
}

TEST(FaultPlan, ValidateRanksNamesTheFirstRankBeyondTheJob) {
  const auto message = [](const char* text, int nranks) {
    try {
      parse_fault_plan(text).validate_ranks(nranks);
    } catch (const UsageError& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message("linkdelay:5:6:1", 4), "COMMCERT_FAULT names rank 5 but the job has 4 rank(s)");
  EXPECT_EQ(message("linkdelay:1:6:1", 4), "COMMCERT_FAULT names rank 6 but the job has 4 rank(s)");
  EXPECT_EQ(message("linkdelay:1:3:1", 4), "accepted");
}

class FaultEnvironment : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* value = std::getenv("COMMCERT_FAULT")) saved_ = value;
  }
  void TearDown() override {
    if (saved_) {
      ::setenv("COMMCERT_FAULT", saved_->c_str(), 1);
    } else {
      ::unsetenv("COMMCERT_FAULT");
    }
  }
  std::optional<std::string> saved_;
};

TEST_F(FaultEnvironment, ReadsCommcertFault) {
  ::unsetenv("COMMCERT_FAULT");
  EXPECT_TRUE(fault_plan_from_environment().empty());
  ::setenv("COMMCERT_FAULT", "", 1);
  EXPECT_TRUE(fault_plan_from_environment().empty());
  ::setenv("COMMCERT_FAULT", "corrupt:1,delay:0:20", 1);
  const FaultPlan plan = fault_plan_from_environment();
  EXPECT_TRUE(plan.corrupts(1));
  EXPECT_DOUBLE_EQ(*plan.delay_seconds(0), 20e-6);
  ::setenv("COMMCERT_FAULT", "corrupt", 1);
  EXPECT_THROW((void)fault_plan_from_environment(), UsageError);
}

}  // namespace
}  // namespace commcert
