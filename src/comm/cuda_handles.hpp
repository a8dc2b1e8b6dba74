#pragma once

// Owners of CUDA and NCCL objects, for the communicators here and the GPU stages above
// (bench/gpu). Each closes its object when destroyed and moves but never copies, so a throw part
// way through building or splitting a communicator releases what was already made. Host code
// (g++), linked with cudart.

#include <cstddef>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "core/unique_handle.hpp"

namespace commcert {

namespace handle_traits {

struct Stream {
  using Handle = cudaStream_t;
  static constexpr Handle kEmpty = nullptr;
  static void close(Handle stream) noexcept { cudaStreamDestroy(stream); }
};

struct Event {
  using Handle = cudaEvent_t;
  static constexpr Handle kEmpty = nullptr;
  static void close(Handle event) noexcept { cudaEventDestroy(event); }
};

struct DeviceAllocation {
  using Handle = void*;
  static constexpr Handle kEmpty = nullptr;
  static void close(Handle data) noexcept { cudaFree(data); }
};

struct PinnedAllocation {
  using Handle = void*;
  static constexpr Handle kEmpty = nullptr;
  static void close(Handle data) noexcept { cudaFreeHost(data); }
};

// Closed while an exception unwinds (a CUDA or NCCL error, a peer that failed), an operation may
// still wait for a peer that will never come, and ncclCommDestroy would wait with it: abort then.
struct NcclComm {
  using Handle = ncclComm_t;
  static constexpr Handle kEmpty = nullptr;
  static void close(Handle comm) noexcept;
};

}  // namespace handle_traits

// A non-blocking stream (it does not synchronise with the legacy default stream).
class CudaStream {
 public:
  CudaStream();  // creates one on the current device
  [[nodiscard]] cudaStream_t get() const { return stream_.get(); }

 private:
  UniqueHandle<handle_traits::Stream> stream_;
};

class CudaEvent {
 public:
  CudaEvent();  // creates one on the current device
  [[nodiscard]] cudaEvent_t get() const { return event_.get(); }
  void record(cudaStream_t stream);

 private:
  UniqueHandle<handle_traits::Event> event_;
};

// Device memory on the current device; empty until given a size.
class DeviceMemory {
 public:
  DeviceMemory() = default;
  explicit DeviceMemory(std::size_t bytes);
  [[nodiscard]] void* get() const { return data_.get(); }
  [[nodiscard]] std::size_t bytes() const { return data_ ? bytes_ : 0; }
  template <typename T>
  [[nodiscard]] T* as() const {
    return static_cast<T*>(data_.get());
  }
  // Frees the memory now (the object stays usable, empty).
  void reset() { data_.reset(); }

 private:
  UniqueHandle<handle_traits::DeviceAllocation> data_;
  std::size_t bytes_ = 0;
};

// Page-locked host memory (what the copy engines need to run at full speed).
class PinnedMemory {
 public:
  explicit PinnedMemory(std::size_t bytes);
  [[nodiscard]] void* get() const { return data_.get(); }
  template <typename T>
  [[nodiscard]] T* as() const {
    return static_cast<T*>(data_.get());
  }

 private:
  UniqueHandle<handle_traits::PinnedAllocation> data_;
};

// The bare handles, for objects made through a pointer by the C API (ncclCommInitRank,
// ncclCommSplit inside a group) or kept in a struct that is filled in step by step.
using NcclCommHandle = UniqueHandle<handle_traits::NcclComm>;
using CudaStreamHandle = UniqueHandle<handle_traits::Stream>;
using CudaEventHandle = UniqueHandle<handle_traits::Event>;
using DeviceBuffer = UniqueHandle<handle_traits::DeviceAllocation>;

}  // namespace commcert
