#include <gtest/gtest.h>

#include "bench/peer_compare.hpp"

namespace commcert {
namespace {

PeerResult gpu(const std::string& node, std::optional<std::uint64_t> fingerprint,
               const std::string& model = "NVIDIA H200 (132 SMs)") {
  return {node, model, fingerprint};
}

TEST(PeerCompare, NamesTheGpuThatDisagreesWithTheMajority) {
  const auto v = compare_with_peers({gpu("n1", 7), gpu("n1", 7), gpu("n1", 9), gpu("n1", 7)});
  EXPECT_EQ(v[0].mismatch, false);
  EXPECT_EQ(v[1].mismatch, false);
  EXPECT_EQ(v[2].mismatch, true);
  EXPECT_EQ(v[3].mismatch, false);
  for (const auto& verdict : v)
    EXPECT_EQ(verdict.peers, 3);
}

TEST(PeerCompare, WithoutAMajorityNoGpuOfTheGroupIsTrusted) {
  const auto v = compare_with_peers({gpu("n1", 1), gpu("n1", 2)});
  EXPECT_EQ(v[0].mismatch, true);
  EXPECT_EQ(v[1].mismatch, true);
  const auto agree = compare_with_peers({gpu("n1", 5), gpu("n1", 5)});
  EXPECT_EQ(agree[0].mismatch, false);
}

TEST(PeerCompare, ALoneGpuHasNoPeer) {
  const auto v = compare_with_peers({gpu("n1", 1)});
  EXPECT_FALSE(v[0].mismatch.has_value());
  EXPECT_EQ(v[0].peers, 0);
}

TEST(PeerCompare, OnlyGpusOfTheSameNodeAndModelAreCompared) {
  const auto v = compare_with_peers(
      {gpu("n1", 1), gpu("n2", 2), gpu("n1", 3, "NVIDIA H100 80GB HBM3 (132 SMs)")});
  for (const auto& verdict : v) {
    EXPECT_FALSE(verdict.mismatch.has_value());
    EXPECT_EQ(verdict.peers, 0);
  }
}

TEST(PeerCompare, GpusWithoutAResultAreLeftOut) {
  const auto v = compare_with_peers({gpu("n1", 4), gpu("n1", std::nullopt), gpu("n1", 4)});
  EXPECT_EQ(v[0].mismatch, false);
  EXPECT_EQ(v[0].peers, 1);
  EXPECT_FALSE(v[1].mismatch.has_value());
  EXPECT_EQ(v[1].peers, 0);
}

}  // namespace
}  // namespace commcert
