#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/collectives.hpp"
#include "bench/measurement.hpp"
#include "bench/sweep_options.hpp"
#include "core/rank_identity.hpp"

namespace commcert {

// Renders sweep results in the nccl-tests table layout (2.19 format: 13 columns, both placements
// per row, the same header and footer lines), so scripts that parse nccl-tests output read ours.
// Rendered from the same Measurement the records come from; never parsed back.
class NcclTestsTable {
 public:
  struct Context {
    std::string banner;  // first line, e.g. "commcert 0.1.0 (abc123) backend mpi (Open MPI v4.1.4)"
    const SweepOptions* options = nullptr;
    int gpus_per_process = 1;
    std::vector<RankIdentity> ranks;
    std::vector<std::string> warnings;  // printed as "# WARNING: ..." under the banner
  };

  NcclTestsTable(std::FILE* out, Context context);

  void begin(const CollectiveInfo& collective);
  void row(const Measurement& out_of_place, const Measurement& in_place);
  void note(const std::string& message);
  void end(const CollectiveInfo& collective);

  // A number in `width` columns as nccl-tests prints it: %.2f, %.1f, %.0f, then exponent form.
  [[nodiscard]] static std::string fit_number(double value, int width);
  [[nodiscard]] static std::string row_text(const Measurement& out_of_place,
                                            const Measurement& in_place,
                                            RankAggregation aggregation,
                                            const std::vector<RankIdentity>& ranks);

 private:
  std::FILE* out_;
  Context context_;
  std::uint64_t out_of_bounds_ = 0;
  double busbw_sum_ = 0;
  int busbw_count_ = 0;
};

}  // namespace commcert
