#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bench/collectives.hpp"
#include "comm/gpu_runtime.hpp"
#include "comm/nccl_features.hpp"
#include "core/errors.hpp"

namespace commcert {
namespace {

constexpr CollectiveKind kAllKinds[] = {
    CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
    CollectiveKind::kBroadcast, CollectiveKind::kReduce,    CollectiveKind::kAllToAll,
    CollectiveKind::kSendRecv,  CollectiveKind::kGather,    CollectiveKind::kScatter};

// nccl-tests doc/PERFORMANCE.md: the factor by which busbw exceeds algbw.
double expected_bus_factor(CollectiveKind kind, int n) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return 2.0 * (n - 1) / n;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kGather:
    case CollectiveKind::kScatter:
      return static_cast<double>(n - 1) / n;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
    case CollectiveKind::kSendRecv:
      return 1.0;
  }
  return -1;
}

// Collectives whose buffers are split into one chunk per rank (nccl-tests GetCollByteCount
// rounds their per-rank count down to 16 bytes).
bool splits_by_rank(CollectiveKind kind) {
  return kind == CollectiveKind::kAllGather || kind == CollectiveKind::kReduceScatter ||
         kind == CollectiveKind::kAllToAll || kind == CollectiveKind::kGather ||
         kind == CollectiveKind::kScatter;
}

std::vector<CollectiveKind> parse(std::initializer_list<const char*> names) {
  const std::vector<std::string> strings(names.begin(), names.end());
  return parse_collectives(strings);
}

TEST(Collectives, TableIsInEnumOrderSoLookupByKindIsRight) {
  const auto table = all_collectives();
  ASSERT_EQ(table.size(), static_cast<std::size_t>(kCollectiveKindCount));
  for (std::size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(table[i].kind, static_cast<CollectiveKind>(i)) << table[i].name;
  }
  for (const CollectiveKind kind : kAllKinds) {
    EXPECT_EQ(collective_info(kind).kind, kind);
  }
}

TEST(Collectives, StableNamesAndNcclTestsBinaries) {
  const struct {
    CollectiveKind kind;
    const char* name;
    const char* binary;
  } expected[] = {{CollectiveKind::kAllReduce, "allreduce", "all_reduce_perf"},
                  {CollectiveKind::kAllGather, "allgather", "all_gather_perf"},
                  {CollectiveKind::kReduceScatter, "reducescatter", "reduce_scatter_perf"},
                  {CollectiveKind::kBroadcast, "broadcast", "broadcast_perf"},
                  {CollectiveKind::kReduce, "reduce", "reduce_perf"},
                  {CollectiveKind::kAllToAll, "alltoall", "alltoall_perf"},
                  {CollectiveKind::kSendRecv, "sendrecv", "sendrecv_perf"},
                  {CollectiveKind::kGather, "gather", "gather_perf"},
                  {CollectiveKind::kScatter, "scatter", "scatter_perf"}};
  for (const auto& e : expected) {
    EXPECT_EQ(collective_info(e.kind).name, e.name);
    EXPECT_EQ(collective_info(e.kind).nccl_tests_name, e.binary);
  }
}

TEST(Collectives, BusFactorForEveryCollectiveAndRankCount) {
  for (const CollectiveKind kind : kAllKinds) {
    for (int n = 1; n <= 16; ++n) {
      EXPECT_DOUBLE_EQ(collective_info(kind).bus_factor(n), expected_bus_factor(kind, n))
          << collective_info(kind).name << " n=" << n;
    }
  }
}

TEST(Collectives, BusFactorSpotValues) {
  // The numbers people quote: 8-GPU allreduce 1.75, 8-GPU allgather 0.875, one rank 0.
  EXPECT_DOUBLE_EQ(collective_info(CollectiveKind::kAllReduce).bus_factor(8), 1.75);
  EXPECT_DOUBLE_EQ(collective_info(CollectiveKind::kAllGather).bus_factor(8), 0.875);
  EXPECT_DOUBLE_EQ(collective_info(CollectiveKind::kAllReduce).bus_factor(1), 0.0);
  EXPECT_DOUBLE_EQ(collective_info(CollectiveKind::kReduceScatter).bus_factor(1), 0.0);
  EXPECT_DOUBLE_EQ(collective_info(CollectiveKind::kBroadcast).bus_factor(1), 1.0);
}

TEST(Collectives, CountsForWholeBufferCollectives) {
  for (const CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kBroadcast,
                                    CollectiveKind::kReduce, CollectiveKind::kSendRecv}) {
    const auto& info = collective_info(kind);
    for (const int elt : {1, 2, 4, 8}) {
      for (const int n : {1, 2, 3, 4, 8, 16}) {
        // count = bytes / element size, no rounding to 16 bytes, independent of n.
        EXPECT_EQ(info.count_for_bytes(8, elt, n), 8u / elt) << info.name;
        EXPECT_EQ(info.count_for_bytes(100, elt, n), 100u / elt) << info.name;
        EXPECT_EQ(info.count_for_bytes(32 << 20, elt, n), (32u << 20) / elt) << info.name;
        EXPECT_EQ(info.bytes_for_count(1000, elt, n), 1000u * elt) << info.name;
      }
    }
  }
}

