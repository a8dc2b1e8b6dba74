#include "comm/cuda_handles.hpp"

#include <exception>

#include <fmt/format.h>

#include "comm/cuda_errors.hpp"

namespace commcert {

void handle_traits::NcclComm::close(Handle comm) noexcept {
  if (std::uncaught_exceptions() > 0) {
    ncclCommAbort(comm);
  } else {
    ncclCommDestroy(comm);
  }
}

CudaStream::CudaStream() {
  COMMCERT_CHECK_CUDA(cudaStreamCreateWithFlags(stream_.out(), cudaStreamNonBlocking));
}

CudaEvent::CudaEvent() {
  COMMCERT_CHECK_CUDA(cudaEventCreate(event_.out()));
}

void CudaEvent::record(cudaStream_t stream) {
  COMMCERT_CHECK_CUDA(cudaEventRecord(event_.get(), stream));
}

DeviceMemory::DeviceMemory(std::size_t bytes) : bytes_(bytes) {
  COMMCERT_CHECK_CUDA(cudaMalloc(data_.out(), bytes), fmt::format("allocating {} bytes", bytes));
}

PinnedMemory::PinnedMemory(std::size_t bytes) {
  COMMCERT_CHECK_CUDA(cudaHostAlloc(data_.out(), bytes, cudaHostAllocDefault),
                      fmt::format("allocating {} bytes", bytes));
}

}  // namespace commcert
