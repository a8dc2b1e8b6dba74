#include "bench/gpu/cuda_support.hpp"

#include <thread>

#include <fmt/format.h>

namespace commcert {

void wait_for(const CudaEvent& event, const Deadline& deadline, const std::string& what) {
  for (;;) {
    const cudaError_t status = cudaEventQuery(event.get());
    if (status == cudaSuccess) return;
    if (status != cudaErrorNotReady)
      COMMCERT_CHECK_CUDA(status, fmt::format("waiting for {}", what));
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
  COMMCERT_CHECK_CUDA(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return static_cast<double>(ms) / 1000.0;
}

}  // namespace commcert
