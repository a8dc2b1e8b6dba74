#include "cli/links_command.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "cli/links_verbs.hpp"
#include "cli/stage_session.hpp"
#include "comm/fault_injection.hpp"
#include "comm/mpi_session.hpp"
#include "comm/watchdog.hpp"
#include "core/errors.hpp"
#include "core/progress.hpp"
#include "core/split.hpp"
#include "core/units.hpp"
#include "links/link_measurement.hpp"
#include "links/link_schedule.hpp"
#include "links/verbs_counters.hpp"
#include "records/link.hpp"

namespace commcert {
namespace {

constexpr std::uint64_t kMaxMessageBytes = std::uint64_t{1} << 30;

// Where this process is in the schedule, for the watchdog thread: what a timeout record names
// (links_of_timeout): the link of each process that did not arrive in the round under way, or
// the link this process was measuring.
class TimeoutView {
 public:
  void set_schedule(std::vector<LinkRound> rounds, std::vector<RankIdentity> ranks) {
    std::lock_guard lock(mutex_);
    rounds_ = std::move(rounds);
    ranks_ = std::move(ranks);
  }
  void enter_round(std::size_t index) {
    std::lock_guard lock(mutex_);
    round_ = index;
    own_.reset();
  }
  void measure(const std::optional<LinkPair>& pair) {
    std::lock_guard lock(mutex_);
    own_ = pair;
  }
  [[nodiscard]] std::vector<std::vector<std::string>> links(const TimeoutReport& report) {
    std::lock_guard lock(mutex_);
    const LinkRound* round = round_ && *round_ < rounds_.size() ? &rounds_[*round_] : nullptr;
    // One rank per process here: the watchdog's units are the ranks.
    return links_of_timeout(report.culprit_ranks, round, ranks_, own_ ? &*own_ : nullptr);
  }

