#include "comm/mpi_datatypes.hpp"

#include "comm/mpi_runtime.hpp"
#include "kernels/pattern.hpp"

namespace commcert {
namespace {

template <DataType Type, ReduceOp Op>
void reduce_minifloats(void* in, void* inout, int* length, MPI_Datatype* /*datatype*/) {
  constexpr int kBytes = element_size(Type);
  for (int i = 0; i < *length; ++i) {
    const auto index = static_cast<std::uint64_t>(i);
    const double a = decode_value(load_element(in, index, kBytes), Type);
    const double b = decode_value(load_element(inout, index, kBytes), Type);
    double result = 0;
    if constexpr (Op == ReduceOp::kProd) {
      result = a * b;
    } else if constexpr (Op == ReduceOp::kMin) {
      result = a < b ? a : b;
    } else if constexpr (Op == ReduceOp::kMax) {
      result = a > b ? a : b;
    } else {
      result = a + b;
    }
    store_element(inout, index, kBytes, encode_value(result, Type));
  }
}

template <DataType Type>
MPI_User_function* minifloat_function(ReduceOp op) {
  switch (op) {
    case ReduceOp::kProd:
      return reduce_minifloats<Type, ReduceOp::kProd>;
    case ReduceOp::kMin:
      return reduce_minifloats<Type, ReduceOp::kMin>;
    case ReduceOp::kMax:
      return reduce_minifloats<Type, ReduceOp::kMax>;
    default:
      return reduce_minifloats<Type, ReduceOp::kSum>;
  }
}

bool needs_user_op(DataType type) {
  return type == DataType::kHalf || type == DataType::kBfloat16 || type == DataType::kFp8E4M3 ||
         type == DataType::kFp8E5M2;
}

template <typename T>
void divide_words(void* output, std::uint64_t elements, int nranks) {
  auto* data = static_cast<T*>(output);
  for (std::uint64_t i = 0; i < elements; ++i)
    data[i] = static_cast<T>(data[i] / static_cast<T>(nranks));
}

}  // namespace

MpiReductionCatalog::~MpiReductionCatalog() {
  for (auto& op : user_ops_) {
    if (op != MPI_OP_NULL) MPI_Op_free(&op);
  }
}

MPI_Datatype MpiReductionCatalog::datatype(DataType type) {
  switch (type) {
    case DataType::kInt8:
      return MPI_INT8_T;
    case DataType::kUint8:
      return MPI_UINT8_T;
    case DataType::kInt32:
      return MPI_INT32_T;
    case DataType::kUint32:
      return MPI_UINT32_T;
    case DataType::kInt64:
      return MPI_INT64_T;
    case DataType::kUint64:
      return MPI_UINT64_T;
    case DataType::kFloat:
      return MPI_FLOAT;
    case DataType::kDouble:
      return MPI_DOUBLE;
    case DataType::kHalf:
    case DataType::kBfloat16:
      return MPI_UINT16_T;
    case DataType::kFp8E4M3:
    case DataType::kFp8E5M2:
      return MPI_UINT8_T;
  }
  return MPI_BYTE;
}

MPI_Op MpiReductionCatalog::operation(DataType type, ReduceOp op) {
  if (!needs_user_op(type)) {
    switch (op) {
      case ReduceOp::kProd:
        return MPI_PROD;
      case ReduceOp::kMin:
        return MPI_MIN;
      case ReduceOp::kMax:
        return MPI_MAX;
      default:
        return MPI_SUM;
    }
  }
  const ReduceOp effective = op == ReduceOp::kAvg ? ReduceOp::kSum : op;
  auto& slot = user_ops_[static_cast<std::size_t>(type) * kReduceOpCount +
                         static_cast<std::size_t>(effective)];
  if (slot == MPI_OP_NULL) {
    MPI_User_function* function = nullptr;
    switch (type) {
      case DataType::kHalf:
        function = minifloat_function<DataType::kHalf>(effective);
        break;
      case DataType::kBfloat16:
        function = minifloat_function<DataType::kBfloat16>(effective);
        break;
      case DataType::kFp8E4M3:
        function = minifloat_function<DataType::kFp8E4M3>(effective);
        break;
      default:
        function = minifloat_function<DataType::kFp8E5M2>(effective);
        break;
    }
    COMMCERT_CHECK_MPI(MPI_Op_create(function, /*commute=*/1, &slot));
  }
  return slot;
}

void divide_by_rank_count(DataType type, void* output, std::uint64_t elements, int nranks) {
  switch (type) {
    case DataType::kInt8:
      divide_words<std::int8_t>(output, elements, nranks);
      break;
    case DataType::kUint8:
      divide_words<std::uint8_t>(output, elements, nranks);
      break;
    case DataType::kInt32:
      divide_words<std::int32_t>(output, elements, nranks);
      break;
    case DataType::kUint32:
      divide_words<std::uint32_t>(output, elements, nranks);
      break;
    case DataType::kInt64:
      divide_words<std::int64_t>(output, elements, nranks);
      break;
    case DataType::kUint64:
      divide_words<std::uint64_t>(output, elements, nranks);
      break;
    case DataType::kFloat:
      divide_words<float>(output, elements, nranks);
      break;
    case DataType::kDouble:
      divide_words<double>(output, elements, nranks);
      break;
    default: {
      const int bytes = element_size(type);
      for (std::uint64_t i = 0; i < elements; ++i) {
        const double value = decode_value(load_element(output, i, bytes), type);
        store_element(output, i, bytes, encode_value(value / nranks, type));
      }
    }
  }
}

}  // namespace commcert
