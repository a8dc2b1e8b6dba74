#include "comm/nccl_collective_calls.hpp"

#include "comm/collective_dispatch.hpp"
#include "comm/cuda_errors.hpp"
#include "core/errors.hpp"

namespace commcert {
namespace {

void nccl_allreduce(const NcclCall& c) {
  COMMCERT_CHECK_NCCL(ncclAllReduce(c.input, c.output, c.count, c.type, c.op, c.comm, c.stream),
                      c.comm);
}

void nccl_allgather(const NcclCall& c) {
  COMMCERT_CHECK_NCCL(ncclAllGather(c.input, c.output, c.count, c.type, c.comm, c.stream), c.comm);
}

void nccl_reduce_scatter(const NcclCall& c) {
  COMMCERT_CHECK_NCCL(ncclReduceScatter(c.input, c.output, c.count, c.type, c.op, c.comm, c.stream),
                      c.comm);
}

void nccl_broadcast(const NcclCall& c) {
  COMMCERT_CHECK_NCCL(ncclBroadcast(c.input, c.output, c.count, c.type, c.root, c.comm, c.stream),
                      c.comm);
}

void nccl_reduce(const NcclCall& c) {
  COMMCERT_CHECK_NCCL(
      ncclReduce(c.input, c.output, c.count, c.type, c.op, c.root, c.comm, c.stream), c.comm);
}

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
void nccl_alltoall(const NcclCall& c) {
  COMMCERT_CHECK_NCCL(ncclAlltoAll(c.input, c.output, c.count, c.type, c.comm, c.stream), c.comm);
}

void nccl_gather(const NcclCall& c) {
  COMMCERT_CHECK_NCCL(ncclGather(c.input, c.output, c.count, c.type, c.root, c.comm, c.stream),
                      c.comm);
}

void nccl_scatter(const NcclCall& c) {
  COMMCERT_CHECK_NCCL(ncclScatter(c.input, c.output, c.count, c.type, c.root, c.comm, c.stream),
                      c.comm);
}
#else
[[noreturn]] void nccl_needs_2_28(const NcclCall& /*c*/) {
  // unsupported() reports these as skipped; reaching here is a bug in the caller.
  throw RuntimeFailure("alltoall, gather and scatter need NCCL 2.28 headers at build time");
}
constexpr auto nccl_alltoall = nccl_needs_2_28;
constexpr auto nccl_gather = nccl_needs_2_28;
constexpr auto nccl_scatter = nccl_needs_2_28;
#endif

void nccl_sendrecv(const NcclCall& c) {
  COMMCERT_CHECK_NCCL(ncclGroupStart());
  COMMCERT_CHECK_NCCL(ncclSend(c.input, c.count, c.type, (c.rank + 1) % c.size, c.comm, c.stream),
                      c.comm);
  COMMCERT_CHECK_NCCL(
      ncclRecv(c.output, c.count, c.type, (c.rank + c.size - 1) % c.size, c.comm, c.stream),
      c.comm);
  COMMCERT_CHECK_NCCL(ncclGroupEnd());
}

using NcclCallFn = void (*)(const NcclCall&);
constexpr CollectiveEntry<NcclCallFn> kNcclCallList[] = {
    {CollectiveKind::kAllReduce, nccl_allreduce},
    {CollectiveKind::kAllGather, nccl_allgather},
    {CollectiveKind::kReduceScatter, nccl_reduce_scatter},
    {CollectiveKind::kBroadcast, nccl_broadcast},
    {CollectiveKind::kReduce, nccl_reduce},
    {CollectiveKind::kAllToAll, nccl_alltoall},
    {CollectiveKind::kSendRecv, nccl_sendrecv},
    {CollectiveKind::kGather, nccl_gather},
    {CollectiveKind::kScatter, nccl_scatter},
};
constexpr auto kNcclCalls = make_collective_dispatch(kNcclCallList);

}  // namespace

ncclDataType_t nccl_type(DataType type) {
  switch (type) {
    case DataType::kInt8:
      return ncclInt8;
    case DataType::kUint8:
      return ncclUint8;
    case DataType::kInt32:
      return ncclInt32;
    case DataType::kUint32:
      return ncclUint32;
    case DataType::kInt64:
      return ncclInt64;
    case DataType::kUint64:
      return ncclUint64;
    case DataType::kHalf:
      return ncclFloat16;
    case DataType::kBfloat16:
      return ncclBfloat16;
    case DataType::kFloat:
      return ncclFloat32;
    case DataType::kDouble:
      return ncclFloat64;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
    case DataType::kFp8E4M3:
      return ncclFloat8e4m3;
    case DataType::kFp8E5M2:
      return ncclFloat8e5m2;
#else
    case DataType::kFp8E4M3:
    case DataType::kFp8E5M2:
      break;
#endif
  }
  throw RuntimeFailure("datatype not supported by this NCCL");
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return ncclSum;
    case ReduceOp::kProd:
      return ncclProd;
    case ReduceOp::kMin:
      return ncclMin;
    case ReduceOp::kMax:
      return ncclMax;
    case ReduceOp::kAvg:
      return ncclAvg;
  }
  return ncclSum;
}

void enqueue_nccl_call(CollectiveKind kind, const NcclCall& call) {
  kNcclCalls[static_cast<std::size_t>(kind)](call);
}

}  // namespace commcert