 private:
  std::mutex mutex_;
  std::vector<LinkRound> rounds_;
  std::vector<RankIdentity> ranks_;
  std::optional<std::size_t> round_;
  std::optional<LinkPair> own_;
};

// The process at the other end of this rank's pair in `round`.
int peer_process_of(const LinkRound& round, int index, int me,
                    const std::vector<RankIdentity>& ranks) {
  const LinkPair& pair = round.pairs[static_cast<std::size_t>(index)];
  const int peer_rank = pair.ranks[0] == me ? pair.ranks[1] : pair.ranks[0];
  return ranks[static_cast<std::size_t>(peer_rank)].process;
}

// Both ends' port counter deltas over this round, on every record the round wrote here. Every
// process takes part (the exchange is collective); one without a partner sends nothing.
void attach_counter_deltas(StageSession& session, const VerbsSetup& verbs,
                           std::optional<int> partner,
                           const std::map<std::string, std::uint64_t>& before,
                           std::vector<LinkRecord>& round_records) {
  std::string mine;
  if (verbs.transport && partner) {
    const auto after = verbs.transport->port_counters();
    LinkCounterDeltas end;
    end.node = session.node();
    end.device = verbs.transport->options().device;
    end.port = verbs.transport->options().port;
    end.deltas = counter_deltas(before, after);
    end.saturated = saturated_counters(after);
    mine = encode_counter_end(end);
  }
  session.watchdog().set_context("links: port counters of the round");
  WatchedSection section(&session.watchdog());
  const auto all = session.all_gather("links: port counters of the round", mine);
  if (!partner || round_records.empty()) return;
  std::vector<LinkCounterDeltas> ends;
  try {
    for (const std::string& text : {mine, all[static_cast<std::size_t>(*partner)]}) {
      if (auto end = decode_counter_end(text)) ends.push_back(std::move(*end));
    }
  } catch (const std::invalid_argument& e) {
    throw RuntimeFailure(fmt::format("links: {}", e.what()));
  }
  for (LinkRecord& record : round_records)
    record.counter_deltas = ends;
}

Json links_parameters(const LinksSettings& s) {
  Json tests = Json::array();
  for (const LinkTest test : s.tests)
    tests.push_back(name_of(test));
  return {{"transport", s.transport},         {"memory", s.memory},
          {"tests", std::move(tests)},        {"sizes", s.sizes},
          {"latency_bytes", s.latency_bytes}, {"iterations", s.iterations},
          {"warmup_iterations", s.warmup},    {"window", s.window},
          {"timeout_s", s.timeout_s}};
}

// This process's end of the links: the transport it measures with, or why no process can test.
struct LinkEnds {
  VerbsSetup verbs;                          // --transport verbs
  std::unique_ptr<LinkTransport> transport;  // --transport mpi
  std::string unavailable;                   // set: the stage is skipped everywhere
  [[nodiscard]] LinkTransport* link() const {
    return verbs.transport ? verbs.transport.get() : transport.get();
  }
};

// Collective: sets up the transport on every process, bounded by the watchdog.
LinkEnds open_link_ends(StageSession& session, const LinksSettings& s) {
  LinkEnds ends;
  if (s.transport == "verbs") {
    session.watchdog().set_context("links: set-up of the verbs transport");
    WatchedSection section(&session.watchdog());
    ends.verbs = set_up_verbs(session, s);
    ends.unavailable = ends.verbs.unavailable;
  } else if (MpiSession* mpi = session.group().mpi()) {
    session.watchdog().set_context("links: set-up of the MPI transport");
    WatchedSection section(&session.watchdog());
    ends.transport = mpi->make_link_transport();
  } else {
    ends.unavailable = "no MPI: " + session.group().mpi_unavailable_reason();
  }
  if (ends.unavailable.empty() && distinct_nodes(session.ranks()).size() < 2) {
    ends.unavailable = "one node: no partner to test a link with";
  }
  return ends;
}

// The rounds of this process: in each, connect (verbs), measure this rank's pair if it has one,
// exchange port counters (verbs), and wait for the round's other links. COMMCERT_FAULT's hang
// and fail act here, counted over this rank's transfers.
class LinkRounds {
 public:
  LinkRounds(StageSession& session, const LinksSettings& s, const FaultPlan& faults,
             const LinkEnds& ends, TimeoutView& where)
      : session_(session),
        s_(s),
        faults_(faults),
        verbs_(ends.verbs),
        link_(ends.link()),
        where_(where),
        me_(session.first_rank()),
        hang_before_(faults.hang_before_operation(me_)),
        fail_at_(faults.failing_operation(me_)) {}

  // The records this process's end of `round` wrote (those of the pair it initiated).
  std::vector<LinkRecord> run(const LinkRound& round) {
    const int index = round.pair_of_rank[static_cast<std::size_t>(me_)];
    const std::optional<int> partner =
        index >= 0 ? std::optional(peer_process_of(round, index, me_, session_.ranks()))
                   : std::nullopt;
    if (s_.transport == "verbs") connect(round, partner);
    const std::map<std::string, std::uint64_t> counters_before =
        verbs_.transport && partner ? verbs_.transport->port_counters()
                                    : std::map<std::string, std::uint64_t>{};
    std::vector<LinkRecord> records;
    if (index >= 0) records = measure_pair(round, round.pairs[static_cast<std::size_t>(index)]);
    if (s_.transport == "verbs")
      attach_counter_deltas(session_, verbs_, partner, counters_before, records);
    where_.measure(std::nullopt);  // waiting for the round's other links
    session_.barrier(fmt::format("links: end of round {}", round.round));
    return records;
  }

 private:
  // Queue pairs of this round: every process states its end, the peers' ends are exchanged over
  // the control plane (MPI), and each pair connects.
  void connect(const LinkRound& round, std::optional<int> partner) {
    session_.watchdog().set_context(fmt::format("links: round {} verbs connection", round.round));
    WatchedSection section(&session_.watchdog());
    const std::string mine = link_ ? link_->prepare_connection(partner) : std::string();
    const auto all = session_.all_gather(
        fmt::format("links: round {} verbs connection info", round.round), mine);
    if (link_ && partner)
      link_->complete_connection(*partner, all[static_cast<std::size_t>(*partner)]);
  }

