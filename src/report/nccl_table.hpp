#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/rank_identity.hpp"

namespace commcert {

// One placement (out-of-place or in-place) of a table row, as the record of the same measurement
// states it: the figures derived once per measurement (bench's derive_figures), never here.
struct NcclTablePlacement {
  struct Figures {
    double time_seconds = 0;
    double algbw_bytes_per_second = 0;
    double busbw_bytes_per_second = 0;
    std::optional<std::uint64_t> wrong_elements;  // nullopt: not checked
  };
  struct WrongRank {
    int rank = 0;  // global rank
    std::uint64_t wrong_elements = 0;
    int wrong_iterations = 0;
  };
  std::optional<Figures> figures;  // nullopt: not measured (unsupported): N/A columns
  bool in_place = false;
  std::size_t iterations = 0;          // timed iterations
  std::vector<WrongRank> wrong_ranks;  // the ranks that saw wrong elements
};

// One row: one size of one collective for one group, both placements.
struct NcclTableRow {
  std::uint64_t bytes = 0;  // nccl-tests "size"
  std::uint64_t count = 0;  // nccl-tests "count" (per rank)
  std::string type;         // nccl-tests' names ("float"; redop "sum", or "none")
  std::string redop = "none";
  int root = -1;
  std::string scope = "cluster";
  int group = 0;
  std::vector<std::string> group_nodes;
  NcclTablePlacement out_of_place;
  NcclTablePlacement in_place;
};

// What the header line says about the sweep.
struct NcclTableSweep {
  std::uint64_t min_bytes = 0;
  std::uint64_t max_bytes = 0;
  std::uint64_t step_bytes = 0;
  double step_factor = 1.0;  // > 1: multiplicative steps
  int warmup_iterations = 0;
  int iterations = 0;
  bool check = false;
  int graph_launches = 0;
};

// Renders sweep results in the nccl-tests table layout (2.19 format: 13 columns, both placements
// per row, the same header and footer lines), so scripts that parse nccl-tests output read ours.
// Rendered from the figures the records carry (derived once per measurement); never parsed
// back. Depends on core only: the sweep (cli/sweep_table) turns its measurements into rows.
class NcclTestsTable {
 public:
  struct Context {
    std::string banner;  // first line, e.g. "commcert 0.1.0 (abc123) backend mpi (Open MPI v4.1.4)"
    NcclTableSweep sweep;
    int gpus_per_process = 1;
    std::vector<RankIdentity> ranks;
    std::vector<std::string> warnings;  // printed as "# WARNING: ..." under the banner
  };

  NcclTestsTable(std::FILE* out, Context context);

  // `name`: the nccl-tests binary measuring the same collective ("all_reduce_perf").
  void begin(std::string_view name);
  void row(const NcclTableRow& row);
  void note(const std::string& message);
  void end(std::string_view name);

  // A number in `width` columns as nccl-tests prints it: %.2f, %.1f, %.0f, then exponent form.
  [[nodiscard]] static std::string fit_number(double value, int width);

 private:
  std::FILE* out_;
  Context context_;
  std::uint64_t out_of_bounds_ = 0;
  double busbw_sum_ = 0;
  int busbw_count_ = 0;
};

}  // namespace commcert
