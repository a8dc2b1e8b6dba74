// links --transport verbs: the logic of the RDMA data path that runs without a device (connection
// info on the wire, queue-pair attributes, the request window, GPU registration order, rails, the
// record). The data path itself has not run here: no RDMA device (docs/links.md).
#include <map>
#include <stdexcept>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "links/link_measurement.hpp"
#include "links/link_schedule.hpp"
#include "links/verbs_counters.hpp"
#include "links/verbs_endpoint.hpp"
#include "links/verbs_gpu_registration.hpp"
#include "links/verbs_qp_plan.hpp"
#include "links/verbs_window.hpp"
#include "records/link.hpp"
#include "temp_directory.hpp"

namespace commcert {
namespace {

using test_support::TempDirectory;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

VerbsEndpoint roce_endpoint() {
  VerbsEndpoint e;
  e.qp_number = 0xabcdef;
  e.lid = 0;
  for (std::size_t i = 0; i < e.gid.size(); ++i)
    e.gid[i] = static_cast<std::uint8_t>(0xf0 + i);
  e.gid_index = 3;
  e.psn = 0x123456;
  e.rkey = 0xdeadbeef;
  e.address = 0x7f0012345000;
  e.length = 16 << 20;
  e.mtu = 5;
  e.link_layer = VerbsLinkLayer::kEthernet;
  e.device = "mlx5_0:1";
  e.registration = "dmabuf";
  return e;
}

std::string invalid_argument_of(const std::string& text) {
  try {
    (void)decode_endpoint(text, "process 3");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

TEST(VerbsEndpoint, EveryFieldSurvivesTheWireIncludingNoGid) {
  const VerbsEndpoint sent = roce_endpoint();
  const VerbsEndpoint got = decode_endpoint(encode_endpoint(sent), "process 1");
  EXPECT_EQ(got.qp_number, sent.qp_number);
  EXPECT_EQ(got.lid, sent.lid);
  EXPECT_EQ(got.gid, sent.gid);
  EXPECT_EQ(got.gid_index, 3);
  EXPECT_EQ(got.psn, sent.psn);
  EXPECT_EQ(got.rkey, sent.rkey);
  EXPECT_EQ(got.address, sent.address);
  EXPECT_EQ(got.length, sent.length);
  EXPECT_EQ(got.mtu, 5);
  EXPECT_EQ(got.link_layer, VerbsLinkLayer::kEthernet);
  EXPECT_EQ(got.device, "mlx5_0:1");
  EXPECT_EQ(got.registration, "dmabuf");

  VerbsEndpoint ib = sent;
  ib.link_layer = VerbsLinkLayer::kInfiniBand;
  ib.gid_index = -1;
  ib.lid = 0xbeef;
  ib.registration = "host";
  const VerbsEndpoint back = decode_endpoint(encode_endpoint(ib), "process 1");
  EXPECT_EQ(back.gid_index, -1);
  EXPECT_EQ(back.lid, 0xbeef);
  EXPECT_EQ(back.link_layer, VerbsLinkLayer::kInfiniBand);
}

TEST(VerbsEndpoint, AnotherVersionOrAMissingOrExtraFieldIsRefusedNamingTheSender) {
  const std::string good = encode_endpoint(roce_endpoint());
  EXPECT_THAT(invalid_argument_of(replaced(good, "commcert-verbs 1 ", "commcert-verbs 2 ")),
              AllOf(HasSubstr("process 3"), HasSubstr("version 2")));
  EXPECT_THAT(invalid_argument_of(good.substr(0, good.rfind(' '))), HasSubstr("13 fields"));
  EXPECT_THAT(invalid_argument_of(good + " extra=1"), HasSubstr("15 fields"));
  EXPECT_THAT(invalid_argument_of(""), HasSubstr("not commcert verbs"));
  EXPECT_THAT(invalid_argument_of("hello world"), HasSubstr("not commcert verbs"));
  // Our line with nothing after the version: the field count says what is wrong.
  EXPECT_THAT(invalid_argument_of("commcert-verbs 1"), HasSubstr("2 fields, expected 14"));
  EXPECT_THAT(invalid_argument_of("commcert-verbs"), HasSubstr("not commcert verbs"));
}

TEST(VerbsEndpoint, ValuesOutOfRangeAreRefusedAtTheirLimit) {
  const std::string good = encode_endpoint(roce_endpoint());
  // QP numbers and PSNs are 24 bits: 2^24 - 1 passes, 2^24 does not.
  EXPECT_EQ(decode_endpoint(replaced(good, "psn=1193046", "psn=16777215"), "p").psn, 16777215U);
  EXPECT_THAT(invalid_argument_of(replaced(good, "psn=1193046", "psn=16777216")),
              HasSubstr("psn=16777216 is above"));
  EXPECT_THAT(invalid_argument_of(replaced(good, "qpn=11259375", "qpn=16777216")),
              HasSubstr("qpn"));
  // MTU: enum ibv_mtu 1..5.
  EXPECT_EQ(decode_endpoint(replaced(good, "mtu=5", "mtu=1"), "p").mtu, 1);
  EXPECT_THAT(invalid_argument_of(replaced(good, "mtu=5", "mtu=6")), HasSubstr("mtu=6"));
  EXPECT_THAT(invalid_argument_of(replaced(good, "mtu=5", "mtu=0")), HasSubstr("mtu=0"));
  EXPECT_THAT(invalid_argument_of(replaced(good, "mtu=5", "mtu=x")), HasSubstr("not a number"));
  EXPECT_THAT(invalid_argument_of(replaced(good, "gid=f0", "gid=g0")), HasSubstr("32 hex"));
  EXPECT_THAT(invalid_argument_of(replaced(good, "gid=f0", "gid=f")), HasSubstr("32 hex"));
  // 31 hex digits and a valid digit pair after: still not a GID.
  EXPECT_THAT(invalid_argument_of(replaced(good, "gid=f0", "gid=0")), HasSubstr("32 hex"));
  EXPECT_THAT(invalid_argument_of(replaced(good, "ll=eth", "ll=x")), HasSubstr("link layer"));
  EXPECT_THAT(invalid_argument_of(replaced(good, "len=16777216", "len=0")), HasSubstr("len=0"));
  EXPECT_THAT(invalid_argument_of(replaced(good, "reg=dmabuf", "reg=gpu")), HasSubstr("reg=gpu"));
  EXPECT_THAT(invalid_argument_of(replaced(good, "dev=mlx5_0:1", "dev=")), HasSubstr("dev="));
}

TEST(VerbsEndpoint, MtuBytesFollowEnumIbvMtu) {
  EXPECT_EQ(mtu_bytes(1), 256);
  EXPECT_EQ(mtu_bytes(3), 1024);
  EXPECT_EQ(mtu_bytes(5), 4096);
  EXPECT_EQ(mtu_bytes(0), 0);
  EXPECT_EQ(mtu_bytes(6), 0);
}

VerbsPortFacts roce_port() {
  VerbsPortFacts p;
  p.link_layer = VerbsLinkLayer::kEthernet;
  p.active_mtu = 3;
  p.gid_index = 5;
  p.max_rd_atomic = 16;
  p.max_dest_rd_atomic = 16;
  p.port = 2;
  return p;
}

TEST(VerbsQpPlan, RoceAddressesThePeerByGidWithAGrhAndTheSmallerMtu) {
  const VerbsEndpoint remote = roce_endpoint();            // MTU 4096
  const VerbsRtrPlan rtr = plan_rtr(roce_port(), remote);  // ours 1024
  EXPECT_EQ(rtr.path_mtu, 3);
  EXPECT_TRUE(rtr.is_global);
  EXPECT_EQ(rtr.sgid_index, 5);
  EXPECT_EQ(rtr.dgid, remote.gid);
  EXPECT_EQ(rtr.dlid, 0);
  EXPECT_GT(rtr.hop_limit, 1);
  EXPECT_EQ(rtr.dest_qp_number, remote.qp_number);
  EXPECT_EQ(rtr.receive_psn, remote.psn);
  EXPECT_EQ(rtr.port, 2);
  VerbsEndpoint mine = roce_endpoint();
  mine.psn = 77;
  EXPECT_EQ(plan_rts(roce_port(), mine, remote).send_psn, 77U);
}

TEST(VerbsQpPlan, RoceIgnoresTheLidAndAcceptsGidIndexZero) {
  // RoCE routes by GID only: a LID the peer sent must not be used, and GID index 0 is a GID.
  VerbsPortFacts local = roce_port();
  local.gid_index = 0;
  VerbsEndpoint remote = roce_endpoint();
  remote.gid_index = 0;
  remote.lid = 7;
  const VerbsRtrPlan rtr = plan_rtr(local, remote);
  EXPECT_TRUE(rtr.is_global);
  EXPECT_EQ(rtr.sgid_index, 0);
  EXPECT_EQ(rtr.dlid, 0);
  EXPECT_EQ(rtr.hop_limit, 64);  // what perftest and the kernel's RoCE defaults use
}

TEST(VerbsQpPlan, InfinibandWithoutAGidRoutesByLidWithoutAGrh) {
  VerbsPortFacts local;
  local.active_mtu = 5;
  VerbsEndpoint remote = roce_endpoint();
  remote.link_layer = VerbsLinkLayer::kInfiniBand;
  remote.gid_index = -1;
  remote.lid = 17;
  remote.mtu = 4;
  const VerbsRtrPlan rtr = plan_rtr(local, remote);
  EXPECT_FALSE(rtr.is_global);
  EXPECT_EQ(rtr.dlid, 17);
  EXPECT_EQ(rtr.path_mtu, 4);
  // --gid-index on both ends of an InfiniBand pair adds the GRH, as perftest's -x does.
  local.gid_index = 0;
  remote.gid_index = 0;
  EXPECT_TRUE(plan_rtr(local, remote).is_global);
}

TEST(VerbsQpPlan, EndsThatCannotConnectAreRefused) {
  VerbsEndpoint ib = roce_endpoint();
  ib.link_layer = VerbsLinkLayer::kInfiniBand;
  EXPECT_THROW((void)plan_rtr(roce_port(), ib), std::invalid_argument);
  VerbsEndpoint no_gid = roce_endpoint();
  no_gid.gid_index = -1;
  EXPECT_THROW((void)plan_rtr(roce_port(), no_gid), std::invalid_argument);
  VerbsPortFacts unknown_mtu = roce_port();
  unknown_mtu.active_mtu = 0;
  EXPECT_THROW((void)plan_rtr(unknown_mtu, roce_endpoint()), std::invalid_argument);
  VerbsPortFacts ib_local;
  ib_local.active_mtu = 5;
  VerbsEndpoint lidless = ib;
  lidless.lid = 0;
  lidless.gid_index = -1;
  EXPECT_THROW((void)plan_rtr(ib_local, lidless), std::invalid_argument);
}

TEST(VerbsQpPlan, ReadsInFlightFollowTheDeviceUpToSixteen) {
  VerbsPortFacts port = roce_port();
  port.max_rd_atomic = 4;
  port.max_dest_rd_atomic = 64;
  EXPECT_EQ(plan_rts(port, roce_endpoint(), roce_endpoint()).max_rd_atomic, 4);
  EXPECT_EQ(plan_rtr(port, roce_endpoint()).max_dest_rd_atomic, 16);
  port.max_rd_atomic = 0;  // a device that reports none still allows one
  EXPECT_EQ(plan_rts(port, roce_endpoint(), roce_endpoint()).max_rd_atomic, 1);
}

TEST(RequestWindow, ADeepQueuePostsTheWholeWindowAtOnce) {
  RequestWindow window(4, 8);
  EXPECT_EQ(window.postable(), 4);
  window.posted(4);
  EXPECT_EQ(window.postable(), 0);
  EXPECT_EQ(window.outstanding(), 4);
  window.completed(3);
  EXPECT_FALSE(window.done());
  window.completed(1);
  EXPECT_TRUE(window.done());
}

TEST(RequestWindow, AShallowQueueRefillsAsCompletionsArriveWithFreshOffsets) {
  RequestWindow window(5, 2);
  std::vector<int> indices;
  while (!window.done()) {
    const int count = window.postable();
    for (int i = 0; i < count; ++i)
      indices.push_back(window.next_index() + i);
    window.posted(count);
    window.completed(1);  // one completion per poll
  }
  EXPECT_THAT(indices, ElementsAre(0, 1, 2, 3, 4));
  EXPECT_EQ(message_offset(4, 65536), 4U * 65536U);
}

TEST(RequestWindow, CountsThatCannotHappenAreTransportBugs) {
  RequestWindow window(3, 2);
  EXPECT_THROW(window.posted(3), std::logic_error);
  window.posted(2);
  EXPECT_THROW(window.completed(3), std::logic_error);
  EXPECT_THROW(RequestWindow(0, 1), std::logic_error);
  EXPECT_THROW(RequestWindow(1, 0), std::logic_error);
  try {
    RequestWindow(5, 0);
    ADD_FAILURE() << "accepted a queue depth of 0";
  } catch (const std::logic_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("RequestWindow(5, 0)"));  // the bug report names both counts
  }
}

TEST(RequestWindow, TheBufferHoldsTheLargestWindowOrTheLatencyMessage) {
  EXPECT_EQ(verbs_buffer_bytes(4 << 20, 4, 8), 16U << 20);
  EXPECT_EQ(verbs_buffer_bytes(8, 1, 1 << 20), 1U << 20);
}

TEST(GpuRegistration, DmaBufFirstWhenBothSidesOfferItThenPeerMemory) {
  const auto both = plan_gpu_registration({true, true, true});
  EXPECT_THAT(both.order, ElementsAre(GpuRegistration::kDmaBuf, GpuRegistration::kPeerMemory));
  const auto old_verbs = plan_gpu_registration({false, true, true});
  EXPECT_THAT(old_verbs.order, ElementsAre(GpuRegistration::kPeerMemory));
  EXPECT_THAT(old_verbs.why, HasSubstr("ibv_reg_dmabuf_mr"));
  const auto old_driver = plan_gpu_registration({true, false, false});
  EXPECT_THAT(old_driver.order, ElementsAre(GpuRegistration::kPeerMemory));
  EXPECT_THAT(old_driver.why, AllOf(HasSubstr("CUDA driver"), HasSubstr("nvidia_peermem")));
  EXPECT_EQ(both.why, "");
  EXPECT_EQ(name_of(GpuRegistration::kDmaBuf), "dmabuf");
  EXPECT_EQ(name_of(GpuRegistration::kPeerMemory), "peer_memory");
}

TEST(GpuRegistration, PeerMemoryIsSeenByItsModuleInSysfs) {
  TempDirectory sysfs;
  EXPECT_FALSE(peer_memory_module_loaded(sysfs.path()));
  std::filesystem::create_directories(sysfs.path() / "module" / "nvidia_peermem");
  EXPECT_TRUE(peer_memory_module_loaded(sysfs.path()));
}

TEST(VerbsRails, WithoutTopologyLocalRankIDrivesNicIAndTheRestSitOut) {
  EXPECT_THAT(verbs_rails_for_node({}, {"mlx5_0", "mlx5_1"}, 3), ElementsAre(0, 1, -1));
  EXPECT_THAT(verbs_rails_for_node({{}, {}}, {"mlx5_0"}, 1), ElementsAre(0));
  EXPECT_THAT(verbs_rails_for_node({}, {}, 2), ElementsAre(-1, -1));
}

TEST(VerbsRails, KnownAffinityWinsOverPosition) {
  // GPU 0 sits next to mlx5_1, GPU 1 next to mlx5_0.
  EXPECT_THAT(verbs_rails_for_node({{"mlx5_1"}, {"mlx5_0"}}, {"mlx5_0", "mlx5_1"}, 2),
              ElementsAre(1, 0));
}

TEST(VerbsRails, EachRanksNicsAreThoseOfTheGpuItDrivesFoundByAddressNotPosition) {
  // The topology lists GPUs in PCI order; CUDA (CUDA_VISIBLE_DEVICES=1,0, or FASTEST_FIRST on a
  // mixed node) gives local rank 0 the second of them.
  const std::vector<std::pair<std::string, std::vector<std::string>>> topology = {
      {"0000:1b:00.0", {"mlx5_0"}}, {"0000:3b:00.0", {"mlx5_1"}}};
  const auto nearest = nearest_nics_by_address(topology, {"0000:3b:00.0", "0000:1b:00.0"});
  EXPECT_THAT(nearest, ElementsAre(ElementsAre("mlx5_1"), ElementsAre("mlx5_0")));
  EXPECT_THAT(verbs_rails_for_node(nearest, {"mlx5_0", "mlx5_1"}, 2), ElementsAre(1, 0));
  // An unknown address, or one the topology lacks, has no nearest NICs; with none known at all
  // the ranks fall back to position.
  EXPECT_THAT(nearest_nics_by_address(topology, {"", "0000:5e:00.0", "0000:1b:00.0"}),
              ElementsAre(IsEmpty(), IsEmpty(), ElementsAre("mlx5_0")));
  const auto unknown = nearest_nics_by_address(topology, {"", ""});
  EXPECT_THAT(verbs_rails_for_node(unknown, {"mlx5_0", "mlx5_1"}, 2), ElementsAre(0, 1));
  EXPECT_THAT(nearest_nics_by_address({}, {"0000:1b:00.0"}), ElementsAre(IsEmpty()));
}

TEST(VerbsRecord, HostAndGpuRecordsSayHowEachEndRegisteredItsBuffer) {
  LinkPair pair;
  pair.nodes = {"a", "b"};
  pair.ranks = {0, 1};
  RecordOrigin origin;
  origin.host = "a";
  LinkRecord host = link_test_record(
      origin, "verbs", "host", LinkTest::kWriteBandwidth, 0, pair, 0,
      link_measurement(LinkTest::kWriteBandwidth, 1 << 20, 4, 0, {0.001, 0.002, 0.003}));
  host.devices = {"mlx5_0:1", "mlx5_0:1"};
  host.registrations = {"host", "host"};
  const Json h = to_json(host);
  EXPECT_EQ(h["memory"], "host");
  EXPECT_EQ(h["registrations"], Json::array({"host", "host"}));
  EXPECT_EQ(h["devices"], Json::array({"mlx5_0:1", "mlx5_0:1"}));
  // 4 MiB moved in the median 2 ms.
  EXPECT_DOUBLE_EQ(h["bytes_per_s"].get<double>(), 4.0 * (1 << 20) / 0.002);

  LinkRecord gpu = host;
  gpu.memory = "gpu";
  gpu.registrations = {"dmabuf", "peer_memory"};
  const Json g = to_json(gpu);
  EXPECT_EQ(g["memory"], "gpu");
  EXPECT_EQ(g["registrations"], Json::array({"dmabuf", "peer_memory"}));

  const LinkRecord mpi =
      link_test_record(origin, "mpi", "host", LinkTest::kWriteLatency, 0, pair, 0,
                       link_measurement(LinkTest::kWriteLatency, 8, 1, 0, {2e-6, 1e-6, 3e-6}));
  const Json m = to_json(mpi);
  EXPECT_EQ(m["registrations"], Json::array({nullptr, nullptr}));
  EXPECT_DOUBLE_EQ(m["latency_s"].get<double>(), 2e-6);
}

TEST(VerbsCounters, AnErrorCounterAtTheMaximumOfItsWidthIsSaturatedOneBelowIsNot) {
  EXPECT_EQ(error_counter_bits("symbol_error"), 16);
  EXPECT_EQ(error_counter_bits("link_downed"), 8);
  EXPECT_EQ(error_counter_bits("local_link_integrity_errors"), 4);
  EXPECT_EQ(error_counter_bits("port_xmit_data"), 0);
  EXPECT_THAT(saturated_counters({{"symbol_error", 65535},
                                  {"port_rcv_errors", 65534},
                                  {"link_downed", 255},
                                  {"excessive_buffer_overrun_errors", 14},
                                  {"port_xmit_data", 4294967295}}),
              ElementsAre("link_downed", "symbol_error"));
  EXPECT_THAT(saturated_counters({{"excessive_buffer_overrun_errors", 15}}),
              ElementsAre("excessive_buffer_overrun_errors"));
}

TEST(VerbsCounters, EveryErrorCounterHasItsPortCountersWidth) {
  // InfiniBand PortCounters: a wrong width would call a healthy counter saturated, or miss one.
  const std::map<std::string, int> widths = {{"symbol_error", 16},
                                             {"link_error_recovery", 8},
                                             {"link_downed", 8},
                                             {"port_rcv_errors", 16},
                                             {"port_rcv_remote_physical_errors", 16},
                                             {"port_rcv_switch_relay_errors", 16},
                                             {"port_xmit_discards", 16},
                                             {"port_xmit_constraint_errors", 8},
                                             {"port_rcv_constraint_errors", 8},
                                             {"local_link_integrity_errors", 4},
                                             {"excessive_buffer_overrun_errors", 4},
                                             {"VL15_dropped", 16}};
  for (const auto& [name, bits] : widths) {
    EXPECT_EQ(error_counter_bits(name), bits) << name;
    const std::uint64_t maximum = (std::uint64_t{1} << bits) - 1;
    EXPECT_THAT(saturated_counters({{name, maximum}}), ElementsAre(name));
    EXPECT_TRUE(saturated_counters({{name, maximum - 1}}).empty()) << name;
  }
  EXPECT_EQ(error_counter_bits(""), 0);
}

TEST(VerbsCounters, ASaturatedCounterShowsNoGrowthSoItsDeltaIsOnlyALowerBound) {
  // Stuck at 65535 before and after: the delta says 0, the saturation says it could be more.
  const std::map<std::string, std::uint64_t> before = {{"symbol_error", 65535}, {"link_downed", 3}};
  const std::map<std::string, std::uint64_t> after = {{"symbol_error", 65535}, {"link_downed", 4}};
  EXPECT_EQ(counter_deltas(before, after),
            (std::map<std::string, std::int64_t>{{"link_downed", 1}, {"symbol_error", 0}}));
  EXPECT_THAT(saturated_counters(after), ElementsAre("symbol_error"));
}

TEST(VerbsCounters, OneEndsDeltasCrossToThePeerUnchanged) {
  LinkCounterDeltas end;
  end.node = "node1";
  end.device = "mlx5_3";
  end.port = 1;
  end.deltas = {{"symbol_error", 2}, {"link_downed", 0}};
  end.saturated = {"port_rcv_errors"};
  const auto back = decode_counter_end(encode_counter_end(end));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->node, "node1");
  EXPECT_EQ(back->device, "mlx5_3");
  EXPECT_EQ(back->port, 1);
  EXPECT_EQ(back->deltas, end.deltas);
  EXPECT_EQ(back->saturated, end.saturated);
  EXPECT_FALSE(decode_counter_end(""));
  EXPECT_THROW((void)decode_counter_end("{\"node\": 3}"), std::invalid_argument);
  EXPECT_THROW((void)decode_counter_end("not json"), std::invalid_argument);

  LinkRecord record;
  record.counter_deltas = std::vector{end};
  EXPECT_EQ(to_json(record)["counter_deltas"][0]["saturated"], Json::array({"port_rcv_errors"}));
}

}  // namespace
}  // namespace commcert