  std::vector<LinkRecord> measure_pair(const LinkRound& round, const LinkPair& pair) {
    where_.measure(pair);
    const FaultPlan round_faults = faults_.for_groups(round.pair_of_rank);
    const int side = pair.ranks[0] == me_ ? 0 : 1;
    const int peer_rank = pair.ranks[static_cast<std::size_t>(1 - side)];
    const int peer_process = session_.ranks()[static_cast<std::size_t>(peer_rank)].process;
    std::vector<LinkRecord> records;
    for (const LinkTest test : s_.tests) {
      // One-way bandwidth is measured both ways: each end initiates once, so an asymmetric
      // fault (one direction of a cable) shows in the direction it affects.
      const int initiators = test == LinkTest::kWriteBandwidth ? 2 : 1;
      const std::vector<std::uint64_t> sizes =
          test == LinkTest::kWriteLatency ? std::vector{s_.latency_bytes} : s_.sizes;
      for (int from = 0; from < initiators; ++from) {
        for (const std::uint64_t bytes : sizes) {
          LinkTransfer transfer;
          transfer.test = test;
          transfer.peer = peer_process;
          transfer.initiator = side == from;
          transfer.bytes = bytes;
          transfer.window = test == LinkTest::kWriteLatency ? 1 : s_.window;
          transfer.warmup = s_.warmup;
          transfer.iterations = s_.iterations;
          transfer.fault_delay_s = round_faults.delay_seconds(me_).value_or(0.0);
          transfer.after_iteration = [this] { session_.watchdog().refresh(0); };
          const auto& a = pair.nodes[static_cast<std::size_t>(from)];
          const auto& b = pair.nodes[static_cast<std::size_t>(1 - from)];
          session_.watchdog().set_context(fmt::format("links: round {} {} {} {}->{}", round.round,
                                                      name_of(test), format_bytes(bytes), a, b));
          std::vector<double> samples = transfer_once(transfer);
          if (!transfer.initiator) continue;
          records.push_back(pair_record(round, pair, from, transfer, std::move(samples)));
        }
      }
    }
    return records;
  }

