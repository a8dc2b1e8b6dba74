// Old evidence stays readable: the v1 records committed in tests/fixtures/records/v1, as the
// writers of their day wrote them, must still be read by `commcert certify`'s reader with
// nothing dropped, every kind recognised and the fields the rules judge intact, and must stay
// valid against docs/schema/record.schema.json. A reader or schema change that breaks this
// breaks the compatibility rule of docs/records.md.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "json_schema_subset.hpp"
#include "validate/inputs.hpp"

namespace commcert {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const fs::path kFixtures = fs::path(COMMCERT_SOURCE_DIR) / "tests/fixtures/records/v1";

// One file per record kind (and per health component) that the writers produce.
const std::vector<std::string> kFixtureFiles = {"burn.jsonl",
                                                "collective.jsonl",
                                                "collective-error.jsonl",
                                                "collective-timeout.jsonl",
                                                "health-gpu.jsonl",
                                                "health-ib_port.jsonl",
                                                "health-node.jsonl",
                                                "health-timeout.jsonl",
                                                "link.jsonl",
                                                "membw.jsonl",
                                                "p2p.jsonl",
                                                "run.jsonl"};

// Lines written by today's code that the schema rejects: listed here so they are seen, and so
// fixing the writer or the schema shows up as this test failing until the entry is removed.
struct KnownDisagreement {
  std::string file;
  std::size_t line;   // 1-based
  std::string error;  // a substring of the validator's message
};
const std::vector<KnownDisagreement> kSchemaDisagreements = {
    // StageSession's control-plane timeout record names no component (it timed out before
    // looking at any); the schema requires `component` on every health record. The reader
    // accepts it (Evidence::health_failures).
    {"health-timeout.jsonl", 1, "required field 'component' is missing"},
};

std::vector<std::string> lines_of(const fs::path& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

std::vector<Json> records_of(const std::string& file) {
  std::vector<Json> records;
  for (const auto& line : lines_of(kFixtures / file))
    records.push_back(Json::parse(line));
  return records;
}

// Every fixture read in one go, as `commcert certify tests/fixtures/records/v1/*.jsonl` reads them.
const LoadedInputs& loaded() {
  static const LoadedInputs inputs = [] {
    std::vector<std::string> paths;
    for (const auto& file : kFixtureFiles)
      paths.push_back((kFixtures / file).string());
    return load_inputs(paths);
  }();
  return inputs;
}

const InputFileSummary& summary_of(const std::string& file) {
  const auto& files = loaded().evidence.files;
  const auto found = std::find_if(files.begin(), files.end(), [&](const InputFileSummary& s) {
    return fs::path(s.path).filename() == file;
  });
  if (found == files.end()) throw std::runtime_error("the reader has no summary of " + file);
  return *found;
}

std::size_t file_index(const std::string& file) {
  return static_cast<std::size_t>(&summary_of(file) - loaded().evidence.files.data());
}

// The evidence entries that came from `file`, in line order.
template <typename Entry>
std::vector<const Entry*> from_file(const std::vector<Entry>& entries, const std::string& file) {
  std::vector<const Entry*> out;
  for (const auto& entry : entries) {
    if (entry.ref.file == file_index(file)) out.push_back(&entry);
  }
  return out;
}

// The fixture line an evidence entry was read from.
template <typename Entry>
Json line_of(const Entry& entry, const std::string& file) {
  return records_of(file).at(entry.ref.line - 1);
}

// The value at a JSON pointer of a fixture line, nullopt where it is null or absent: what the
// reader must make of it (missing evidence is never zero).
template <typename T>
std::optional<T> at_path(const Json& record, const std::string& pointer) {
  const Json::json_pointer where(pointer);
  if (!record.contains(where) || record.at(where).is_null()) return std::nullopt;
  return record.at(where).get<T>();
}

RecordStatus status_of(const Json& record) {
  const std::string status = record.at("status");
  if (status == "ok") return RecordStatus::kOk;
  if (status == "fail") return RecordStatus::kFail;
  if (status == "error") return RecordStatus::kError;
  if (status == "timeout") return RecordStatus::kTimeout;
  return RecordStatus::kSkipped;
}

// The writer's GPU as the reader keys it: index -1 when the record names no GPU.
void expect_same_gpu(const Evidence& e, const GpuKey& gpu, const Json& record) {
  EXPECT_EQ(gpu.index, at_path<int>(record, "/gpu/index").value_or(-1));
  EXPECT_EQ(e.text(gpu.uuid), at_path<std::string>(record, "/gpu/uuid").value_or(""));
}

TEST(RecordFixturesV1, TheFolderHoldsExactlyTheFilesThisTestChecks) {
  std::vector<std::string> present;
  for (const auto& entry : fs::directory_iterator(kFixtures)) {
    if (entry.path().extension() == ".jsonl") present.push_back(entry.path().filename().string());
  }
  std::sort(present.begin(), present.end());
  std::vector<std::string> expected = kFixtureFiles;
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(present, expected);
  for (const auto& file : kFixtureFiles)
    EXPECT_FALSE(lines_of(kFixtures / file).empty()) << file;
}

TEST(RecordFixturesV1, EveryLineIsValidAgainstTheSchemaButTheListedDisagreements) {
  const auto schema = test_support::JsonSchemaSubset::record_schema();
  for (const auto& file : kFixtureFiles) {
    const auto lines = lines_of(kFixtures / file);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const auto errors = schema.errors(Json::parse(lines[i]));
      const auto known = std::find_if(
          kSchemaDisagreements.begin(), kSchemaDisagreements.end(),
          [&](const KnownDisagreement& d) { return d.file == file && d.line == i + 1; });
      if (known == kSchemaDisagreements.end()) {
        EXPECT_THAT(errors, IsEmpty()) << file << ":" << i + 1 << "\n" << lines[i];
      } else {
        EXPECT_THAT(errors, ElementsAre(HasSubstr(known->error)))
            << file << ":" << i + 1 << " no longer disagrees as listed: update the list";
      }
    }
  }
}

TEST(RecordFixturesV1, CertifyReadsEveryLineAndDropsNone) {
  const Evidence& e = loaded().evidence;
  std::vector<std::string> issues;
  for (const auto& issue : e.issues)
    issues.push_back(issue.code + ": " + issue.detail);
  EXPECT_THAT(issues, IsEmpty());  // no unparsable line, no kind it does not know
  for (const auto& file : kFixtureFiles) {
    const InputFileSummary& s = summary_of(file);
    EXPECT_EQ(s.records, lines_of(kFixtures / file).size()) << file;
    EXPECT_EQ(s.unreadable, 0u) << file;
    EXPECT_FALSE(s.truncated) << file;
  }
}

TEST(RecordFixturesV1, RunRecordsGiveEachRunTheNodeOfEveryRank) {
  const Evidence& e = loaded().evidence;
  for (const Json& w : records_of("run.jsonl")) {
    SCOPED_TRACE(w.at("run_id").get<std::string>());
    const auto run_it = std::find_if(e.runs.begin(), e.runs.end(), [&](const RunEvidence& r) {
      return e.text(r.run_id) == w.at("run_id").get<std::string>();
    });
    ASSERT_NE(run_it, e.runs.end());
    const RunEvidence& run = *run_it;
    EXPECT_TRUE(run.has_rank_map);
    ASSERT_EQ(run.rank_nodes.size(), w.at("ranks").size());
    for (std::size_t r = 0; r < run.rank_nodes.size(); ++r)
      EXPECT_EQ(e.node_name(run.rank_nodes[r]), w.at("ranks")[r].at("node").get<std::string>());
  }
}

TEST(RecordFixturesV1, CollectiveRecordsKeepStatusScopeBandwidthStragglerAndWrongRanks) {
  const Evidence& e = loaded().evidence;
  const auto read = from_file(e.collectives, "collective.jsonl");
  ASSERT_EQ(read.size(), records_of("collective.jsonl").size());
  std::multiset<RecordStatus> statuses;
  std::set<CollectiveScope> scopes;
  std::size_t pair_list = 0;
  for (const CollectiveEvidence* c : read) {
    const Json w = line_of(*c, "collective.jsonl");
    SCOPED_TRACE(w.dump().substr(0, 300));
    statuses.insert(c->status);
    scopes.insert(c->scope);
    pair_list += c->pair_list ? 1 : 0;
    EXPECT_EQ(c->status, status_of(w));
    EXPECT_EQ(e.node_name(c->writer), w.at("host").get<std::string>());
    EXPECT_EQ(e.text(c->collective), w.at("collective").get<std::string>());
    EXPECT_EQ(c->bytes, w.at("bytes").get<std::uint64_t>());
    EXPECT_EQ(c->nranks, w.at("nranks").get<std::uint32_t>());
    EXPECT_EQ(c->in_place, w.at("in_place").get<bool>());
    EXPECT_EQ(c->pair_list, w.value("pair_list", false));
    // The nodes a measurement speaks for are its group's, whatever the scope.
    std::vector<std::string> participants;
    for (const NodeId node : e.participants(*c))
      participants.push_back(e.node_name(node));
    auto group = w.at("group_nodes").get<std::vector<std::string>>();
    std::sort(group.begin(), group.end());
    std::sort(participants.begin(), participants.end());
    EXPECT_EQ(participants, group);
    if (!c->measured()) {
      EXPECT_EQ(e.text(c->reason), w.at("reason").get<std::string>());
      continue;
    }
    EXPECT_DOUBLE_EQ(c->busbw_bytes_per_s, w.at("busbw_bytes_per_s").get<double>());
    EXPECT_GT(c->busbw_bytes_per_s, 0);
    EXPECT_EQ(c->checked, w.at("check").get<bool>());
    EXPECT_EQ(c->straggler_rank, w.at("straggler").at("rank").get<int>());
    EXPECT_EQ(e.node_name(c->straggler), w.at("straggler").at("host").get<std::string>());
    const auto wrong = e.wrong_ranks_of(*c);
    ASSERT_EQ(wrong.size(), w.at("wrong_ranks").size());
    std::int64_t wrong_elements = 0;
    for (std::size_t k = 0; k < wrong.size(); ++k) {
      const Json& entry = w.at("wrong_ranks")[k];
      EXPECT_EQ(wrong[k].rank, entry.at("rank").get<int>());
      EXPECT_EQ(e.node_name(wrong[k].node), entry.at("host").get<std::string>());
      EXPECT_EQ(wrong[k].elements, entry.at("wrong_elements").get<std::int64_t>());
      EXPECT_EQ(wrong[k].iterations, entry.at("wrong_iterations").get<std::int64_t>());
      wrong_elements += wrong[k].elements;
    }
    EXPECT_EQ(wrong_elements, w.at("wrong_elements").get<std::int64_t>());
    if (c->status == RecordStatus::kFail) {
      // COMMCERT_FAULT=corrupt:2: the evidence blames rank 2 on node2 and no other.
      ASSERT_EQ(wrong.size(), 1u);
      EXPECT_EQ(wrong[0].rank, 2);
      EXPECT_EQ(e.node_name(wrong[0].node), "node2");
      EXPECT_GT(wrong[0].elements, 0);
    }
  }
  EXPECT_EQ(statuses.count(RecordStatus::kFail), 2u);
  EXPECT_EQ(statuses.count(RecordStatus::kSkipped), 1u);
  EXPECT_EQ(scopes, (std::set<CollectiveScope>{CollectiveScope::kCluster, CollectiveScope::kNode,
                                               CollectiveScope::kPairs}));
  EXPECT_EQ(pair_list, 2u);
}

TEST(RecordFixturesV1, CollectiveTimeoutNamesTheRankThatNeverArrived) {
  const Evidence& e = loaded().evidence;
  const auto read = from_file(e.timeouts, "collective-timeout.jsonl");
  ASSERT_EQ(read.size(), 1u);
  const TimeoutEvidence& t = *read[0];
  const Json w = line_of(t, "collective-timeout.jsonl");
  EXPECT_EQ(t.operation, w.at("operation").get<std::string>());
  EXPECT_DOUBLE_EQ(t.timeout_s, 3);
  EXPECT_TRUE(t.attributed);
  ASSERT_EQ(t.not_arrived.size(), 1u);  // COMMCERT_FAULT=hang:3
  EXPECT_EQ(t.not_arrived[0].first, 3);
  EXPECT_EQ(e.node_name(t.not_arrived[0].second), "node3");
  EXPECT_EQ(t.members.size(), 4u);
  EXPECT_EQ(t.reason, w.at("reason").get<std::string>());
}

TEST(RecordFixturesV1, CollectiveErrorKeepsTheFailingRanksNodeAndReason) {
  const Evidence& e = loaded().evidence;
  const auto read = from_file(e.collective_errors, "collective-error.jsonl");
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0]->status, RecordStatus::kError);
  EXPECT_EQ(e.node_name(read[0]->node), "node3");
  EXPECT_EQ(read[0]->reason, "cannot allocate 512 MiB of host memory");
}

