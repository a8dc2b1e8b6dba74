#pragma once

#include <array>
#include <cstdint>

#include <mpi.h>

#include "kernels/collective_types.hpp"

namespace commcert {

// MPI has no half, bfloat16 or fp8 type and no average: half-width floats travel as unsigned
// integers of their width with user-defined reductions, and an average is a sum divided by the
// rank count after the reduction (what NCCL does for integer types).
class MpiReductionCatalog {
 public:
  MpiReductionCatalog() { user_ops_.fill(MPI_OP_NULL); }
  ~MpiReductionCatalog();
  MpiReductionCatalog(const MpiReductionCatalog&) = delete;
  MpiReductionCatalog& operator=(const MpiReductionCatalog&) = delete;

  [[nodiscard]] static MPI_Datatype datatype(DataType type);
  // The MPI operation that computes `op` on `type` (MPI_SUM for an average).
  [[nodiscard]] MPI_Op operation(DataType type, ReduceOp op);

 private:
  std::array<MPI_Op, kDataTypeCount * kReduceOpCount> user_ops_;
};

// output[i] /= nranks in the element type, completing an average computed as a sum.
void divide_by_rank_count(DataType type, void* output, std::uint64_t elements, int nranks);

}  // namespace commcert