  // One transfer, after the faults COMMCERT_FAULT injects before this rank's Nth.
  std::vector<double> transfer_once(const LinkTransfer& transfer) {
    if (hang_before_ && operations_ == *hang_before_) {
      // COMMCERT_FAULT hang: this end never arrives; its watchdog thread still answers, so the
      // peer's watchdog names it and ends the job within the timeout.
      session_.watchdog().await_absent(0);
      for (;;)
        std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    if (fail_at_ && operations_ == *fail_at_) {
      // COMMCERT_FAULT fail: this end's transfer reports an error, as one does whose queue pair
      // went into the error state.
      throw RuntimeFailure(fmt::format(
          "injected fault (COMMCERT_FAULT fail:{}:{}): {} {} to process {} failed", me_, *fail_at_,
          name_of(transfer.test), format_bytes(transfer.bytes), transfer.peer));
    }
    ++operations_;
    WatchedSection section(&session_.watchdog());
    return link_->run(transfer);
  }

  LinkRecord pair_record(const LinkRound& round, const LinkPair& pair, int from,
                         const LinkTransfer& transfer, std::vector<double> samples) const {
    LinkRecord record = link_test_record(
        session_.origin(0), s_.transport, s_.memory, transfer.test, round.round, pair, from,
        link_measurement(transfer.test, transfer.bytes, transfer.window, s_.warmup,
                         std::move(samples)));
    if (verbs_.transport) {
      record.devices = {verbs_.transport->device_port(), verbs_.transport->peer_device()};
      record.registrations = {std::string(verbs_.transport->registration()),
                              verbs_.transport->peer_registration()};
    }
    return record;
  }

  StageSession& session_;
  const LinksSettings& s_;
  const FaultPlan& faults_;
  const VerbsSetup& verbs_;
  LinkTransport* link_;
  TimeoutView& where_;
  int me_;
  std::optional<std::uint64_t> hang_before_;
  std::optional<std::uint64_t> fail_at_;
  std::uint64_t operations_ = 0;  // this rank's transfers so far, for COMMCERT_FAULT
};

}  // namespace

std::vector<LinkTest> parse_link_tests(std::string_view text, std::string_view flag) {
  std::vector<LinkTest> tests;
  for (const std::string_view name : split_at(text)) {
    std::optional<LinkTest> found;
    for (const LinkTest test : {LinkTest::kWriteBandwidth, LinkTest::kWriteBandwidthBidirectional,
                                LinkTest::kReadBandwidth, LinkTest::kWriteLatency}) {
      if (name_of(test) == name) found = test;
    }
    if (!found) {
      throw UsageError(fmt::format(
          "{}: unknown test '{}' (write_bw, write_bw_bidir, read_bw, write_lat)", flag, name));
    }
    if (std::find(tests.begin(), tests.end(), *found) == tests.end()) tests.push_back(*found);
  }
  return tests;
}

void LinksCommand::configure(CLI::App& app) {
  app.add_option("--transport", flags_.transport,
                 "mpi (MPI point-to-point, host memory) or verbs (RDMA)")
      ->check(CLI::IsMember({"mpi", "verbs"}))
      ->envname("COMMCERT_LINKS_TRANSPORT")
      ->capture_default_str();
  app.add_option("--mem", flags_.memory, "Where verbs buffers live: host or gpu")
      ->check(CLI::IsMember({"host", "gpu"}))
      ->capture_default_str();
  app.add_option("--tests", flags_.tests,
                 "Comma list of write_bw, write_bw_bidir, read_bw (verbs), write_lat "
                 "(default: every test the transport has)");
  app.add_option("--sizes", flags_.sizes, "Comma list of bandwidth message sizes (K/M/G)")
      ->capture_default_str();
  app.add_option("--latency-size", flags_.latency_size, "Message size of the latency test")
      ->capture_default_str();
  app.add_option("--window", flags_.window, "Messages in flight per bandwidth iteration")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--gid-index", flags_.gid_index,
                 "verbs: GID index to address the peer by (default: RoCE v2 from the GID table; "
                 "LID on InfiniBand)")
      ->check(CLI::Range(0, 255));
  app.add_option("--ib-port", flags_.ib_port, "verbs: port of each RDMA device to test")
      ->check(CLI::Range(1, 255))
      ->capture_default_str();
  stage_.add_to(app);
}

LinksSettings LinksCommand::resolve_settings() const {
  LinksSettings s;
  s.transport = flags_.transport;
  s.memory = flags_.memory;
  if (s.transport == "mpi" && s.memory == "gpu") {
    throw UsageError("--mem gpu: the mpi transport moves host memory (use --transport verbs)");
  }
  if (flags_.tests.empty()) {
    s.tests = {LinkTest::kWriteBandwidth, LinkTest::kWriteBandwidthBidirectional};
    if (s.transport == "verbs") s.tests.push_back(LinkTest::kReadBandwidth);
    s.tests.push_back(LinkTest::kWriteLatency);
  } else {
    s.tests = parse_link_tests(flags_.tests, "--tests");
  }
  if (s.transport == "mpi" &&
      std::find(s.tests.begin(), s.tests.end(), LinkTest::kReadBandwidth) != s.tests.end()) {
    throw UsageError("--tests: read_bw is an RDMA read and needs --transport verbs");
  }
  for (const std::string_view text : split_at(flags_.sizes)) {
    const std::uint64_t bytes = parse_size(text, "--sizes");
    if (bytes == 0 || bytes > kMaxMessageBytes) {
      throw UsageError(fmt::format("--sizes: {} is not from 1 byte to 1G", text));
    }
    s.sizes.push_back(bytes);
  }
  s.latency_bytes = parse_size(flags_.latency_size, "--latency-size");
  if (s.latency_bytes == 0 || s.latency_bytes > (std::uint64_t{1} << 20)) {
    throw UsageError("--latency-size: must be from 1 byte to 1M");
  }
  s.iterations = stage_.iterations();
  s.warmup = stage_.warmup();
  s.window = flags_.window;
  for (const std::uint64_t bytes : s.sizes) {
    if (bytes * static_cast<std::uint64_t>(s.window) > 4 * kMaxMessageBytes) {
      throw UsageError("--window: sizes times window must stay within 4G of buffer");
    }
  }
  if (flags_.gid_index >= 0) {
    if (s.transport != "verbs") throw UsageError("--gid-index: only with --transport verbs");
    s.gid_index = flags_.gid_index;
  }
  s.ib_port = flags_.ib_port;
  s.timeout_s = stage_.timeout_s();
  return s;
}

int LinksCommand::run(Invocation& invocation) {
  stage_.validate_output();
  const LinksSettings s = resolve_settings();
  const FaultPlan faults = fault_plan_from_environment();
  const GpuRuntimeInfo runtime = probe_gpu_runtime();
  TimeoutView where;  // outlives the session, whose watchdog thread reads it
  StageSession session(invocation, name(), LinkRecord::kKind, stage_.output(), s.timeout_s);
  session.set_timeout_nodes([&where](const TimeoutReport& report) { return where.links(report); });
  return session.run([&] {
    faults.validate_ranks(session.group().process_count());
    session.start({StageSlot{}}, runtime, links_parameters(s), {});
    session.update_meta(
        {{"fault_injection", faults.empty() ? Json(nullptr) : Json(faults.describe())}});

    LinkEnds ends = open_link_ends(session, s);
    std::vector<Json> records;
    if (!ends.unavailable.empty()) {
      if (session.speaks_for_node()) {
        records.push_back(to_json(lone_link_record(session.origin(0), s.transport, s.memory,
                                                   session.first_rank(), ends.unavailable)));
      }
      if (session.show_progress())
        fmt::print(stderr, "commcert links: skipped: {}\n", ends.unavailable);
      return session.finish(records, false);
    }
    const VerbsSetup& verbs = ends.verbs;
    if (!verbs.problem.empty()) {
      // This end cannot test its rail (port down, device not openable): its node lacks evidence.
      records.push_back(to_json(lone_link_record(session.origin(0), s.transport, s.memory,
                                                 session.first_rank(), verbs.problem)));
    }
    if (verbs.transport && session.show_progress()) {
      fmt::print(stderr, "commcert links: verbs on {} ({}, memory registered as {})\n",
                 verbs.transport->device_port(), verbs.transport->gid_choice(),
                 verbs.transport->registration());
    }

    const auto& ranks = session.ranks();
    const auto rounds = plan_link_rounds(
        ranks, s.transport == "verbs" ? verbs.rail_of_rank : first_rank_rails(ranks));
    where.set_schedule(rounds, ranks);
    LinkRounds runner(session, s, faults, ends, where);
    ProgressReporter progress(session.show_progress(), "links", static_cast<double>(rounds.size()));
    for (const LinkRound& round : rounds) {
      where.enter_round(static_cast<std::size_t>(&round - rounds.data()));
      for (const LinkRecord& record : runner.run(round))
        records.push_back(to_json(record));
      progress.advance(1, fmt::format("round {} of {} ({} link(s) at once)", round.round + 1,
                                      rounds.size(), round.pairs.size()));
    }
    progress.finish(fmt::format("{} round(s) of node pairs measured", rounds.size()));
    return session.finish(records, false);
  });
}

}  // namespace commcert
