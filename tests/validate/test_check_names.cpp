#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bench/collectives.hpp"
#include "core/json.hpp"
#include "kernels/collective_types.hpp"
#include "validate/checks.hpp"

namespace commcert {
namespace {

// The validator reads its collective checks from the collective table (it must not link the
// sweep engine): every collective the sweep can record must have a check the validator knows.
TEST(CheckNames, EveryCollectiveTheSweepRecordsHasACheck) {
  for (const auto& info : all_collectives()) {
    const CheckInfo* check = find_check("collective." + std::string(info.name));
    ASSERT_NE(check, nullptr) << info.name;
    EXPECT_EQ(check->kind, CheckKind::kCollective);
    EXPECT_EQ(check->collective, info.name);
  }
}

// Verdicts list checks in this order; it predates the collective table and must not move.
TEST(CheckNames, VerdictOrderIsUnchanged) {
  std::vector<std::string> ids;
  for (const auto& check : all_checks())
    ids.emplace_back(check.id);
  const std::vector<std::string> expected = {"health.node",
                                             "health.gpu",
                                             "health.ib",
                                             "burn",
                                             "membw",
                                             "links",
                                             "p2p",
                                             "collective.allreduce",
                                             "collective.allgather",
                                             "collective.reducescatter",
                                             "collective.alltoall",
                                             "collective.broadcast",
                                             "collective.reduce",
                                             "collective.sendrecv",
                                             "collective.gather",
                                             "collective.scatter"};
  EXPECT_EQ(ids, expected);
}

TEST(CheckNames, RootedCollectivesComeFromTheTable) {
  for (const CollectiveTraits& row : kCollectiveTraits) {
    EXPECT_EQ(is_rooted_collective(row.name), row.rooted) << row.name;
    EXPECT_EQ(is_rooted(row.kind), row.rooted) << row.name;
  }
  EXPECT_FALSE(is_rooted_collective("no-such-collective"));
}

// The packed columns the kernels read must say what the rows say.
TEST(CheckNames, PackedColumnsMatchTheRows) {
  for (const CollectiveTraits& row : kCollectiveTraits) {
    EXPECT_EQ(input_blocks(row.kind), row.input) << row.name;
    EXPECT_EQ(output_blocks(row.kind), row.output) << row.name;
    EXPECT_EQ(output_source(row.kind), row.source) << row.name;
    EXPECT_EQ(output_at_root_only(row.kind), row.output_root_only) << row.name;
    EXPECT_EQ(is_reduction(row.kind), row.source == Source::kReduced) << row.name;
  }
}

// docs/schema/record.schema.json lists the collective names a record may carry; they must be
// the table's, in the table's order, so a new collective cannot write records the schema rejects.
TEST(CheckNames, SchemaCollectiveEnumIsTheTable) {
  const std::string path = std::string(COMMCERT_SOURCE_DIR) + "/docs/schema/record.schema.json";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  const Json schema = Json::parse(in);
  const Json& names =
      schema.at("$defs").at("collective_identity").at("properties").at("collective").at("enum");
  std::vector<std::string> from_schema;
  for (const auto& name : names)
    from_schema.push_back(name.get<std::string>());
  std::vector<std::string> from_table;
  for (const CollectiveTraits& row : kCollectiveTraits)
    from_table.emplace_back(row.name);
  EXPECT_EQ(from_schema, from_table);
}

TEST(CheckNames, HelpAndErrorTextListTheTable) {
  EXPECT_EQ(collective_names(),
            "allreduce allgather reducescatter broadcast reduce alltoall sendrecv gather scatter");
  try {
    const std::vector<std::string> names = {"allreduse"};
    (void)parse_collectives(names);
    FAIL() << "no error for an unknown collective";
  } catch (const std::exception& e) {
    EXPECT_STREQ(e.what(),
                 "unknown collective 'allreduse' (allreduce allgather reducescatter broadcast "
                 "reduce alltoall sendrecv gather scatter all)");
  }
}

}  // namespace
}  // namespace commcert