TEST(RecordFixturesV1, BurnRecordsKeepGpuThroughputMiscomparesAndPeerVerdict) {
  const Evidence& e = loaded().evidence;
  const auto read = from_file(e.burns, "burn.jsonl");
  ASSERT_EQ(read.size(), records_of("burn.jsonl").size());
  std::multiset<RecordStatus> statuses;
  for (const BurnEvidence* b : read) {
    const Json w = line_of(*b, "burn.jsonl");
    SCOPED_TRACE(w.dump().substr(0, 300));
    statuses.insert(b->status);
    EXPECT_EQ(b->status, status_of(w));
    EXPECT_EQ(e.node_name(b->node), w.at("host").get<std::string>());
    expect_same_gpu(e, b->gpu, w);
    EXPECT_EQ(e.text(b->kernel), w.at("kernel").get<std::string>());
    EXPECT_EQ(b->tflops, at_path<double>(w, "/tflops"));
    EXPECT_EQ(b->miscompares, at_path<std::int64_t>(w, "/miscompares").value_or(0));
    EXPECT_EQ(b->peer_mismatch, at_path<bool>(w, "/peer_mismatch"));
    EXPECT_EQ(b->peer_gpus, at_path<int>(w, "/peer_gpus").value_or(0));
    EXPECT_EQ(b->throttle.size(), w.contains("telemetry") ? w["telemetry"]["throttle"].size() : 0u);
    EXPECT_EQ(b->reason, w.value("reason", ""));
  }
  EXPECT_EQ(statuses, (std::multiset<RecordStatus>{RecordStatus::kOk, RecordStatus::kFail,
                                                   RecordStatus::kSkipped}));
}

