// commcert p2p's plan (bench/p2p_plan.cpp): which tests a node gets, the order a sample is queued
// in, the pointer chase's cycle, the figures and the record each stream gives, and the flags.

#include <algorithm>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "bench/p2p_plan.hpp"
#include "cli/p2p_command.hpp"
#include "core/errors.hpp"
#include "temp_directory.hpp"

namespace commcert {
namespace {

std::vector<std::vector<bool>> all_peers(int n) {
  return std::vector<std::vector<bool>>(static_cast<std::size_t>(n),
                                        std::vector<bool>(static_cast<std::size_t>(n), true));
}

HostNuma two_sockets(int gpus) {
  HostNuma numa;
  numa.online_nodes = {0, 1};
  for (int g = 0; g < gpus; ++g)
    numa.gpu_node.emplace_back(g < gpus / 2 ? 0 : 1);
  return numa;
}

std::size_t count(const std::vector<P2pTest>& tests, P2pPath path) {
  return static_cast<std::size_t>(std::count_if(
      tests.begin(), tests.end(), [path](const P2pTest& t) { return t.path == path; }));
}

TEST(P2pPlan, OneGpuGetsHostAndLocalTestsAndOneSkippedPairTest) {
  const auto tests = plan_p2p_tests(1, all_peers(1), two_sockets(1), {});
  // ce, sm and the pointer chase in its own memory.
  EXPECT_EQ(count(tests, P2pPath::kDeviceLocal), 3u);
  // gpu_node {0}: its own node and node 1, both directions.
  EXPECT_EQ(count(tests, P2pPath::kHostGpu), 4u);
  ASSERT_EQ(count(tests, P2pPath::kGpuGpu), 1u);
  const auto pair = std::find_if(tests.begin(), tests.end(),
                                 [](const P2pTest& t) { return t.path == P2pPath::kGpuGpu; });
  EXPECT_EQ(pair->skip_reason, "one GPU");
  EXPECT_TRUE(pair->streams.empty());
  for (const P2pTest& t : tests) {
    if (t.path != P2pPath::kGpuGpu) {
      EXPECT_FALSE(t.skip_reason);
    }
  }
}

TEST(P2pPlan, EveryOrderedPairGetsEveryMethodAndAccessOneWayAndEachPairBothWaysOnce) {
  const int n = 8;
  const auto tests = plan_p2p_tests(n, all_peers(n), two_sockets(n), {});
  std::set<std::tuple<int, int, P2pMethod, P2pAccess, bool>> seen;
  std::size_t bidirectional = 0;
  for (const P2pTest& t : tests) {
    if (t.path != P2pPath::kGpuGpu) continue;
    ASSERT_FALSE(t.skip_reason);
    EXPECT_EQ(t.peer_access, true);
    const P2pStream& first = t.streams.front();
    EXPECT_TRUE(
        seen.emplace(*first.src.gpu, *first.dst.gpu, *t.method, *t.access, t.bidirectional).second)
        << "a test planned twice";
    // The issuing GPU is the source for write, the destination for read.
    EXPECT_EQ(first.device, *t.access == P2pAccess::kWrite ? *first.src.gpu : *first.dst.gpu);
    if (t.bidirectional) {
      ++bidirectional;
      ASSERT_EQ(t.streams.size(), 2u);
      EXPECT_EQ(t.streams[1].src, first.dst);
      EXPECT_EQ(t.streams[1].dst, first.src);
      EXPECT_LT(*first.src.gpu, *first.dst.gpu);
    } else {
      EXPECT_EQ(t.streams.size(), 1u);
    }
  }
  const std::size_t ordered = n * (n - 1);
  // (ce, sm) x (write, read) one way + the pointer chase, per ordered pair.
  EXPECT_EQ(count(tests, P2pPath::kGpuGpu) - bidirectional, ordered * 5);
  EXPECT_EQ(bidirectional, ordered / 2 * 4);
}

TEST(P2pPlan, APairWithoutPeerAccessEitherWayIsSkippedSayingSo) {
  auto peers = all_peers(3);
  peers[2][0] = false;  // GPU 2 cannot map GPU 0: the pair {0, 2} is not measurable either way
  const auto tests = plan_p2p_tests(3, peers, two_sockets(3), {});
  int skipped = 0;
  for (const P2pTest& t : tests) {
    if (t.path != P2pPath::kGpuGpu) continue;
    if (t.skip_reason) {
      ++skipped;
      EXPECT_EQ(t.peer_access, false);
      EXPECT_NE(t.skip_reason->find("cudaDeviceCanAccessPeer"), std::string::npos);
      const std::set<int> ends = {*t.skipped_src, *t.skipped_dst};
      EXPECT_EQ(ends, (std::set<int>{0, 2}));
      continue;
    }
    const std::set<int> ends = {*t.streams[0].src.gpu, *t.streams[0].dst.gpu};
    EXPECT_NE(ends, (std::set<int>{0, 2}));
  }
  EXPECT_EQ(skipped, 2);  // one record per ordered pair
}

TEST(P2pPlan, HostMemoryComesFromTheGpusOwnNodeAndOneOther) {
  HostNuma numa;
  numa.online_nodes = {0, 1, 2, 3};
  numa.gpu_node = {2, std::nullopt};
  P2pSelection only_host{true, false, false, false, true, false};
  const auto tests = plan_p2p_tests(2, all_peers(2), numa, only_host);
  std::vector<std::tuple<int, std::optional<int>, std::optional<bool>, bool>> got;
  for (const P2pTest& t : tests) {
    ASSERT_EQ(t.path, P2pPath::kHostGpu);
    const P2pStream& s = t.streams.front();
    const bool to_device = s.src.is_host();
    const P2pEndpoint& host = to_device ? s.src : s.dst;
    const P2pEndpoint& device = to_device ? s.dst : s.src;
    EXPECT_EQ(s.device, *device.gpu);
    got.emplace_back(*device.gpu, host.numa_node, t.host_numa_local, to_device);
  }
  using Row = std::tuple<int, std::optional<int>, std::optional<bool>, bool>;
  const std::vector<Row> want = {{0, 2, true, true},
                                 {0, 2, true, false},
                                 {0, 0, false, true},
                                 {0, 0, false, false},
                                 // Unknown node: unbound host memory, locality unknown.
                                 {1, std::nullopt, std::nullopt, true},
                                 {1, std::nullopt, std::nullopt, false}};
  EXPECT_EQ(got, want);
}

TEST(P2pPlan, ASingleNodeMachineHasNoOtherNodeToCopyFrom) {
  HostNuma numa;
  numa.online_nodes = {0};
  numa.gpu_node = {0};
  const auto tests = plan_p2p_tests(1, all_peers(1), numa, {});
  EXPECT_EQ(count(tests, P2pPath::kHostGpu), 2u);
}

TEST(P2pPlan, TheSelectionLeavesOutWhatWasNotAskedFor) {
  const P2pSelection ce_pairs{true, false, false, true, false, false};
  const auto tests = plan_p2p_tests(2, all_peers(2), two_sockets(2), ce_pairs);
  ASSERT_FALSE(tests.empty());
  for (const P2pTest& t : tests) {
    EXPECT_EQ(t.path, P2pPath::kGpuGpu);
    EXPECT_EQ(t.method, P2pMethod::kCopyEngine);
  }
  EXPECT_TRUE(plan_p2p_tests(0, {}, {}, {}).empty());
}

TEST(P2pQueue, EverySpinKernelIsQueuedBeforeAnyCopyAndReleasedOnlyAfterTheLast) {
  using K = QueueStep::Kind;
  for (const int streams : {1, 2}) {
    for (const int copies : {1, 8}) {
      const auto steps = plan_sample_queue(streams, copies);
      ASSERT_EQ(steps.size(), static_cast<std::size_t>(streams * (3 + copies) + 1));
      EXPECT_EQ(steps.back(), (QueueStep{K::kRelease, -1}));
      std::vector<bool> spun(static_cast<std::size_t>(streams), false);
      std::vector<bool> started(static_cast<std::size_t>(streams), false);
      std::vector<int> copied(static_cast<std::size_t>(streams), 0);
      int spins = 0;
      for (const QueueStep& step : steps) {
        if (step.kind == K::kRelease) break;
        const auto s = static_cast<std::size_t>(step.stream);
        switch (step.kind) {
          case K::kSpin:
            spun[s] = true;
            ++spins;
            break;
          case K::kStart:
            // No stream starts its clock before every stream is held.
            EXPECT_EQ(spins, streams);
            started[s] = true;
            break;
          case K::kCopy:
            EXPECT_TRUE(started[s]);
            ++copied[s];
            break;
          case K::kStop:
            EXPECT_EQ(copied[s], copies);
            break;
          case K::kRelease:
            break;
        }
      }
      for (int c : copied)
        EXPECT_EQ(c, copies);
    }
  }
  // Two streams take turns, so neither direction is queued wholly ahead of the other.
  const auto two = plan_sample_queue(2, 2);
  std::vector<int> order;
  for (const QueueStep& step : two) {
    if (step.kind == K::kCopy) order.push_back(step.stream);
  }
  EXPECT_EQ(order, (std::vector<int>{0, 1, 0, 1}));
}

TEST(P2pChase, TheCycleVisitsEverySlotOnceBeforeComingBack) {
  for (const std::uint32_t slots : {2U, 3U, 1000U}) {
    const auto next = pointer_chase_cycle(slots, 42);
    ASSERT_EQ(next.size(), slots);
    std::vector<bool> visited(slots, false);
    std::uint32_t at = 0;
    for (std::uint32_t i = 0; i < slots; ++i) {
      EXPECT_FALSE(visited[at]) << "slot " << at << " visited twice";
      visited[at] = true;
      at = next[at];
    }
    EXPECT_EQ(at, 0U);
  }
  EXPECT_NE(pointer_chase_cycle(1000, 1), pointer_chase_cycle(1000, 2));
  EXPECT_EQ(pointer_chase_cycle(1000, 1), pointer_chase_cycle(1000, 1));
}

TEST(P2pFigures, BandwidthIsBytesTimesCopiesOverTheMedianSample) {
  const P2pMeasurement m = p2p_measurement(P2pMethod::kCopyEngine, 1000, 4, 1, {2.0, 1.0, 100.0});
  EXPECT_EQ(m.iterations, 3);
  EXPECT_EQ(m.warmup, 1);
  ASSERT_TRUE(m.bytes_per_s);
  EXPECT_DOUBLE_EQ(*m.bytes_per_s, 4000.0 / 2.0);
  EXPECT_FALSE(m.latency_s);
  EXPECT_EQ(m.samples_s, (std::vector<double>{2.0, 1.0, 100.0}));
}

TEST(P2pFigures, LatencyIsTheMedianSampleOverItsLoads) {
  const P2pMeasurement m =
      p2p_measurement(P2pMethod::kPointerChase, 1 << 20, 1000, 0, {0.002, 0.001, 0.003});
  ASSERT_TRUE(m.latency_s);
  EXPECT_DOUBLE_EQ(*m.latency_s, 0.002 / 1000);
  EXPECT_FALSE(m.bytes_per_s);
  EXPECT_THROW((void)p2p_measurement(P2pMethod::kSmCopy, 1, 1, 0, {}), std::invalid_argument);
}

std::vector<GpuIdentity> node_gpus() {
  return {{4, "GPU-a", "0000:1b:00.0", "NVIDIA H200"}, {6, "GPU-b", "0000:9a:00.0", "NVIDIA H200"}};
}

TEST(P2pRecords, EachStreamOfABidirectionalTestIsOneRecordInNodeWideIndices) {
  P2pTest t;
  t.method = P2pMethod::kSmCopy;
  t.access = P2pAccess::kRead;
  t.bidirectional = true;
  t.peer_access = true;
  t.streams = {{1, P2pEndpoint::device(0), P2pEndpoint::device(1)},
               {0, P2pEndpoint::device(1), P2pEndpoint::device(0)}};
  const P2pRecord back = p2p_record({}, t, 1, node_gpus(), {});
  EXPECT_EQ(back.path, "gpu_gpu");
  EXPECT_EQ(back.method, "sm_copy");
  EXPECT_EQ(back.access, "read");
  EXPECT_TRUE(back.bidirectional);
  EXPECT_EQ(back.src_gpu, 6);
  EXPECT_EQ(back.dst_gpu, 4);
  ASSERT_TRUE(back.origin.gpu);
  EXPECT_EQ(back.origin.gpu->index, 4);  // the reader ran it
  EXPECT_FALSE(back.host_numa_node);
}

TEST(P2pRecords, HostAndSkippedTestsSayWhereTheMemoryWasAndWhy) {
  P2pTest host;
  host.path = P2pPath::kHostGpu;
  host.method = P2pMethod::kCopyEngine;
  host.host_numa_local = false;
  host.streams = {{1, P2pEndpoint::device(1), P2pEndpoint::host(0)}};
  const P2pRecord d2h = p2p_record({}, host, 0, node_gpus(), {});
  EXPECT_EQ(d2h.src_gpu, 6);
  EXPECT_FALSE(d2h.dst_gpu);
  EXPECT_EQ(d2h.host_numa_node, 0);
  EXPECT_EQ(d2h.host_numa_local, false);

  P2pTest lone;
  lone.skip_reason = "one GPU";
  lone.skipped_src = 0;
  const P2pRecord skipped =
      p2p_record({}, lone, 0, {node_gpus()[0]}, {RecordStatus::kSkipped, "one GPU", {}});
  EXPECT_EQ(skipped.status, RecordStatus::kSkipped);
  EXPECT_EQ(skipped.reason, "one GPU");
  EXPECT_EQ(skipped.path, "gpu_gpu");
  EXPECT_FALSE(skipped.method);
  EXPECT_EQ(skipped.src_gpu, 4);
  EXPECT_FALSE(skipped.dst_gpu);
  EXPECT_FALSE(skipped.measurement);
}

TEST(P2pNuma, OnlineNodesComeFromSysfsAndNothingWhenUnreadable) {
  test_support::TempDirectory sysfs;
  EXPECT_TRUE(online_numa_nodes(sysfs.path()).empty());
  std::filesystem::create_directories(sysfs.path() / "devices/system/node");
  std::ofstream(sysfs.path() / "devices/system/node/online") << "0-1,3\n";
  EXPECT_EQ(online_numa_nodes(sysfs.path()), (std::vector<int>{0, 1, 3}));
  std::ofstream(sysfs.path() / "devices/system/node/online") << "zero\n";
  EXPECT_TRUE(online_numa_nodes(sysfs.path()).empty());
}

TEST(P2pFlags, MethodsAndPathsAreReadAndAnUnknownNameIsAUsageError) {
  const P2pSelection s = parse_p2p_selection("sm,latency", "host_gpu");
  EXPECT_FALSE(s.copy_engine);
  EXPECT_TRUE(s.sm_copy);
  EXPECT_TRUE(s.pointer_chase);
  EXPECT_FALSE(s.gpu_gpu);
  EXPECT_TRUE(s.host_gpu);
  EXPECT_FALSE(s.device_local);
  EXPECT_THROW((void)parse_p2p_selection("ce,nvlink", "gpu_gpu"), UsageError);
  EXPECT_THROW((void)parse_p2p_selection("ce", "gpu_gpu,"), UsageError);
}

}  // namespace
}  // namespace commcert
