// The per-rank results' layout on the control plane (bench/rank_result_wire.hpp): every field
// arrives as sent, and what encode never writes is refused rather than read as a result.
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "bench/rank_result_wire.hpp"
#include "core/errors.hpp"

namespace commcert {
namespace {

TEST(RankResultWire, EveryFieldArrivesExactlyIncludingCountsAboveDoublePrecision) {
  std::vector<RankMeasurement> sent(3);
  sent[0].rank = 0;
  sent[0].mean_seconds = 1.25e-3;
  sent[0].checked = true;
  sent[1].rank = 7;
  sent[1].mean_seconds = 0.1;
  sent[1].back_to_back_seconds = 0.0;  // a span of zero is a span, not "none"
  sent[1].wrong_elements = (std::uint64_t{1} << 53) + 1;
  sent[1].wrong_iterations = 3;
  sent[1].checked = true;
  sent[2].rank = std::numeric_limits<int>::max();
  sent[2].back_to_back_seconds = 2.5;
  sent[2].wrong_elements = std::numeric_limits<std::uint64_t>::max();
  sent[2].wrong_iterations = std::numeric_limits<int>::max();

  const auto wire = encode_rank_results(sent);
  EXPECT_EQ(wire.size(), 3 * kRankResultWireFields);
  const auto received = decode_rank_results(wire);
  ASSERT_EQ(received.size(), 3U);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(received[i].rank, sent[i].rank);
    EXPECT_EQ(received[i].mean_seconds, sent[i].mean_seconds);
    EXPECT_EQ(received[i].back_to_back_seconds, sent[i].back_to_back_seconds);
    EXPECT_EQ(received[i].wrong_elements, sent[i].wrong_elements);
    EXPECT_EQ(received[i].wrong_iterations, sent[i].wrong_iterations);
    EXPECT_EQ(received[i].checked, sent[i].checked);
  }
}

TEST(RankResultWire, APartialResultIsRefusedNotDropped) {
  std::vector<RankMeasurement> sent(2);
  auto wire = encode_rank_results(sent);
  wire.pop_back();
  EXPECT_THROW((void)decode_rank_results(wire), RuntimeFailure);
  EXPECT_TRUE(decode_rank_results({}).empty());
}

TEST(RankResultWire, AFieldEncodeNeverWritesIsRefused) {
  std::vector<RankMeasurement> sent(1);
  const auto wire = encode_rank_results(sent);
  // Fields: rank, mean, has back-to-back, back-to-back, wrong high, wrong low, wrong iterations,
  // checked. A fraction, a negative or an out-of-range value in any integer field is refused.
  for (const std::size_t field : {0U, 2U, 4U, 5U, 6U, 7U}) {
    for (const double bad : {0.5, -1.0, 4294967296.0 * 4294967296.0}) {
      auto damaged = wire;
      damaged[field] = bad;
      EXPECT_THROW((void)decode_rank_results(damaged), RuntimeFailure)
          << "field " << field << " = " << bad;
    }
  }
  for (const std::size_t flag : {2U, 7U}) {
    auto damaged = wire;
    damaged[flag] = 2;
    EXPECT_THROW((void)decode_rank_results(damaged), RuntimeFailure) << "flag " << flag;
  }
  // Each half of the wrong-element count holds 32 bits: the largest is fine, one more is refused
  // (a low half of 2^32 would carry into the high half unseen).
  for (const std::size_t half : {4U, 5U}) {
    auto largest = wire;
    largest[half] = 4294967295.0;
    EXPECT_EQ(decode_rank_results(largest).at(0).wrong_elements,
              half == 4 ? 0xffffffffULL << 32 : 0xffffffffULL)
        << "field " << half;
    auto above = wire;
    above[half] = 4294967296.0;
    EXPECT_THROW((void)decode_rank_results(above), RuntimeFailure) << "field " << half;
  }
}

// The message names the field, the value and the range, as a user reading a failed run's error
// needs to tell a damaged control plane from a bug in one field.
TEST(RankResultWire, ARefusalNamesTheFieldItsValueAndTheRange) {
  const auto wire = encode_rank_results(std::vector<RankMeasurement>(1));
  const std::vector<std::pair<std::size_t, std::string>> fields = {
      {0, "rank is 0.5, not a whole number in [0, 2147483647]"},
      {2, "back-to-back flag is 0.5, not a whole number in [0, 1]"},
      {4, "wrong elements (high) is 0.5, not a whole number in [0, 4294967295]"},
      {5, "wrong elements (low) is 0.5, not a whole number in [0, 4294967295]"},
      {6, "wrong iterations is 0.5, not a whole number in [0, 2147483647]"},
      {7, "checked flag is 0.5, not a whole number in [0, 1]"},
  };
  for (const auto& [field, said] : fields) {
    auto damaged = wire;
    damaged[field] = 0.5;
    try {
      (void)decode_rank_results(damaged);
      ADD_FAILURE() << "field " << field << " was not refused";
    } catch (const RuntimeFailure& e) {
      EXPECT_EQ(std::string(e.what()), "per-rank result from another process: " + said);
    }
  }
  auto short_by_one = wire;
  short_by_one.pop_back();
  try {
    (void)decode_rank_results(short_by_one);
    ADD_FAILURE() << "a short result was not refused";
  } catch (const RuntimeFailure& e) {
    EXPECT_EQ(std::string(e.what()),
              "per-rank results from another process: 7 values, not a multiple of 8");
  }
}

}  // namespace
}  // namespace commcert