TEST(RecordFixturesV1, LinkRecordsKeepTheirEndsTestFiguresAndWhySkipped) {
  const Evidence& e = loaded().evidence;
  const auto read = from_file(e.links, "link.jsonl");
  ASSERT_EQ(read.size(), records_of("link.jsonl").size());
  std::multiset<RecordStatus> statuses;
  for (const LinkEvidence* l : read) {
    const Json w = line_of(*l, "link.jsonl");
    SCOPED_TRACE(w.dump().substr(0, 300));
    statuses.insert(l->status);
    EXPECT_EQ(l->status, status_of(w));
    EXPECT_EQ(e.node_name(l->writer), w.at("host").get<std::string>());
    EXPECT_EQ(e.text(l->transport), w.at("transport").get<std::string>());
    EXPECT_EQ(e.node_name(l->from), w.at("nodes")[0].get<std::string>());
    EXPECT_EQ(l->to == kNoString, w.at("nodes").size() == 1);
    EXPECT_EQ(l->measured(), w.at("status") == "ok");
    if (l->measured()) {
      EXPECT_EQ(e.text(l->test), w.at("test").get<std::string>());
      EXPECT_EQ(l->rail, w.at("rail").get<int>());
      EXPECT_EQ(l->bytes, w.at("bytes").get<std::uint64_t>());
      EXPECT_EQ(l->bytes_per_s, at_path<double>(w, "/bytes_per_s"));
      EXPECT_EQ(l->latency_s, at_path<double>(w, "/latency_s"));
    }
    EXPECT_EQ(l->reason, w.value("reason", ""));
  }
  EXPECT_EQ(statuses.count(RecordStatus::kOk), 7u);
  EXPECT_EQ(statuses.count(RecordStatus::kSkipped), 2u);
}

