#include "bench/gpu/cuda_support.hpp"

#include <thread>
#include <utility>

#include <fmt/format.h>

namespace commcert {

CudaStream::CudaStream() {
  check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
             "cudaStreamCreateWithFlags");
}
CudaStream::~CudaStream() {
  if (stream_) cudaStreamDestroy(stream_);
}

CudaEvent::CudaEvent() {
  check_cuda(cudaEventCreate(&event_), "cudaEventCreate");
}
CudaEvent::~CudaEvent() {
  if (event_) cudaEventDestroy(event_);
}
void CudaEvent::record(cudaStream_t stream) {
  check_cuda(cudaEventRecord(event_, stream), "cudaEventRecord");
}

DeviceMemory::DeviceMemory(std::size_t bytes) : bytes_(bytes) {
  check_cuda(cudaMalloc(&data_, bytes), fmt::format("cudaMalloc({} bytes)", bytes).c_str());
}
DeviceMemory::~DeviceMemory() {
  if (data_) cudaFree(data_);
}
DeviceMemory::DeviceMemory(DeviceMemory&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
DeviceMemory& DeviceMemory::operator=(DeviceMemory&& other) noexcept {
  if (this != &other) {
    if (data_) cudaFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

PinnedMemory::PinnedMemory(std::size_t bytes) {
  check_cuda(cudaHostAlloc(&data_, bytes, cudaHostAllocDefault),
             fmt::format("cudaHostAlloc({} bytes)", bytes).c_str());
}
PinnedMemory::~PinnedMemory() {
  if (data_) cudaFreeHost(data_);
}

void wait_for(const CudaEvent& event, const Deadline& deadline, const std::string& what) {
  for (;;) {
    const cudaError_t status = cudaEventQuery(event.get());
    if (status == cudaSuccess) return;
    if (status != cudaErrorNotReady)
      check_cuda(status, fmt::format("waiting for {}", what).c_str());
    if (deadline.expired()) {
      throw DeviceTimeout(fmt::format("{} did not complete within the timeout", what));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
}

void drain(cudaStream_t stream, const Deadline& deadline, const std::string& what) {
  CudaEvent done;
  done.record(stream);
  wait_for(done, deadline, what);
}

double elapsed_seconds(const CudaEvent& start, const CudaEvent& stop) {
  float ms = 0;
  check_cuda(cudaEventElapsedTime(&ms, start.get(), stop.get()), "cudaEventElapsedTime");
  return static_cast<double>(ms) / 1000.0;
}

}  // namespace commcert
