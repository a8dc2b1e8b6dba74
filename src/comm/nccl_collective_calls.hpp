#pragma once

// The NCCL call of each collective kind (kNcclCallList), for the NCCL communicator
// (nccl_communicator*.cpp): each kind's call is one small function, and make_collective_dispatch
// does not compile while a kind lacks one.

#include <cstddef>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "kernels/collective_types.hpp"

namespace commcert {

// What every NCCL collective call needs, gathered once so each kind's call is one small function.
struct NcclCall {
  const void* input;
  void* output;
  std::size_t count;
  ncclDataType_t type;
  ncclRedOp_t op;
  int root;
  int rank;
  int size;
  ncclComm_t comm;
  cudaStream_t stream;
};

// NCCL's datatype; throws RuntimeFailure for one the NCCL compiled against lacks.
[[nodiscard]] ncclDataType_t nccl_type(DataType type);
[[nodiscard]] ncclRedOp_t nccl_op(ReduceOp op);

// Enqueues `kind`'s call on the call's stream (inside the caller's NCCL group, where there is one).
void enqueue_nccl_call(CollectiveKind kind, const NcclCall& call);

}  // namespace commcert
