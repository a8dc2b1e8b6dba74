// links: the schedule (rounds, rails), the figures from samples, counter deltas and the flags.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/links_command.hpp"
#include "core/errors.hpp"
#include "links/gid_table.hpp"
#include "links/link_measurement.hpp"
#include "links/link_schedule.hpp"
#include "links/nccl_net_log.hpp"
#include "temp_directory.hpp"

namespace commcert {
namespace {

using ::testing::ElementsAre;

std::vector<RankIdentity> ranks_on(const std::vector<std::string>& node_of_rank) {
  std::vector<RankIdentity> ranks;
  for (std::size_t r = 0; r < node_of_rank.size(); ++r) {
    RankIdentity id;
    id.rank = static_cast<int>(r);
    id.process = static_cast<int>(r);
    id.node = node_of_rank[r];
    ranks.push_back(id);
  }
  return ranks;
}

// Every unordered pair of nodes exactly once, no node twice in a round.
void expect_every_pair_once(const std::vector<LinkRound>& rounds, std::size_t nodes) {
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& round : rounds) {
    std::set<std::string> busy;
    for (const auto& pair : round.pairs) {
      EXPECT_TRUE(busy.insert(pair.nodes[0]).second) << "round " << round.round;
      EXPECT_TRUE(busy.insert(pair.nodes[1]).second) << "round " << round.round;
      EXPECT_TRUE(seen.insert(std::minmax(pair.nodes[0], pair.nodes[1])).second);
    }
  }
  EXPECT_EQ(seen.size(), nodes * (nodes - 1) / 2);
}

TEST(LinkSchedule, FourNodesMeetInThreeRoundsOfTwoPairs) {
  const auto ranks = ranks_on({"a", "b", "c", "d"});
  const auto rounds = plan_link_rounds(ranks, first_rank_rails(ranks));
  ASSERT_EQ(rounds.size(), 3u);
  for (const auto& round : rounds)
    EXPECT_EQ(round.pairs.size(), 2u);
  expect_every_pair_once(rounds, 4);
}

// The pair of `rank` in `round`.
const LinkPair& pair_of(const LinkRound& round, int rank) {
  return round.pairs.at(
      static_cast<std::size_t>(round.pair_of_rank.at(static_cast<std::size_t>(rank))));
}

TEST(LinkTimeout, AnAbsentRankNamesBothEndsOfItsLinkInTheRoundUnderWay) {
  const auto ranks = ranks_on({"a", "b", "c", "d"});
  const auto rounds = plan_link_rounds(ranks, first_rank_rails(ranks));
  const LinkRound& round = rounds.at(1);
  const LinkPair& link = pair_of(round, 1);
  const auto links = links_of_timeout({1}, &round, ranks, nullptr);
  ASSERT_EQ(links.size(), 1u);
  EXPECT_THAT(links[0], ElementsAre(link.nodes[0], link.nodes[1]));
  EXPECT_NE(std::find(links[0].begin(), links[0].end(), "b"), links[0].end());
}

TEST(LinkTimeout, TwoAbsentEndsOfOneLinkNameItOnceAndOfTwoLinksBoth) {
  const auto ranks = ranks_on({"a", "b", "c", "d"});
  const auto rounds = plan_link_rounds(ranks, first_rank_rails(ranks));
  const LinkRound& round = rounds.at(0);
  const LinkPair& first = round.pairs.at(0);
  EXPECT_EQ(links_of_timeout({first.ranks[0], first.ranks[1]}, &round, ranks, nullptr).size(), 1u);
  EXPECT_EQ(links_of_timeout({0, 1, 2, 3}, &round, ranks, nullptr).size(), 2u);
}

TEST(LinkTimeout, OutsideALinkTheAbsentNodeAloneAndWithNobodyAbsentTheWritersOwnLink) {
  const auto ranks = ranks_on({"a", "b", "c"});
  const auto rounds = plan_link_rounds(ranks, first_rank_rails(ranks));
  // Three nodes: one sits each round out.
  const auto idle = std::find(rounds[0].pair_of_rank.begin(), rounds[0].pair_of_rank.end(), -1);
  ASSERT_NE(idle, rounds[0].pair_of_rank.end());
  const int bye = static_cast<int>(idle - rounds[0].pair_of_rank.begin());
  EXPECT_THAT(links_of_timeout({bye}, &rounds[0], ranks, nullptr),
              ElementsAre(ElementsAre(ranks[static_cast<std::size_t>(bye)].node)));
  // Set-up, before the rounds: no link, the absent node.
  EXPECT_THAT(links_of_timeout({2}, nullptr, ranks, nullptr), ElementsAre(ElementsAre("c")));
  // Everyone waits inside an operation (a stuck transfer): the link the writer was measuring.
  const LinkPair& own = rounds[0].pairs.at(0);
  EXPECT_THAT(links_of_timeout({}, &rounds[0], ranks, &own),
              ElementsAre(ElementsAre(own.nodes[0], own.nodes[1])));
  EXPECT_TRUE(links_of_timeout({}, &rounds[0], ranks, nullptr).empty());
}

TEST(LinkSchedule, AnOddCountGivesEachNodeOneBye) {
  const auto ranks = ranks_on({"a", "b", "c", "d", "e"});
  const auto rounds = plan_link_rounds(ranks, first_rank_rails(ranks));
  ASSERT_EQ(rounds.size(), 5u);
  std::map<int, int> idle;
  for (const auto& round : rounds) {
    for (std::size_t r = 0; r < ranks.size(); ++r)
      idle[static_cast<int>(r)] += round.pair_of_rank[r] < 0 ? 1 : 0;
  }
  for (const auto& [rank, byes] : idle)
    EXPECT_EQ(byes, 1) << "rank " << rank;
  expect_every_pair_once(rounds, 5);
}

TEST(LinkSchedule, OneRailPerNodeUsesItsLowestRankAndLeavesTheOthersIdle) {
  const auto ranks = ranks_on({"a", "a", "b", "b"});
  EXPECT_THAT(first_rank_rails(ranks), ElementsAre(0, -1, 0, -1));
  const auto rounds = plan_link_rounds(ranks, first_rank_rails(ranks));
  ASSERT_EQ(rounds.size(), 1u);
  ASSERT_EQ(rounds[0].pairs.size(), 1u);
  EXPECT_EQ(rounds[0].pairs[0].ranks, (std::array<int, 2>{0, 2}));
  EXPECT_THAT(rounds[0].pair_of_rank, ElementsAre(0, -1, 0, -1));
}

TEST(LinkSchedule, RailIOfOneNodeMeetsRailIOfTheOtherAndAMissingRailIsLeftOut) {
  const auto ranks = ranks_on({"a", "a", "b", "b"});
  // a: rank 0 drives rail 1, rank 1 rail 0; b: rank 2 rail 0, rank 3 no NIC.
  const auto rounds = plan_link_rounds(ranks, {1, 0, 0, -1});
  ASSERT_EQ(rounds.size(), 1u);
  ASSERT_EQ(rounds[0].pairs.size(), 1u);
  EXPECT_EQ(rounds[0].pairs[0].rail, 0);
  EXPECT_EQ(rounds[0].pairs[0].ranks, (std::array<int, 2>{1, 2}));
}

TEST(LinkSchedule, ARailHeldTwiceOnOneNodeIsRefused) {
  EXPECT_THROW((void)plan_link_rounds(ranks_on({"a", "a", "b"}), {0, 0, 0}), std::invalid_argument);
  EXPECT_THROW((void)plan_link_rounds(ranks_on({"a", "b"}), {0}), std::invalid_argument);
}

TEST(LinkSchedule, RailsFollowTheNicNearestEachGpuInNaturalNameOrder) {
  const std::vector<std::string> nics = {"mlx5_10", "mlx5_2", "mlx5_3", "mlx5_11"};
  // Sorted naturally: mlx5_2 (0), mlx5_3 (1), mlx5_10 (2), mlx5_11 (3).
  EXPECT_THAT(rails_by_affinity({{"mlx5_10"}, {"mlx5_2"}, {"mlx5_11"}, {"mlx5_3"}}, nics),
              ElementsAre(2, 0, 3, 1));
  // Two GPUs behind one switch with two NICs take one each; a third finds none free; an unknown
  // NIC or none known gives no rail.
  EXPECT_THAT(rails_by_affinity(
                  {{"mlx5_3", "mlx5_2"}, {"mlx5_2", "mlx5_3"}, {"mlx5_2"}, {"mlx5_99"}, {}}, nics),
              ElementsAre(0, 1, -1, -1, -1));
  EXPECT_TRUE(natural_less("mlx5_2", "mlx5_10"));
  EXPECT_FALSE(natural_less("mlx5_10", "mlx5_2"));
  EXPECT_TRUE(natural_less("mlx4_9", "mlx5_0"));
}

TEST(LinkMeasurement, BandwidthIsBytesMovedOverTheMedianIteration) {
  const auto m = link_measurement(LinkTest::kWriteBandwidth, 1000, 4, 2, {4e-6, 1e-6, 2e-6});
  EXPECT_EQ(m.iterations, 3);
  EXPECT_EQ(m.warmup, 2);
  EXPECT_DOUBLE_EQ(m.median_s, 2e-6);
  EXPECT_DOUBLE_EQ(m.min_s, 1e-6);
  EXPECT_DOUBLE_EQ(m.max_s, 4e-6);
  EXPECT_DOUBLE_EQ(*m.bytes_per_s, 4000 / 2e-6);
  EXPECT_FALSE(m.latency_s.has_value());
  EXPECT_THAT(m.samples_s, ElementsAre(4e-6, 1e-6, 2e-6));  // in iteration order
}

TEST(LinkMeasurement, BidirectionalCountsBothDirectionsAndLatencyIsTheMedian) {
  const auto bidir = link_measurement(LinkTest::kWriteBandwidthBidirectional, 1000, 2, 0, {1e-6});
  EXPECT_DOUBLE_EQ(*bidir.bytes_per_s, 4000 / 1e-6);
  const auto latency = link_measurement(LinkTest::kWriteLatency, 8, 1, 0, {3e-6, 1e-6, 2e-6});
  EXPECT_DOUBLE_EQ(*latency.latency_s, 2e-6);
  EXPECT_FALSE(latency.bytes_per_s.has_value());
  EXPECT_THROW((void)link_measurement(LinkTest::kWriteLatency, 8, 1, 0, {}), std::invalid_argument);
}

TEST(LinkCounters, DeltasAreGrowthAndAResetCountsFromZero) {
  const std::map<std::string, std::uint64_t> before = {
      {"symbol_error", 10}, {"link_downed", 5}, {"port_rcv_errors", 0}, {"only_before", 1}};
  const std::map<std::string, std::uint64_t> after = {
      {"symbol_error", 13}, {"link_downed", 2}, {"port_rcv_errors", 0}, {"only_after", 7}};
  EXPECT_EQ(counter_deltas(before, after),
            (std::map<std::string, std::int64_t>{
                {"link_downed", 2}, {"port_rcv_errors", 0}, {"symbol_error", 3}}));
}

TEST(LinksFlags, TestNamesParseInOrderWithoutRepeatsAndAnUnknownOneIsAUsageError) {
  EXPECT_THAT(parse_link_tests("write_lat,write_bw,write_lat", "--tests"),
              ElementsAre(LinkTest::kWriteLatency, LinkTest::kWriteBandwidth));
  EXPECT_THROW((void)parse_link_tests("write_bw,bogus", "--tests"), UsageError);
  EXPECT_THROW((void)parse_link_tests("", "--tests"), UsageError);
}

// A port's GID table as sysfs lays it out: gids/<i>, gid_attrs/types/<i>, gid_attrs/ndevs/<i>.
void write_gid(const std::filesystem::path& root, int index, const std::string& gid,
               const std::string& type, const std::string& netdev = "eth0") {
  const auto port = root / "class/infiniband/mlx5_0/ports/1";
  std::filesystem::create_directories(port / "gids");
  std::filesystem::create_directories(port / "gid_attrs/types");
  std::filesystem::create_directories(port / "gid_attrs/ndevs");
  std::ofstream(port / "gids" / std::to_string(index)) << gid << "\n";
  if (!type.empty())
    std::ofstream(port / "gid_attrs/types" / std::to_string(index)) << type << "\n";
  if (!type.empty())
    std::ofstream(port / "gid_attrs/ndevs" / std::to_string(index)) << netdev << "\n";
}

constexpr const char* kZeroGid = "0000:0000:0000:0000:0000:0000:0000:0000";
constexpr const char* kLinkLocal = "fe80:0000:0000:0000:5254:00ff:fe12:3456";
constexpr const char* kIpv4 = "0000:0000:0000:0000:0000:ffff:0a00:0001";
constexpr const char* kGlobal = "2001:0db8:0000:0000:5254:00ff:fe12:3456";

TEST(GidChoice, RoceTakesTheIpv4MappedRoceV2EntryOverLinkLocalAndV1) {
  test_support::TempDirectory sysfs;
  write_gid(sysfs.path(), 0, kLinkLocal, "IB/RoCE v1");
  write_gid(sysfs.path(), 1, kLinkLocal, "RoCE v2");
  write_gid(sysfs.path(), 2, kIpv4, "IB/RoCE v1");
  write_gid(sysfs.path(), 3, kIpv4, "RoCE v2", "ens1f0np0");
  write_gid(sysfs.path(), 4, kZeroGid, "");
  const auto table = read_gid_table(sysfs.path(), "mlx5_0", 1);
  ASSERT_EQ(table.size(), 5u);
  EXPECT_EQ(table[3].type, "RoCE v2");
  EXPECT_EQ(table[3].netdev, "ens1f0np0");
  const GidChoice choice = choose_gid(table, "Ethernet", std::nullopt);
  EXPECT_EQ(choice.index, 3);
  EXPECT_THAT(choice.why, ::testing::HasSubstr("RoCE v2"));
  EXPECT_THAT(choice.why, ::testing::HasSubstr("ens1f0np0"));
}

TEST(GidChoice, AGlobalIpv6EntryBeatsLinkLocalAndTheLowestIndexWinsAmongEquals) {
  const std::vector<GidEntry> table = {{0, kLinkLocal, "IB/RoCE v1", ""},
                                       {1, kLinkLocal, "RoCE v2", ""},
                                       {5, kGlobal, "RoCE v2", ""},
                                       {7, kGlobal, "RoCE v2", ""}};
  EXPECT_EQ(choose_gid(table, "Ethernet", std::nullopt).index, 5);
  EXPECT_EQ(choose_gid({table[0], table[1]}, "Ethernet", std::nullopt).index, 1);
}

TEST(GidChoice, WithoutRoceV2AV1EntryIsTakenAndSaidSo) {
  const GidChoice choice = choose_gid(
      {{0, kZeroGid, "IB/RoCE v1", ""}, {1, kIpv4, "IB/RoCE v1", ""}}, "Ethernet", std::nullopt);
  EXPECT_EQ(choice.index, 1);
  EXPECT_THAT(choice.why, ::testing::HasSubstr("no RoCE v2"));
  EXPECT_FALSE(choose_gid({{0, kZeroGid, "", ""}}, "Ethernet", std::nullopt).index);
  EXPECT_FALSE(choose_gid({}, "Ethernet", std::nullopt).index);
}

TEST(GidChoice, InfinibandUsesThePortGidAndAnOverrideMustNameAnEntry) {
  const std::vector<GidEntry> table = {
      {0, kLinkLocal, "IB/RoCE v1", ""}, {1, kIpv4, "RoCE v2", ""}, {2, kZeroGid, "", ""}};
  EXPECT_EQ(choose_gid(table, "InfiniBand", std::nullopt).index, 0);
  EXPECT_EQ(choose_gid(table, "Ethernet", 0).index, 0);
  EXPECT_FALSE(choose_gid(table, "Ethernet", 2).index);  // empty entry
  const GidChoice missing = choose_gid(table, "Ethernet", 9);
  EXPECT_FALSE(missing.index);
  EXPECT_THAT(missing.why, ::testing::HasSubstr("--gid-index 9"));
}

TEST(PortReadiness, OnlyAnActiveLinkUpPortWithARateCarriesATest) {
  IbPort port;
  port.device = "mlx5_0";
  port.port = 1;
  port.state = "ACTIVE";
  port.phys_state = "LinkUp";
  port.rate_gbps = 400;
  EXPECT_FALSE(port_not_ready(port));
  port.rate_gbps.reset();
  EXPECT_EQ(port_not_ready(port), "mlx5_0 port 1: rate unknown");
  port.rate_gbps = 400;
  port.phys_state = "Polling";
  EXPECT_EQ(port_not_ready(port), "mlx5_0 port 1: physical state Polling");
  port.state = "DOWN";
  EXPECT_EQ(port_not_ready(port), "mlx5_0 port 1: state DOWN");
}

// Lines in the format NCCL prints them (format strings in nccl_net_log.hpp), two ranks
// interleaved, with NCCL's "host:pid:tid [dev] NCCL INFO " prefix.
constexpr std::string_view kGdrLog =
    "node1:4242:4242 [0] NCCL INFO Bootstrap : Using ib0:10.0.0.1<0>\n"
    "node1:4242:4250 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB "
    "ib0:10.0.0.1<0>\n"
    "node1:4242:4242 [0] NCCL INFO Using network IB\n"
    "node1:4243:4243 [1] NCCL INFO Using network IB\n"
    "node1:4242:4250 [0] NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'\n"
    "node1:4242:4250 [0] NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 1 'mlx5_1'\n"
    "node1:4242:4260 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA\n"
    "node1:4243:4261 [1] NCCL INFO Channel 01/0 : 1[1] -> 9[1] [send] via "
    "NET/IB/1(3)/GDRDMA/Shared\n"
    "node1:4242:4260 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [receive] via NET/IB/0/GDRDMA\n";

TEST(NcclNetLog, IbWithGpuDirectRdmaOnEveryConnectionIsWhatAFabricShouldShow) {
  const NcclNetChoice choice = parse_nccl_net_log(kGdrLog);
  EXPECT_EQ(choice.network, "IB");
  EXPECT_THAT(choice.ib_devices, ElementsAre("mlx5_0:1/IB", "mlx5_1:1/IB"));
  EXPECT_EQ(choice.gdr_by_hca, (std::map<std::string, bool>{{"mlx5_0", true}, {"mlx5_1", true}}));
  EXPECT_EQ(choice.net_send_channels, 2);
  EXPECT_EQ(choice.gdr_send_channels, 2);
  EXPECT_THAT(choice.net_devices, ElementsAre("IB/0", "IB/1"));
  EXPECT_FALSE(nccl_net_problem(choice));
}

TEST(NcclNetLog, AConnectionWithoutGdrdmaIsStagingAndNamesItsLine) {
  const std::string log = std::string(kGdrLog) +
                          "node1:4242:4260 [0] NCCL INFO Channel 02/0 : 0[0] -> 8[0] [send] via "
                          "NET/IB/0\n";
  const auto problem = nccl_net_problem(parse_nccl_net_log(log));
  ASSERT_TRUE(problem);
  EXPECT_THAT(*problem, ::testing::HasSubstr("host memory"));
  EXPECT_THAT(*problem, ::testing::HasSubstr("Channel 02/0 : 0[0] -> 8[0] [send] via NET/IB/0"));
}

TEST(NcclNetLog, GdrDisabledForAnHcaIsStaging) {
  const auto choice = parse_nccl_net_log(
      "h:1:1 [0] NCCL INFO Using network IB\n"
      "h:1:2 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n");
  EXPECT_EQ(choice.gdr_by_hca.at("mlx5_0"), false);
  ASSERT_TRUE(nccl_net_problem(choice));
  EXPECT_THAT(*nccl_net_problem(choice), ::testing::HasSubstr("GPU Direct RDMA Disabled"));
}

TEST(NcclNetLog, SocketsAreFlaggedWithTheLineThatShowsThem) {
  const auto choice = parse_nccl_net_log(
      "h:1:1 [0] NCCL INFO NET/IB : No device found.\n"
      "h:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
      "h:1:1 [0] NCCL INFO Using network Socket\n");
  EXPECT_TRUE(choice.ib_no_device);
  const auto problem = nccl_net_problem(choice);
  ASSERT_TRUE(problem);
  EXPECT_THAT(*problem, ::testing::HasSubstr("sockets"));
  EXPECT_THAT(*problem, ::testing::HasSubstr("NET/IB found no device"));
  EXPECT_THAT(*problem, ::testing::HasSubstr("h:1:1 [0] NCCL INFO Using network Socket"));
}

TEST(NcclNetLog, TextWithoutNcclLinesIsNotEvidenceOfAnything) {
  const auto choice = parse_nccl_net_log("warning: something\nNCCL WARN Using network IB\n");
  EXPECT_FALSE(choice.network);
  EXPECT_TRUE(nccl_net_problem(choice));
}

}  // namespace
}  // namespace commcert
