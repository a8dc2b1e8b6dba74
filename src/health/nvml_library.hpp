#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "health/nvml_api.hpp"

namespace commcert {

inline constexpr const char* kDefaultNvmlLibrary = "libnvidia-ml.so.1";

// COMMCERT_NVML_LIBRARY when set (what --nvml-library defaults to), else kDefaultNvmlLibrary.
[[nodiscard]] std::string nvml_library_from_environment();

// Our code for "this NVML has no such function" (older drivers lack newer entry points). NVML's
// own codes are >= 0.
inline constexpr nvml::Return kNvmlMissingSymbol = -1;

// A query's value, or why there is none: NVML's return code, or kNvmlMissingSymbol.
template <typename T>
struct NvmlResult {
  std::optional<T> value;
  nvml::Return code = nvml::kSuccess;

  [[nodiscard]] bool ok() const { return value.has_value(); }
  // The GPU or this NVML cannot answer: evidence is missing (null), not an error.
  [[nodiscard]] bool unsupported() const {
    return code == nvml::kErrorNotSupported || code == kNvmlMissingSymbol;
  }
  [[nodiscard]] bool gpu_lost() const { return code == nvml::kErrorGpuIsLost; }
};

struct NvmlRemappedRows {
  unsigned correctable = 0;
  unsigned uncorrectable = 0;
  bool pending = false;
  bool failure = false;
};

struct NvmlEvent {
  nvml::Device device = nullptr;
  unsigned long long type = 0;
  unsigned long long data = 0;  // the Xid of an Xid event
};

// NVML, loaded with dlopen. Every symbol is looked up once at load, so a query against a library
// that lacks its function answers kNvmlMissingSymbol instead of failing to load. Thread-safe
// (NVML is) except event sets, which the caller keeps to one thread.
class NvmlLibrary {
 public:
  struct Opened {
    std::unique_ptr<NvmlLibrary> library;  // null when NVML cannot be used here
    std::string unavailable_reason;        // why, in words for a record's `reason`
  };

  // Loads `path` (a soname or a file) and initialises NVML. Never throws.
  [[nodiscard]] static Opened open(const std::string& path = kDefaultNvmlLibrary);

  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  // "Not Supported (NVML error 3)", "function not present in this NVML".
  [[nodiscard]] std::string describe(nvml::Return code) const;
  [[nodiscard]] bool has_symbol(std::string_view name) const;
  [[nodiscard]] const std::string& path() const { return path_; }

  [[nodiscard]] NvmlResult<std::string> driver_version() const;
  [[nodiscard]] NvmlResult<std::string> nvml_version() const;
  [[nodiscard]] NvmlResult<unsigned> device_count() const;
  [[nodiscard]] NvmlResult<nvml::Device> device_by_index(unsigned index) const;
  [[nodiscard]] NvmlResult<nvml::Device> device_by_pci_bus_id(const std::string& bus_id) const;

  // NVML's index of the GPU: node-wide, whatever CUDA_VISIBLE_DEVICES this process has.
  [[nodiscard]] NvmlResult<unsigned> index(nvml::Device device) const;
  [[nodiscard]] NvmlResult<std::string> name(nvml::Device device) const;
  [[nodiscard]] NvmlResult<std::string> uuid(nvml::Device device) const;
  [[nodiscard]] NvmlResult<std::string> serial(nvml::Device device) const;
  [[nodiscard]] NvmlResult<std::string> vbios_version(nvml::Device device) const;
  [[nodiscard]] NvmlResult<std::string> pci_bus_id(nvml::Device device) const;

  [[nodiscard]] NvmlResult<bool> ecc_enabled(nvml::Device device) const;
  [[nodiscard]] NvmlResult<std::uint64_t> ecc_errors(nvml::Device device, int error_type,
                                                     int counter_type) const;
  [[nodiscard]] NvmlResult<NvmlRemappedRows> remapped_rows(nvml::Device device) const;
  [[nodiscard]] NvmlResult<unsigned> retired_pages(nvml::Device device, int cause) const;
  [[nodiscard]] NvmlResult<bool> retired_pages_pending(nvml::Device device) const;

  [[nodiscard]] NvmlResult<unsigned> pcie_generation(nvml::Device device, bool maximum) const;
  [[nodiscard]] NvmlResult<unsigned> pcie_width(nvml::Device device, bool maximum) const;
  [[nodiscard]] NvmlResult<unsigned> pcie_replay_counter(nvml::Device device) const;

  [[nodiscard]] NvmlResult<bool> nvlink_active(nvml::Device device, unsigned link) const;
  [[nodiscard]] NvmlResult<std::uint64_t> nvlink_error_counter(nvml::Device device, unsigned link,
                                                               int counter) const;

  [[nodiscard]] NvmlResult<unsigned> temperature_c(nvml::Device device) const;
  [[nodiscard]] NvmlResult<unsigned> power_mw(nvml::Device device) const;
  [[nodiscard]] NvmlResult<unsigned> power_limit_mw(nvml::Device device) const;
  [[nodiscard]] NvmlResult<unsigned> clock_mhz(nvml::Device device, int clock_type) const;
  [[nodiscard]] NvmlResult<unsigned> max_clock_mhz(nvml::Device device, int clock_type) const;
  // nvmlDeviceGetCurrentClocksEventReasons, or its older name ...ThrottleReasons (drivers < 535).
  [[nodiscard]] NvmlResult<std::uint64_t> clock_event_reasons(nvml::Device device) const;
  [[nodiscard]] NvmlResult<bool> persistence_mode(nvml::Device device) const;

  [[nodiscard]] NvmlResult<nvml::EventSet> create_event_set() const;
  [[nodiscard]] nvml::Return register_events(nvml::Device device, unsigned long long types,
                                             nvml::EventSet set) const;
  // The next event, or code kErrorTimeout when none arrived within timeout_ms.
  [[nodiscard]] NvmlResult<NvmlEvent> wait_event(nvml::EventSet set, unsigned timeout_ms) const;
  void free_event_set(nvml::EventSet set) const;

 private:
  NvmlLibrary(void* handle, std::string path);

  [[nodiscard]] void* symbol(std::string_view name) const;
  template <typename Fn, typename... Args>
  [[nodiscard]] nvml::Return call(std::string_view name, Args... args) const;
  [[nodiscard]] NvmlResult<std::string> string_query(std::string_view function, nvml::Device device,
                                                     unsigned size) const;
  [[nodiscard]] NvmlResult<unsigned> unsigned_query(std::string_view function,
                                                    nvml::Device device) const;
  // `function(device, args..., &state)`: whether a feature (an NVLink, a pending page
  // retirement) is enabled.
  template <typename... Args>
  [[nodiscard]] NvmlResult<bool> feature_query(std::string_view function, nvml::Device device,
                                               Args... args) const;
  // `function(device, args..., &count)`: a 64-bit error counter.
  template <typename... Args>
  [[nodiscard]] NvmlResult<std::uint64_t> counter_query(std::string_view function,
                                                        nvml::Device device, Args... args) const;

  void* handle_;
  std::string path_;
  std::unordered_map<std::string_view, void*> symbols_;
  bool initialized_ = false;
};

}  // namespace commcert
