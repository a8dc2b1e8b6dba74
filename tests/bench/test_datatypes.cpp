#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bench/datatypes.hpp"
#include "core/errors.hpp"

namespace commcert {
namespace {

TEST(DataTypeNames, NcclTestsSpellings) {
  // nccl-tests -d names (src/common.cu test_typenames).
  const struct {
    DataType type;
    const char* name;
  } expected[] = {{DataType::kInt8, "int8"},      {DataType::kUint8, "uint8"},
                  {DataType::kInt32, "int32"},    {DataType::kUint32, "uint32"},
                  {DataType::kInt64, "int64"},    {DataType::kUint64, "uint64"},
                  {DataType::kHalf, "half"},      {DataType::kBfloat16, "bfloat16"},
                  {DataType::kFloat, "float"},    {DataType::kDouble, "double"},
                  {DataType::kFp8E4M3, "f8e4m3"}, {DataType::kFp8E5M2, "f8e5m2"}};
  for (const auto& e : expected)
    EXPECT_EQ(name_of(e.type), e.name);
}

TEST(DataTypeNames, EveryTypeRoundTripsThroughItsName) {
  std::set<std::string_view> names;
  for (const DataType type : all_data_types()) {
    const std::string_view name = name_of(type);
    EXPECT_NE(name, "unknown");
    names.insert(name);
    EXPECT_EQ(parse_data_types(name, "-d"), std::vector<DataType>{type}) << name;
  }
  EXPECT_EQ(names.size(), static_cast<std::size_t>(kDataTypeCount)) << "names must be distinct";
}

TEST(DataTypeNames, AliasesMapToTheirType) {
  const struct {
    const char* alias;
    DataType type;
  } aliases[] = {{"fp16", DataType::kHalf},      {"float16", DataType::kHalf},
                 {"bf16", DataType::kBfloat16},  {"fp32", DataType::kFloat},
                 {"float32", DataType::kFloat},  {"fp64", DataType::kDouble},
                 {"float64", DataType::kDouble}, {"fp8e4m3", DataType::kFp8E4M3},
                 {"e4m3", DataType::kFp8E4M3},   {"fp8e5m2", DataType::kFp8E5M2},
                 {"e5m2", DataType::kFp8E5M2},   {"int", DataType::kInt32}};
  for (const auto& a : aliases) {
    EXPECT_EQ(parse_data_types(a.alias, "-d"), std::vector<DataType>{a.type}) << a.alias;
    // An alias is accepted on input but never printed: records use the canonical name.
    EXPECT_NE(name_of(a.type), a.alias);
  }
}

TEST(DataTypeNames, AllIsEveryTypeOnceInEnumOrder) {
  const auto types = parse_data_types("all", "-d");
  ASSERT_EQ(types.size(), static_cast<std::size_t>(kDataTypeCount));
  for (int i = 0; i < kDataTypeCount; ++i)
    EXPECT_EQ(types[i], static_cast<DataType>(i));
  EXPECT_EQ(types, all_data_types());
}

TEST(DataTypeNames, UnknownNamesAreUsageErrorsNamingTheFlag) {
  for (const char* bad : {"", "floats", "int16", "fp8", "bfloat", "tf32", "all_types", " float"}) {
    EXPECT_THROW((void)parse_data_types(bad, "-d"), UsageError) << bad;
  }
  try {
    (void)parse_data_types("int16", "-d/--datatype");
    FAIL() << "no exception";
  } catch (const UsageError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("-d/--datatype"), std::string::npos) << message;
    EXPECT_NE(message.find("int16"), std::string::npos) << message;
  }
}

TEST(ReduceOpNames, RoundTripAndAll) {
  const struct {
    ReduceOp op;
    const char* name;
  } expected[] = {{ReduceOp::kSum, "sum"},
                  {ReduceOp::kProd, "prod"},
                  {ReduceOp::kMin, "min"},
                  {ReduceOp::kMax, "max"},
                  {ReduceOp::kAvg, "avg"}};
  for (const auto& e : expected) {
    EXPECT_EQ(name_of(e.op), e.name);
    EXPECT_EQ(parse_reduce_ops(e.name, "-o"), std::vector<ReduceOp>{e.op});
  }
  const auto all = parse_reduce_ops("all", "-o");
  ASSERT_EQ(all.size(), static_cast<std::size_t>(kReduceOpCount));
  for (int i = 0; i < kReduceOpCount; ++i)
    EXPECT_EQ(all[i], static_cast<ReduceOp>(i));
}

TEST(ReduceOpNames, UnknownNamesAreUsageErrorsNamingTheFlag) {
  // mulsum is an nccl-tests op commcert does not run: refuse it rather than run something else.
  for (const char* bad : {"", "mulsum", "add", "SUM ", "average"}) {
    EXPECT_THROW((void)parse_reduce_ops(bad, "-o"), UsageError) << bad;
  }
  try {
    (void)parse_reduce_ops("mulsum", "-o/--op");
    FAIL() << "no exception";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("-o/--op"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace commcert
