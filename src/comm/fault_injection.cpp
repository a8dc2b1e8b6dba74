#include "comm/fault_injection.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/split.hpp"

namespace commcert {
namespace {

std::uint64_t parse_number(std::string_view text, std::string_view entry, std::string_view what) {
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    throw UsageError(fmt::format("COMMCERT_FAULT: invalid {} '{}' in '{}'", what, text, entry));
  }
  return value;
}

}  // namespace

FaultPlan parse_fault_plan(std::string_view text) {
  std::vector<Fault> faults;
  if (text.empty()) return FaultPlan{};
  for (std::string_view entry : split_at(text, ',')) {
    const auto fields = split_at(entry, ':');
    const auto usage = [&](std::string_view why) {
      return UsageError(
          fmt::format("COMMCERT_FAULT: {} in '{}' (expected delay:<rank>:<us>, corrupt:<rank>, "
                      "hang:<rank>[:<op>], linkdelay:<rank>:<peer>:<us>, freeze:<process>, "
                      "stale:<rank>, partial:<rank> or fail:<rank>[:<op>])",
                      why, entry));
    };
    if (fields.size() < 2) throw usage("missing rank");
    const std::uint64_t rank_number = parse_number(fields[1], entry, "rank");
    if (rank_number > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
      throw usage(fmt::format("rank {} out of range", rank_number));
    }
    const int rank = static_cast<int>(rank_number);
    if (fields[0] == "delay") {
      if (fields.size() != 3) throw usage("delay needs a duration in microseconds");
      faults.push_back({FaultKind::kDelay, rank, parse_number(fields[2], entry, "delay")});
    } else if (fields[0] == "corrupt") {
      if (fields.size() != 2) throw usage("corrupt takes no argument");
      faults.push_back({FaultKind::kCorrupt, rank, 0});
    } else if (fields[0] == "linkdelay") {
      if (fields.size() != 4) throw usage("linkdelay needs a peer rank and microseconds");
      const std::uint64_t peer = parse_number(fields[2], entry, "peer rank");
      if (peer > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
        throw usage(fmt::format("rank {} out of range", peer));
      }
      if (static_cast<int>(peer) == rank) throw usage("a link needs two different ranks");
      faults.push_back({FaultKind::kLinkDelay, rank, parse_number(fields[3], entry, "delay"),
                        static_cast<int>(peer)});
    } else if (fields[0] == "hang") {
      if (fields.size() > 3) throw usage("too many fields");
      const std::uint64_t at = fields.size() == 3 ? parse_number(fields[2], entry, "operation") : 0;
      faults.push_back({FaultKind::kHang, rank, at});
    } else if (fields[0] == "fail") {
      if (fields.size() > 3) throw usage("too many fields");
      const std::uint64_t at = fields.size() == 3 ? parse_number(fields[2], entry, "operation") : 0;
      faults.push_back({FaultKind::kFail, rank, at});
    } else if (fields[0] == "freeze") {
      if (fields.size() != 2) throw usage("freeze takes no argument");
      faults.push_back({FaultKind::kFreezeAtEnd, rank, 0});
    } else if (fields[0] == "stale") {
      if (fields.size() != 2) throw usage("stale takes no argument");
      faults.push_back({FaultKind::kStale, rank, 0});
    } else if (fields[0] == "partial") {
      if (fields.size() != 2) throw usage("partial takes no argument");
      faults.push_back({FaultKind::kPartial, rank, 0});
    } else {
      throw usage(fmt::format("unknown fault kind '{}'", fields[0]));
    }
  }
  return FaultPlan(std::move(faults));
}

FaultPlan fault_plan_from_environment() {
  const char* text = std::getenv("COMMCERT_FAULT");
  return parse_fault_plan(text ? text : "");
}

std::optional<double> FaultPlan::delay_seconds(int rank) const {
  for (const auto& fault : faults_) {
    if (fault.kind == FaultKind::kDelay && fault.rank == rank) {
      return static_cast<double>(fault.argument) * 1e-6;
    }
  }
  return std::nullopt;
}

