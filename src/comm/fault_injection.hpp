#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace commcert {

// Testing feature: COMMCERT_FAULT=<kind>:<rank>[:<arg>][,...] makes one rank misbehave the way
// failing hardware does, so every later stage (records, validator, Slurm drain) can be tested
// end to end without broken hardware (docs/fault-injection.md).
//   delay:<rank>:<us>    the rank arrives <us> microseconds late at every operation
//   corrupt:<rank>       the rank's output has bits flipped after every operation
//   hang:<rank>[:<n>]    the rank stops before its n-th operation (default 0) and never returns
//   linkdelay:<rank>:<peer>:<us>  the rank arrives <us> late at every operation of a
//                        communicator that also holds <peer>: a slow path between two nodes
//   freeze:<process>     the process stops (SIGSTOP) after its last record, as the job ends
//   stale:<rank>         the rank's operations return without writing its output
//   partial:<rank>       the rank's operations write only the first half of its output
//   fail:<rank>[:<n>]    the rank's n-th operation (default 0) fails with an error, as a
//                        transfer does whose queue pair went into the error state
enum class FaultKind { kDelay, kCorrupt, kHang, kLinkDelay, kFreezeAtEnd, kStale, kPartial, kFail };

struct Fault {
  FaultKind kind;
  int rank;
  std::uint64_t argument;  // delay, linkdelay: microseconds; hang: operation index
  int peer = -1;           // linkdelay: the other end
};

class FaultPlan {
 public:
  FaultPlan() = default;
  explicit FaultPlan(std::vector<Fault> faults) : faults_(std::move(faults)) {}

  [[nodiscard]] bool empty() const { return faults_.empty(); }
  [[nodiscard]] const std::vector<Fault>& faults() const { return faults_; }
  [[nodiscard]] std::optional<double> delay_seconds(int rank) const;
  [[nodiscard]] bool corrupts(int rank) const;
  [[nodiscard]] std::optional<std::uint64_t> hang_before_operation(int rank) const;
  [[nodiscard]] std::optional<std::uint64_t> failing_operation(int rank) const;
  // stale, partial: how many elements at the end of the rank's output (of `output_elements`)
  // an operation leaves as they were before it; 0 when the rank writes all of it.
  [[nodiscard]] std::uint64_t unwritten_elements(int rank, std::uint64_t output_elements) const;
  // `process` (its index in the job) stops itself once its work is done, before MPI_Finalize.
  [[nodiscard]] bool freezes_at_end(int process) const;
  // The plan for one round of groups (group_of_rank[rank], -1: idle): a link delay becomes a
  // plain delay of its rank where the rank and its peer share a group, and vanishes elsewhere.
  [[nodiscard]] FaultPlan for_groups(const std::vector<int>& group_of_rank) const;
  // Throws UsageError when a fault names a rank the job does not have.
  void validate_ranks(int nranks) const;
  [[nodiscard]] std::string describe() const;

 private:
  std::vector<Fault> faults_;
};

// The host side of stale and partial: puts the last `unwritten_bytes` of `output` back from
// `before`, the output as it was before the operation (saved by the caller), as if the transport
// had never written them. `before` holds those bytes only, not the whole output.
void restore_unwritten_tail(const void* before, void* output, std::uint64_t output_bytes,
                            std::uint64_t unwritten_bytes);

// Parses the COMMCERT_FAULT syntax; an empty string is no fault. Throws UsageError.
[[nodiscard]] FaultPlan parse_fault_plan(std::string_view text);

// The plan from the COMMCERT_FAULT environment variable (every rank sees the same value).
[[nodiscard]] FaultPlan fault_plan_from_environment();

}  // namespace commcert
