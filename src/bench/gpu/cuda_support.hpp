#pragma once

// RAII owners of CUDA objects and waits that give up at a deadline, for the burn and membw
// engines. Host code (g++), linked with cudart.

#include <cstddef>
#include <string>

#include <cuda_runtime_api.h>

#include "comm/cuda_errors.hpp"
#include "core/clock.hpp"
#include "core/errors.hpp"

namespace commcert {

// A GPU did not finish work within its deadline: the record says `timeout`, not `error`.
class DeviceTimeout : public RuntimeFailure {
 public:
  using RuntimeFailure::RuntimeFailure;
};

class CudaStream {
 public:
  CudaStream();
  ~CudaStream();
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  [[nodiscard]] cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

class CudaEvent {
 public:
  CudaEvent();
  ~CudaEvent();
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  [[nodiscard]] cudaEvent_t get() const { return event_; }
  void record(cudaStream_t stream);

 private:
  cudaEvent_t event_ = nullptr;
};

// Device memory; the destructor frees it.
class DeviceMemory {
 public:
  DeviceMemory() = default;
  explicit DeviceMemory(std::size_t bytes);
  ~DeviceMemory();
  DeviceMemory(DeviceMemory&& other) noexcept;
  DeviceMemory& operator=(DeviceMemory&& other) noexcept;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  [[nodiscard]] void* get() const { return data_; }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }
  template <typename T>
  [[nodiscard]] T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// Page-locked host memory (what the copy engines need to run at full speed).
class PinnedMemory {
 public:
  explicit PinnedMemory(std::size_t bytes);
  ~PinnedMemory();
  PinnedMemory(const PinnedMemory&) = delete;
  PinnedMemory& operator=(const PinnedMemory&) = delete;
  [[nodiscard]] void* get() const { return data_; }
  template <typename T>
  [[nodiscard]] T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  void* data_ = nullptr;
};

// Polls the event until it completes; throws DeviceTimeout naming `what` past the deadline.
// Polling (rather than cudaEventSynchronize) is what lets a hung kernel become a record.
void wait_for(const CudaEvent& event, const Deadline& deadline, const std::string& what);

// Records an event on the stream and waits for it.
void drain(cudaStream_t stream, const Deadline& deadline, const std::string& what);

// Seconds between two completed events.
[[nodiscard]] double elapsed_seconds(const CudaEvent& start, const CudaEvent& stop);

}  // namespace commcert