bool FaultPlan::corrupts(int rank) const {
  for (const auto& fault : faults_) {
    if (fault.kind == FaultKind::kCorrupt && fault.rank == rank) return true;
  }
  return false;
}

std::optional<std::uint64_t> FaultPlan::hang_before_operation(int rank) const {
  for (const auto& fault : faults_) {
    if (fault.kind == FaultKind::kHang && fault.rank == rank) return fault.argument;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> FaultPlan::failing_operation(int rank) const {
  for (const auto& fault : faults_) {
    if (fault.kind == FaultKind::kFail && fault.rank == rank) return fault.argument;
  }
  return std::nullopt;
}

std::uint64_t FaultPlan::unwritten_elements(int rank, std::uint64_t output_elements) const {
  std::uint64_t unwritten = 0;
  for (const auto& fault : faults_) {
    if (fault.rank != rank) continue;
    if (fault.kind == FaultKind::kStale) unwritten = output_elements;
    // The first half written, rounded down: a one-element output is left stale.
    if (fault.kind == FaultKind::kPartial) {
      unwritten = std::max(unwritten, output_elements - output_elements / 2);
    }
  }
  return unwritten;
}

void restore_unwritten_tail(const void* before, void* output, std::uint64_t output_bytes,
                            std::uint64_t unwritten_bytes) {
  if (unwritten_bytes == 0) return;
  std::memcpy(static_cast<unsigned char*>(output) + (output_bytes - unwritten_bytes), before,
              unwritten_bytes);
}

bool FaultPlan::freezes_at_end(int process) const {
  for (const auto& fault : faults_) {
    if (fault.kind == FaultKind::kFreezeAtEnd && fault.rank == process) return true;
  }
  return false;
}

FaultPlan FaultPlan::for_groups(const std::vector<int>& group_of_rank) const {
  const auto group = [&](int rank) {
    return rank >= 0 && static_cast<std::size_t>(rank) < group_of_rank.size()
               ? group_of_rank[static_cast<std::size_t>(rank)]
               : -1;
  };
  std::vector<Fault> out;
  for (const auto& fault : faults_) {
    if (fault.kind != FaultKind::kLinkDelay) {
      out.push_back(fault);
    } else if (group(fault.rank) >= 0 && group(fault.rank) == group(fault.peer)) {
      out.push_back({FaultKind::kDelay, fault.rank, fault.argument});
    }
  }
  return FaultPlan(std::move(out));
}

void FaultPlan::validate_ranks(int nranks) const {
  for (const auto& fault : faults_) {
    for (const int rank : {fault.rank, fault.peer}) {
      if (rank >= nranks) {
        throw UsageError(
            fmt::format("COMMCERT_FAULT names rank {} but the job has {} rank(s)", rank, nranks));
      }
    }
  }
}

std::string FaultPlan::describe() const {
  std::string out;
  for (const auto& fault : faults_) {
    if (!out.empty()) out += ",";
    switch (fault.kind) {
      case FaultKind::kDelay:
        out += fmt::format("delay:{}:{}", fault.rank, fault.argument);
        break;
      case FaultKind::kCorrupt:
        out += fmt::format("corrupt:{}", fault.rank);
        break;
      case FaultKind::kHang:
        out += fmt::format("hang:{}:{}", fault.rank, fault.argument);
        break;
      case FaultKind::kLinkDelay:
        out += fmt::format("linkdelay:{}:{}:{}", fault.rank, fault.peer, fault.argument);
        break;
      case FaultKind::kFreezeAtEnd:
        out += fmt::format("freeze:{}", fault.rank);
        break;
      case FaultKind::kStale:
        out += fmt::format("stale:{}", fault.rank);
        break;
      case FaultKind::kPartial:
        out += fmt::format("partial:{}", fault.rank);
        break;
      case FaultKind::kFail:
        out += fmt::format("fail:{}:{}", fault.rank, fault.argument);
        break;
    }
  }
  return out;
}

}  // namespace commcert
