#pragma once

#include <cstdint>

#include "host_device.hpp"

namespace commcert {

// Wire-level element types. The order is part of nothing external: names are the contract.
enum class DataType : std::uint8_t {
  kInt8,
  kUint8,
  kInt32,
  kUint32,
  kInt64,
  kUint64,
  kHalf,
  kBfloat16,
  kFloat,
  kDouble,
  kFp8E4M3,
  kFp8E5M2,
};
inline constexpr int kDataTypeCount = 12;

enum class ReduceOp : std::uint8_t { kSum, kProd, kMin, kMax, kAvg };
inline constexpr int kReduceOpCount = 5;

enum class CollectiveKind : std::uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSendRecv,
  kGather,
  kScatter,
};
inline constexpr int kCollectiveKindCount = 9;

COMMCERT_HD constexpr int element_size(DataType type) {
  switch (type) {
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kFp8E4M3:
    case DataType::kFp8E5M2:
      return 1;
    case DataType::kHalf:
    case DataType::kBfloat16:
      return 2;
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kFloat:
      return 4;
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kDouble:
      return 8;
  }
  return 1;
}

COMMCERT_HD constexpr bool is_floating(DataType type) {
  switch (type) {
    case DataType::kHalf:
    case DataType::kBfloat16:
    case DataType::kFloat:
    case DataType::kDouble:
    case DataType::kFp8E4M3:
    case DataType::kFp8E5M2:
      return true;
    default:
      return false;
  }
}

COMMCERT_HD constexpr bool is_reduction(CollectiveKind kind) {
  return kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduce ||
         kind == CollectiveKind::kReduceScatter;
}

COMMCERT_HD constexpr bool is_rooted(CollectiveKind kind) {
  return kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kReduce ||
         kind == CollectiveKind::kGather || kind == CollectiveKind::kScatter;
}

}  // namespace commcert