TEST(RecordFixturesV1, P2pRecordsKeepTheirEndsFiguresAndWhySkipped) {
  const Evidence& e = loaded().evidence;
  const auto read = from_file(e.p2p, "p2p.jsonl");
  ASSERT_EQ(read.size(), records_of("p2p.jsonl").size());
  std::multiset<RecordStatus> statuses;
  for (const P2pEvidence* p : read) {
    const Json w = line_of(*p, "p2p.jsonl");
    SCOPED_TRACE(w.dump().substr(0, 300));
    statuses.insert(p->status);
    EXPECT_EQ(p->status, status_of(w));
    EXPECT_EQ(e.node_name(p->node), w.at("host").get<std::string>());
    expect_same_gpu(e, p->gpu, w);
    EXPECT_EQ(e.text(p->path), at_path<std::string>(w, "/path").value_or(""));
    EXPECT_EQ(e.text(p->method), at_path<std::string>(w, "/method").value_or(""));
    EXPECT_EQ(e.text(p->access), at_path<std::string>(w, "/access").value_or(""));
    EXPECT_EQ(p->bidirectional, w.at("bidirectional").get<bool>());
    EXPECT_EQ(p->src_gpu, at_path<int>(w, "/src_gpu").value_or(-1));
    EXPECT_EQ(p->dst_gpu, at_path<int>(w, "/dst_gpu").value_or(-1));
    EXPECT_EQ(p->host_numa_node, at_path<int>(w, "/host_numa_node"));
    EXPECT_EQ(p->host_numa_local, at_path<bool>(w, "/host_numa_local"));
    EXPECT_EQ(p->peer_access, at_path<bool>(w, "/peer_access"));
    EXPECT_EQ(p->measured(), w.at("status") == "ok");
    EXPECT_EQ(p->bytes_per_s, at_path<double>(w, "/bytes_per_s"));
    EXPECT_EQ(p->latency_s, at_path<double>(w, "/latency_s"));
    EXPECT_EQ(p->reason, w.value("reason", ""));
  }
  EXPECT_EQ(statuses.count(RecordStatus::kOk), 4u);
  EXPECT_EQ(statuses.count(RecordStatus::kSkipped), 2u);
}