TEST(Collectives, CountsForSplitCollectivesRoundTo16Bytes) {
  for (const CollectiveKind kind : kAllKinds) {
    if (!splits_by_rank(kind)) continue;
    const auto& info = collective_info(kind);
    // Worked examples (float, 4 bytes: per-rank count rounded down to a multiple of 4).
    EXPECT_EQ(info.count_for_bytes(8, 4, 4), 0u) << info.name;      // 2 elements / 4 ranks
    EXPECT_EQ(info.count_for_bytes(64, 4, 4), 4u) << info.name;     // 16 / 4 = 4
    EXPECT_EQ(info.count_for_bytes(100, 4, 2), 12u) << info.name;   // 25 / 2 = 12
    EXPECT_EQ(info.count_for_bytes(104, 4, 2), 12u) << info.name;   // 26 / 2 = 13 -> 12
    EXPECT_EQ(info.count_for_bytes(1024, 4, 3), 84u) << info.name;  // 256 / 3 = 85 -> 84
    EXPECT_EQ(info.count_for_bytes(1 << 20, 4, 8), 32768u) << info.name;
    // int8: multiples of 16 elements; double: multiples of 2; half: multiples of 8.
    EXPECT_EQ(info.count_for_bytes(1000, 1, 3), 320u) << info.name;  // 333 -> 320
    EXPECT_EQ(info.count_for_bytes(1000, 8, 3), 40u) << info.name;   // 41 -> 40
    EXPECT_EQ(info.count_for_bytes(1000, 2, 3), 160u) << info.name;  // 166 -> 160
    EXPECT_EQ(info.count_for_bytes(15, 1, 1), 0u) << info.name;      // below 16 bytes
    // The size column: every rank's chunk.
    EXPECT_EQ(info.bytes_for_count(12, 4, 2), 96u) << info.name;
    EXPECT_EQ(info.bytes_for_count(84, 4, 3), 1008u) << info.name;
  }
}

TEST(Collectives, SplitCountsAreAlignedAndNeverExceedTheRequest) {
  for (const CollectiveKind kind : kAllKinds) {
    if (!splits_by_rank(kind)) continue;
    const auto& info = collective_info(kind);
    for (const int elt : {1, 2, 4, 8}) {
      for (int n = 1; n <= 16; ++n) {
        for (std::uint64_t bytes = 0; bytes < 2048; bytes += 7) {
          const std::uint64_t count = info.count_for_bytes(bytes, elt, n);
          EXPECT_EQ(count * elt % 16, 0u);
          const std::uint64_t size = info.bytes_for_count(count, elt, n);
          EXPECT_LE(size, bytes);
          // Rounding loses less than one 16-byte unit per rank (plus the division remainder).
          EXPECT_LT(bytes - size, static_cast<std::uint64_t>(16 * n + elt * n));
        }
      }
    }
  }
}

TEST(ParseCollectives, CanonicalNames) {
  EXPECT_EQ(parse({"allreduce"}), std::vector<CollectiveKind>{CollectiveKind::kAllReduce});
  EXPECT_EQ(parse({"scatter", "gather"}),
            (std::vector<CollectiveKind>{CollectiveKind::kScatter, CollectiveKind::kGather}));
  for (const auto& info : all_collectives()) {
    EXPECT_EQ(parse_collectives(std::vector<std::string>{std::string(info.name)}),
              std::vector<CollectiveKind>{info.kind});
  }
}

TEST(ParseCollectives, NcclTestsBinaryNamesAndSpellings) {
  for (const auto& info : all_collectives()) {
    EXPECT_EQ(parse_collectives(std::vector<std::string>{std::string(info.nccl_tests_name)}),
              std::vector<CollectiveKind>{info.kind})
        << info.nccl_tests_name;
  }
  EXPECT_EQ(parse({"all_reduce"}), std::vector<CollectiveKind>{CollectiveKind::kAllReduce});
  EXPECT_EQ(parse({"reduce-scatter"}), std::vector<CollectiveKind>{CollectiveKind::kReduceScatter});
  EXPECT_EQ(parse({"AllGather"}), std::vector<CollectiveKind>{CollectiveKind::kAllGather});
  EXPECT_EQ(parse({"send_recv"}), std::vector<CollectiveKind>{CollectiveKind::kSendRecv});
  EXPECT_EQ(parse({"all_to_all"}), std::vector<CollectiveKind>{CollectiveKind::kAllToAll});
}

TEST(ParseCollectives, AllMeansEveryCollectiveInTableOrder) {
  std::vector<CollectiveKind> everything;
  for (const auto& info : all_collectives())
    everything.push_back(info.kind);
  EXPECT_EQ(parse({"all"}), everything);
  EXPECT_EQ(parse({"ALL"}), everything);
}

