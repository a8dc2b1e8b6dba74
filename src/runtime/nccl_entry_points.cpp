// NCCL's API, defined here and forwarded to the libnccl.so.2 that nccl_runtime() found, so the
// binary starts on nodes without NCCL (a login node, a CPU node) and takes NCCL from wherever
// the node keeps it (NCCL_HOME, the system, CUDA_HOME, a PyTorch environment). The parameter
// lists must match nccl.h exactly: the compiler rejects any that does not.
#include <string>

#include <fmt/format.h>
#include <nccl.h>

#include "runtime/runtime_library.hpp"

namespace {

thread_local std::string last_loader_error;

template <typename Function>
Function* resolve(const char* name) {
  const auto& nccl = commcert::nccl_runtime();
  if (!nccl.loaded()) return nullptr;
  return reinterpret_cast<Function*>(nccl.library->symbol(name));
}

// What a call returns when NCCL or the entry point is missing; the text is kept for
// ncclGetErrorString/ncclGetLastError so the caller's error message says why.
ncclResult_t missing(const char* name) {
  const auto& nccl = commcert::nccl_runtime();
  last_loader_error = nccl.loaded() ? fmt::format("{} is not in the loaded NCCL {} ({})", name,
                                                  nccl.version, nccl.path())
                                    : fmt::format("NCCL is not loaded: {}", nccl.error);
  return ncclInvalidUsage;
}

}  // namespace

#define COMMCERT_NCCL_FORWARD(function, parameters, arguments)          \
  extern "C" ncclResult_t function parameters {                         \
    static auto* const target = resolve<decltype(function)>(#function); \
    if (!target) return missing(#function);                             \
    return target arguments;                                            \
  }

// clang-format off
COMMCERT_NCCL_FORWARD(ncclGetVersion, (int* version), (version))
COMMCERT_NCCL_FORWARD(ncclGetUniqueId, (ncclUniqueId* uniqueId), (uniqueId))
COMMCERT_NCCL_FORWARD(ncclCommInitRankConfig,
    (ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config),
    (comm, nranks, commId, rank, config))
COMMCERT_NCCL_FORWARD(ncclCommInitRank,
    (ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank), (comm, nranks, commId, rank))
COMMCERT_NCCL_FORWARD(ncclCommInitAll, (ncclComm_t* comm, int ndev, const int* devlist),
    (comm, ndev, devlist))
COMMCERT_NCCL_FORWARD(ncclCommFinalize, (ncclComm_t comm), (comm))
COMMCERT_NCCL_FORWARD(ncclCommDestroy, (ncclComm_t comm), (comm))
COMMCERT_NCCL_FORWARD(ncclCommAbort, (ncclComm_t comm), (comm))
COMMCERT_NCCL_FORWARD(ncclCommSplit,
    (ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config),
    (comm, color, key, newcomm, config))
COMMCERT_NCCL_FORWARD(ncclCommGetAsyncError, (ncclComm_t comm, ncclResult_t* asyncError),
    (comm, asyncError))
COMMCERT_NCCL_FORWARD(ncclCommCount, (const ncclComm_t comm, int* count), (comm, count))
COMMCERT_NCCL_FORWARD(ncclCommCuDevice, (const ncclComm_t comm, int* device), (comm, device))
COMMCERT_NCCL_FORWARD(ncclCommUserRank, (const ncclComm_t comm, int* rank), (comm, rank))
COMMCERT_NCCL_FORWARD(ncclReduce,
    (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
     int root, ncclComm_t comm, cudaStream_t stream),
    (sendbuff, recvbuff, count, datatype, op, root, comm, stream))
COMMCERT_NCCL_FORWARD(ncclBroadcast,
    (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
     ncclComm_t comm, cudaStream_t stream),
    (sendbuff, recvbuff, count, datatype, root, comm, stream))
COMMCERT_NCCL_FORWARD(ncclAllReduce,
    (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
     ncclComm_t comm, cudaStream_t stream),
    (sendbuff, recvbuff, count, datatype, op, comm, stream))
COMMCERT_NCCL_FORWARD(ncclReduceScatter,
    (const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
     ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream),
    (sendbuff, recvbuff, recvcount, datatype, op, comm, stream))
COMMCERT_NCCL_FORWARD(ncclAllGather,
    (const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
     ncclComm_t comm, cudaStream_t stream),
    (sendbuff, recvbuff, sendcount, datatype, comm, stream))
COMMCERT_NCCL_FORWARD(ncclAlltoAll,
    (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
     cudaStream_t stream),
    (sendbuff, recvbuff, count, datatype, comm, stream))
COMMCERT_NCCL_FORWARD(ncclGather,
    (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
     ncclComm_t comm, cudaStream_t stream),
    (sendbuff, recvbuff, count, datatype, root, comm, stream))
COMMCERT_NCCL_FORWARD(ncclScatter,
    (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
     ncclComm_t comm, cudaStream_t stream),
    (sendbuff, recvbuff, count, datatype, root, comm, stream))
COMMCERT_NCCL_FORWARD(ncclSend,
    (const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
     cudaStream_t stream),
    (sendbuff, count, datatype, peer, comm, stream))
COMMCERT_NCCL_FORWARD(ncclRecv,
    (void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
     cudaStream_t stream),
    (recvbuff, count, datatype, peer, comm, stream))
COMMCERT_NCCL_FORWARD(ncclGroupStart, (), ())
COMMCERT_NCCL_FORWARD(ncclGroupEnd, (), ())
// clang-format on

namespace {

// The loader's text when the failing call was one of the forwards above (NCCL missing, or an
// entry point this NCCL lacks), NCCL's own text otherwise.
template <typename Describe, typename Argument>
const char* describe(Describe* target, const char* name, Argument argument) {
  if (!target) {
    if (last_loader_error.empty()) (void)missing(name);
    return last_loader_error.c_str();
  }
  if (!last_loader_error.empty()) {
    static thread_local std::string reported;
    reported = std::move(last_loader_error);
    last_loader_error.clear();
    return reported.c_str();
  }
  return target(argument);
}

}  // namespace

extern "C" const char* ncclGetErrorString(ncclResult_t result) {
  static auto* const target = resolve<decltype(ncclGetErrorString)>("ncclGetErrorString");
  return describe(target, "ncclGetErrorString", result);
}

extern "C" const char* ncclGetLastError(ncclComm_t comm) {
  static auto* const target = resolve<decltype(ncclGetLastError)>("ncclGetLastError");
  return describe(target, "ncclGetLastError", comm);
}