TEST(RecordFixturesV1, MembwRecordsKeepBandwidthsAndIntegrityErrors) {
  const Evidence& e = loaded().evidence;
  const auto read = from_file(e.membws, "membw.jsonl");
  ASSERT_EQ(read.size(), records_of("membw.jsonl").size());
  std::multiset<RecordStatus> statuses;
  for (const MembwEvidence* m : read) {
    const Json w = line_of(*m, "membw.jsonl");
    SCOPED_TRACE(w.dump().substr(0, 300));
    statuses.insert(m->status);
    EXPECT_EQ(m->status, status_of(w));
    expect_same_gpu(e, m->gpu, w);
    EXPECT_EQ(m->read, at_path<double>(w, "/bandwidth/read_bytes_per_s"));
    EXPECT_EQ(m->write, at_path<double>(w, "/bandwidth/write_bytes_per_s"));
    EXPECT_EQ(m->copy, at_path<double>(w, "/bandwidth/copy_bytes_per_s"));
    EXPECT_EQ(m->memcpy_d2d, at_path<double>(w, "/bandwidth/memcpy_d2d_bytes_per_s"));
    EXPECT_EQ(m->h2d, at_path<double>(w, "/host_transfer/h2d_bytes_per_s"));
    EXPECT_EQ(m->d2h, at_path<double>(w, "/host_transfer/d2h_bytes_per_s"));
    EXPECT_EQ(m->integrity_errors, at_path<std::int64_t>(w, "/integrity/errors"));
    EXPECT_EQ(m->bytes_tested, at_path<std::int64_t>(w, "/integrity/bytes_tested"));
    if (m->status == RecordStatus::kFail) {
      EXPECT_THAT(m->first_error, HasSubstr("0x7f3a40"));
    }
    EXPECT_EQ(m->reason, w.value("reason", ""));
  }
  EXPECT_EQ(statuses, (std::multiset<RecordStatus>{RecordStatus::kOk, RecordStatus::kFail,
                                                   RecordStatus::kSkipped}));
}