TEST(ParseCollectives, KeepsTheGivenOrderAndDropsRepeats) {
  EXPECT_EQ(parse({"reduce", "allreduce", "reduce", "all_reduce_perf"}),
            (std::vector<CollectiveKind>{CollectiveKind::kReduce, CollectiveKind::kAllReduce}));
  const auto with_all = parse({"sendrecv", "all"});
  ASSERT_EQ(with_all.size(), static_cast<std::size_t>(kCollectiveKindCount));
  EXPECT_EQ(with_all.front(), CollectiveKind::kSendRecv);
  EXPECT_EQ(std::set<CollectiveKind>(with_all.begin(), with_all.end()).size(), with_all.size());
}

TEST(ParseCollectives, UnknownNamesAndEmptyListsAreUsageErrors) {
  for (const char* bad : {"allreduc", "hypercube_perf", "alltoallv", "", "perf", "bcast"}) {
    EXPECT_THROW((void)parse({bad}), UsageError) << bad;
  }
  EXPECT_THROW((void)parse({"allreduce", "bogus"}), UsageError);
  EXPECT_THROW((void)parse_collectives(std::vector<std::string>{}), UsageError);
  try {
    (void)parse({"bogus"});
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("bogus"), std::string::npos) << error.what();
  }
}

// --- What the loaded NCCL can run (decided from ncclGetVersion at run time) ---------------

TEST(NcclFeatures, TheUsableVersionIsTheOlderOfHeadersAndLibrary) {
  EXPECT_EQ(usable_nccl_version(22809, 22703), 22703);  // built on 2.28, an older library loaded
  EXPECT_EQ(usable_nccl_version(22703, 22809), 22703);  // built on 2.27 headers: no alltoall call
  EXPECT_EQ(usable_nccl_version(22809, 22809), 22809);
}

TEST(NcclFeatures, AllToAllGatherScatterNeed228) {
  // With libnccl 2.27 first on the library path the sweep died with "undefined symbol:
  // ncclAlltoAll" mid-run; these placements are now skipped with the reason.
  const auto alltoall = nccl_version_lacks(22703, CollectiveKind::kAllToAll, DataType::kFloat);
  ASSERT_TRUE(alltoall.has_value());
  EXPECT_EQ(*alltoall, "ncclAlltoAll needs NCCL 2.28.0 or later; this NCCL is 2.27.3");
  EXPECT_TRUE(nccl_version_lacks(22703, CollectiveKind::kGather, DataType::kFloat));
  EXPECT_TRUE(nccl_version_lacks(22703, CollectiveKind::kScatter, DataType::kInt8));
  for (const auto kind :
       {CollectiveKind::kAllToAll, CollectiveKind::kGather, CollectiveKind::kScatter}) {
    EXPECT_FALSE(nccl_version_lacks(22800, kind, DataType::kFloat)) << static_cast<int>(kind);
  }
  for (const auto kind :
       {CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
        CollectiveKind::kBroadcast, CollectiveKind::kReduce, CollectiveKind::kSendRecv}) {
    EXPECT_FALSE(nccl_version_lacks(kOldestNcclVersion, kind, DataType::kBfloat16))
        << static_cast<int>(kind);
  }
}

TEST(NcclFeatures, Fp8NeedsTheLoadedNcclToBe224) {
  for (const auto type : {DataType::kFp8E4M3, DataType::kFp8E5M2}) {
    const auto lacking = nccl_version_lacks(22304, CollectiveKind::kAllReduce, type);
    ASSERT_TRUE(lacking.has_value());
    EXPECT_EQ(*lacking, "fp8 needs NCCL 2.24.0 or later; this NCCL is 2.23.4");
    EXPECT_FALSE(nccl_version_lacks(22400, CollectiveKind::kAllReduce, type));
  }
  // Both at once: the collective is named first.
  EXPECT_EQ(nccl_version_lacks(22304, CollectiveKind::kGather, DataType::kFp8E4M3).value_or(""),
            "ncclGather needs NCCL 2.28.0 or later; this NCCL is 2.23.4");
}

TEST(NcclFeatures, EverythingRunsOnTheNcclWeBuildAgainst) {
  for (int k = 0; k < kCollectiveKindCount; ++k) {
    for (int t = 0; t < kDataTypeCount; ++t) {
      EXPECT_FALSE(
          nccl_version_lacks(22809, static_cast<CollectiveKind>(k), static_cast<DataType>(t)))
          << k << " " << t;
    }
  }
}

TEST(NcclFeatures, AnNcclOlderThanSplitIsRefusedWithBothVersions) {
  EXPECT_EQ(nccl_too_old(21703).value_or(""),
            "the loaded NCCL is 2.17.3; commcert needs NCCL 2.18.0 or later");
  EXPECT_FALSE(nccl_too_old(21800).has_value());
  // Releases before 2.9 encode major * 1000 + minor * 100 + patch.
  EXPECT_EQ(nccl_too_old(2804).value_or(""),
            "the loaded NCCL is 2.8.4; commcert needs NCCL 2.18.0 or later");
  EXPECT_EQ(format_nccl_version(22809), "2.28.9");
}

}  // namespace
}  // namespace commcert
