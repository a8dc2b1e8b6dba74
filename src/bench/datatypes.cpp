#include "bench/datatypes.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace commcert {
namespace {

struct TypeName {
  DataType type;
  std::string_view name;
};

// First entry per type is its canonical (nccl-tests) name; the rest are accepted aliases.
constexpr std::array<TypeName, 24> kTypeNames = {{
    {DataType::kInt8, "int8"},      {DataType::kUint8, "uint8"},
    {DataType::kInt32, "int32"},    {DataType::kUint32, "uint32"},
    {DataType::kInt64, "int64"},    {DataType::kUint64, "uint64"},
    {DataType::kHalf, "half"},      {DataType::kBfloat16, "bfloat16"},
    {DataType::kFloat, "float"},    {DataType::kDouble, "double"},
    {DataType::kFp8E4M3, "f8e4m3"}, {DataType::kFp8E5M2, "f8e5m2"},
    {DataType::kHalf, "fp16"},      {DataType::kHalf, "float16"},
    {DataType::kBfloat16, "bf16"},  {DataType::kFloat, "fp32"},
    {DataType::kFloat, "float32"},  {DataType::kDouble, "fp64"},
    {DataType::kDouble, "float64"}, {DataType::kFp8E4M3, "fp8e4m3"},
    {DataType::kFp8E4M3, "e4m3"},   {DataType::kFp8E5M2, "fp8e5m2"},
    {DataType::kFp8E5M2, "e5m2"},   {DataType::kInt32, "int"},
}};

constexpr std::array<std::pair<ReduceOp, std::string_view>, kReduceOpCount> kOpNames = {{
    {ReduceOp::kSum, "sum"},
    {ReduceOp::kProd, "prod"},
    {ReduceOp::kMin, "min"},
    {ReduceOp::kMax, "max"},
    {ReduceOp::kAvg, "avg"},
}};

}  // namespace

std::string_view name_of(DataType type) {
  for (const auto& entry : kTypeNames) {
    if (entry.type == type) return entry.name;
  }
  return "unknown";
}

std::string_view name_of(ReduceOp op) {
  for (const auto& [value, name] : kOpNames) {
    if (value == op) return name;
  }
  return "unknown";
}

std::vector<DataType> all_data_types() {
  std::vector<DataType> types;
  types.reserve(static_cast<std::size_t>(kDataTypeCount));
  for (int i = 0; i < kDataTypeCount; ++i)
    types.push_back(static_cast<DataType>(i));
  return types;
}

std::vector<DataType> parse_data_types(std::string_view text, std::string_view flag) {
  if (text == "all") return all_data_types();
  for (const auto& entry : kTypeNames) {
    if (entry.name == text) return {entry.type};
  }
  throw UsageError(fmt::format(
      "{}: unknown datatype '{}' (int8 uint8 int32 uint32 int64 uint64 half bfloat16 float double "
      "f8e4m3 f8e5m2 all)",
      flag, text));
}

std::vector<ReduceOp> parse_reduce_ops(std::string_view text, std::string_view flag) {
  std::vector<ReduceOp> ops;
  if (text == "all") {
    for (const auto& [op, name] : kOpNames)
      ops.push_back(op);
    return ops;
  }
  for (const auto& [op, name] : kOpNames) {
    if (name == text) return {op};
  }
  throw UsageError(
      fmt::format("{}: unknown reduction '{}' (sum prod min max avg all)", flag, text));
}

}  // namespace commcert