TEST(RecordFixturesV1, GpuHealthRecordsKeepEveryCounterTheRulesJudge) {
  const Evidence& e = loaded().evidence;
  const auto read = from_file(e.gpu_health, "health-gpu.jsonl");
  ASSERT_EQ(read.size(), records_of("health-gpu.jsonl").size());
  for (const GpuHealthEvidence* g : read) {
    const Json w = line_of(*g, "health-gpu.jsonl");
    SCOPED_TRACE(w.dump().substr(0, 300));
    EXPECT_EQ(g->status, status_of(w));
    EXPECT_EQ(e.node_name(g->node), w.at("host").get<std::string>());
    expect_same_gpu(e, g->gpu, w);
    EXPECT_EQ(g->ecc_volatile_uncorrected, at_path<std::int64_t>(w, "/ecc/volatile/uncorrected"));
    EXPECT_EQ(g->ecc_volatile_corrected, at_path<std::int64_t>(w, "/ecc/volatile/corrected"));
    EXPECT_EQ(g->remap_correctable, at_path<std::int64_t>(w, "/remapped_rows/correctable"));
    EXPECT_EQ(g->remap_uncorrectable, at_path<std::int64_t>(w, "/remapped_rows/uncorrectable"));
    EXPECT_EQ(g->remap_pending, at_path<bool>(w, "/remapped_rows/pending"));
    EXPECT_EQ(g->remap_failure, at_path<bool>(w, "/remapped_rows/failure"));
    EXPECT_EQ(g->retired_single_bit, at_path<std::int64_t>(w, "/retired_pages/single_bit"));
    EXPECT_EQ(g->retired_double_bit, at_path<std::int64_t>(w, "/retired_pages/double_bit"));
    EXPECT_EQ(g->retired_pending, at_path<bool>(w, "/retired_pages/pending"));
    EXPECT_EQ(g->pcie_gen, at_path<int>(w, "/pcie/gen_current"));
    EXPECT_EQ(g->pcie_gen_max, at_path<int>(w, "/pcie/gen_max"));
    EXPECT_EQ(g->pcie_width, at_path<int>(w, "/pcie/width_current"));
    EXPECT_EQ(g->pcie_width_max, at_path<int>(w, "/pcie/width_max"));
    EXPECT_EQ(g->pcie_replays, at_path<std::int64_t>(w, "/pcie/replay_count"));
    EXPECT_EQ(g->temperature_c, at_path<double>(w, "/temperature_c"));
    if (at_path<Json>(w, "/nvlink")) {
      ASSERT_TRUE(g->nvlinks.has_value());
      ASSERT_EQ(g->nvlinks->size(), w.at("nvlink").size());
      for (std::size_t l = 0; l < g->nvlinks->size(); ++l) {
        const Json& link = w.at("nvlink")[l];
        const NvlinkEvidence& got = g->nvlinks->at(l);
        EXPECT_EQ(got.link, link.at("link").get<int>());
        EXPECT_EQ(got.active, at_path<bool>(link, "/active"));
        EXPECT_EQ(got.replay_errors, at_path<std::int64_t>(link, "/replay_errors"));
        EXPECT_EQ(got.recovery_errors, at_path<std::int64_t>(link, "/recovery_errors"));
        EXPECT_EQ(got.crc_flit_errors, at_path<std::int64_t>(link, "/crc_flit_errors"));
        EXPECT_EQ(got.crc_data_errors, at_path<std::int64_t>(link, "/crc_data_errors"));
      }
    } else {
      EXPECT_FALSE(g->nvlinks.has_value());
    }
    std::vector<std::string> clock_events;
    for (const StringId id : g->clock_events)
      clock_events.emplace_back(e.text(id));
    EXPECT_EQ(clock_events, at_path<std::vector<std::string>>(w, "/clock_event_reasons")
                                .value_or(std::vector<std::string>{}));
    ASSERT_EQ(g->xids.size(), at_path<Json>(w, "/xid_events").value_or(Json::array()).size());
    for (std::size_t x = 0; x < g->xids.size(); ++x)
      EXPECT_EQ(g->xids[x].xid, w.at("xid_events")[x].at("xid").get<int>());
    EXPECT_EQ(g->reason, w.value("reason", ""));
  }
  // What the fixtures were made to show, so none of it can silently go missing.
  ASSERT_GE(read.size(), 6u);
  EXPECT_EQ(read[0]->xids.at(0).xid, 79);            // two_h200.json, GPU 0
  EXPECT_EQ(read[1]->remap_uncorrectable, 2);        // GPU 1: rows remapped...
  EXPECT_EQ(read[1]->remap_pending, true);           // ...and one pending
  EXPECT_EQ(read[2]->status, RecordStatus::kError);  // lost_gpu.json: GPU 0 lost
  EXPECT_THAT(read[2]->reason, HasSubstr("is lost"));
  EXPECT_EQ(read[3]->status, RecordStatus::kError);  // GPU 1: no handle
  EXPECT_EQ(read[3]->gpu.index, 1);
  EXPECT_EQ(read[4]->status, RecordStatus::kSkipped);  // no NVML at all
  EXPECT_EQ(read[5]->retired_double_bit, 1);           // legacy_v100.json
}

TEST(RecordFixturesV1, IbPortRecordsKeepStateRateAndEveryCounter) {
  const Evidence& e = loaded().evidence;
  const auto read = from_file(e.ib_ports, "health-ib_port.jsonl");
  ASSERT_EQ(read.size(), records_of("health-ib_port.jsonl").size());
  for (const IbPortEvidence* p : read) {
    const Json w = line_of(*p, "health-ib_port.jsonl");
    SCOPED_TRACE(w.dump().substr(0, 300));
    EXPECT_EQ(p->status, status_of(w));
    EXPECT_EQ(e.node_name(p->node), w.at("host").get<std::string>());
    EXPECT_EQ(e.text(p->device), w.value("device", ""));
    EXPECT_EQ(e.text(p->state), at_path<std::string>(w, "/state").value_or(""));
    EXPECT_EQ(e.text(p->phys_state), at_path<std::string>(w, "/phys_state").value_or(""));
    EXPECT_EQ(e.text(p->link_layer), at_path<std::string>(w, "/link_layer").value_or(""));
    EXPECT_EQ(p->rate_gbps, at_path<double>(w, "/rate_gbps"));
    std::map<std::string, std::int64_t> counters;
    for (const auto& [name, value] : p->counters)
      counters.emplace(e.text(name), value);
    EXPECT_EQ(counters,
              (w.value("counters", Json::object()).get<std::map<std::string, std::int64_t>>()));
    EXPECT_EQ(p->reason, w.value("reason", ""));
  }
  ASSERT_GE(read.size(), 7u);
  EXPECT_EQ(read[4]->counters.size(), records_of("health-ib_port.jsonl")[4]["counters"].size());
  EXPECT_EQ(read[5]->status, RecordStatus::kSkipped);  // no RDMA device
  EXPECT_EQ(e.text(read[6]->state), "DOWN");
}

TEST(RecordFixturesV1, NodeHealthRecordsKeepGpuAndPortCounts) {
  const Evidence& e = loaded().evidence;
  const auto read = from_file(e.node_health, "health-node.jsonl");
  ASSERT_EQ(read.size(), records_of("health-node.jsonl").size());
  for (const NodeHealthEvidence* n : read) {
    const Json w = line_of(*n, "health-node.jsonl");
    EXPECT_EQ(n->status, status_of(w));
    EXPECT_EQ(e.node_name(n->node), w.at("host").get<std::string>());
    EXPECT_EQ(n->gpu_count, at_path<int>(w, "/gpu_count"));
    EXPECT_EQ(n->ib_port_count, at_path<int>(w, "/ib_port_count"));
  }
  ASSERT_GE(read.size(), 3u);
  EXPECT_EQ(read[0]->gpu_count, 2);
  EXPECT_EQ(read[0]->ib_port_count, 4);
  EXPECT_EQ(read[2]->gpu_count, std::nullopt);  // no NVML: unknown, not zero
}

TEST(RecordFixturesV1, AHealthStageTimeoutIsKeptAsAFailureOfItsNode) {
  const Evidence& e = loaded().evidence;
  const auto read = from_file(e.health_failures, "health-timeout.jsonl");
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0]->status, RecordStatus::kTimeout);
  EXPECT_EQ(e.node_name(read[0]->node), "node0");
  EXPECT_THAT(read[0]->reason, HasSubstr("process 1 (node1) did not reach"));
}

}  // namespace
}  // namespace commcert
