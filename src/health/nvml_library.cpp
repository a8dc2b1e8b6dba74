#include "health/nvml_library.hpp"

#include <array>
#include <cstdlib>
#include <dlfcn.h>
#include <vector>

#include <fmt/format.h>

namespace commcert {
namespace {

// Every NVML function commcert may call. Resolved once at load; a missing one stays null.
constexpr std::array kSymbols = {
    "nvmlInit_v2",
    "nvmlShutdown",
    "nvmlErrorString",
    "nvmlSystemGetDriverVersion",
    "nvmlSystemGetNVMLVersion",
    "nvmlDeviceGetCount_v2",
    "nvmlDeviceGetHandleByIndex_v2",
    "nvmlDeviceGetHandleByPciBusId_v2",
    "nvmlDeviceGetName",
    "nvmlDeviceGetUUID",
    "nvmlDeviceGetSerial",
    "nvmlDeviceGetVbiosVersion",
    "nvmlDeviceGetPciInfo_v3",
    "nvmlDeviceGetEccMode",
    "nvmlDeviceGetTotalEccErrors",
    "nvmlDeviceGetRemappedRows",
    "nvmlDeviceGetRetiredPages",
    "nvmlDeviceGetRetiredPagesPendingStatus",
    "nvmlDeviceGetCurrPcieLinkGeneration",
    "nvmlDeviceGetMaxPcieLinkGeneration",
    "nvmlDeviceGetCurrPcieLinkWidth",
    "nvmlDeviceGetMaxPcieLinkWidth",
    "nvmlDeviceGetPcieReplayCounter",
    "nvmlDeviceGetNvLinkState",
    "nvmlDeviceGetNvLinkErrorCounter",
    "nvmlDeviceGetTemperature",
    "nvmlDeviceGetTemperatureV",
    "nvmlDeviceGetIndex",
    "nvmlDeviceGetPowerUsage",
    "nvmlDeviceGetEnforcedPowerLimit",
    "nvmlDeviceGetClockInfo",
    "nvmlDeviceGetMaxClockInfo",
    "nvmlDeviceGetCurrentClocksEventReasons",
    "nvmlDeviceGetCurrentClocksThrottleReasons",
    "nvmlDeviceGetPersistenceMode",
    "nvmlEventSetCreate",
    "nvmlDeviceRegisterEvents",
    "nvmlEventSetWait_v2",
    "nvmlEventSetFree",
};

// Without these NVML cannot even list GPUs.
constexpr std::array kRequired = {"nvmlInit_v2", "nvmlShutdown", "nvmlErrorString",
                                  "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex_v2"};

template <typename T>
NvmlResult<T> result_of(nvml::Return code, T value) {
  NvmlResult<T> result;
  result.code = code;
  if (code == nvml::kSuccess) result.value = std::move(value);
  return result;
}

std::string text_of(const std::vector<char>& buffer) {
  // NVML terminates its strings; never read past the buffer if a library does not.
  std::size_t length = 0;
  while (length < buffer.size() && buffer[length] != '\0')
    ++length;
  return std::string(buffer.data(), length);
}

}  // namespace

std::string nvml_library_from_environment() {
  const char* chosen = std::getenv("COMMCERT_NVML_LIBRARY");
  return chosen && *chosen ? chosen : kDefaultNvmlLibrary;
}

NvmlLibrary::Opened NvmlLibrary::open(const std::string& path) {
  Opened opened;
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* error = dlerror();
    const std::string detail = error ? error : "unknown dlopen error";
    const bool missing = detail.find("No such file") != std::string::npos;
    opened.unavailable_reason = fmt::format("no NVIDIA driver: {} {} ({})", path,
                                            missing ? "not found" : "cannot be loaded", detail);
    return opened;
  }
  std::unique_ptr<NvmlLibrary> library(new NvmlLibrary(handle, path));
  for (const char* name : kRequired) {
    if (!library->symbol(name)) {
      opened.unavailable_reason =
          fmt::format("NVML unusable: {} has no {} (driver too old or not NVML)", path, name);
      return opened;
    }
  }
  const nvml::Return init = library->call<nvml::Return (*)()>("nvmlInit_v2");
  if (init != nvml::kSuccess) {
    opened.unavailable_reason =
        init == nvml::kErrorDriverNotLoaded
            ? fmt::format("no NVIDIA driver: nvmlInit_v2 returned {}", library->describe(init))
            : fmt::format("NVML initialisation failed: nvmlInit_v2 returned {}",
                          library->describe(init));
    return opened;
  }
  library->initialized_ = true;
  opened.library = std::move(library);
  return opened;
}

NvmlLibrary::NvmlLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {
  for (const char* name : kSymbols)
    symbols_.emplace(name, dlsym(handle_, name));
}

NvmlLibrary::~NvmlLibrary() {
  if (initialized_) (void)call<nvml::Return (*)()>("nvmlShutdown");
  dlclose(handle_);
}

void* NvmlLibrary::symbol(std::string_view name) const {
  const auto it = symbols_.find(name);
  return it == symbols_.end() ? nullptr : it->second;
}

bool NvmlLibrary::has_symbol(std::string_view name) const {
  return symbol(name) != nullptr;
}

template <typename Fn, typename... Args>
nvml::Return NvmlLibrary::call(std::string_view name, Args... args) const {
  void* function = symbol(name);
  if (!function) return kNvmlMissingSymbol;
  return reinterpret_cast<Fn>(function)(args...);
}

std::string NvmlLibrary::describe(nvml::Return code) const {
  if (code == kNvmlMissingSymbol) return "function not present in this NVML";
  const auto error_string =
      reinterpret_cast<const char* (*)(nvml::Return)>(symbol("nvmlErrorString"));
  const char* text = error_string ? error_string(code) : nullptr;
  return fmt::format("{} (NVML error {})", text && *text ? text : "unknown error", code);
}

NvmlResult<std::string> NvmlLibrary::string_query(std::string_view function, nvml::Device device,
                                                  unsigned size) const {
  std::vector<char> buffer(size, '\0');
  const auto code =
      call<nvml::Return (*)(nvml::Device, char*, unsigned)>(function, device, buffer.data(), size);
  return result_of(code, text_of(buffer));
}

NvmlResult<unsigned> NvmlLibrary::unsigned_query(std::string_view function,
                                                 nvml::Device device) const {
  unsigned value = 0;
  const auto code = call<nvml::Return (*)(nvml::Device, unsigned*)>(function, device, &value);
  return result_of(code, value);
}

template <typename... Args>
NvmlResult<bool> NvmlLibrary::feature_query(std::string_view function, nvml::Device device,
                                            Args... args) const {
  int state = 0;
  const auto code =
      call<nvml::Return (*)(nvml::Device, Args..., int*)>(function, device, args..., &state);
  return result_of(code, state == nvml::kFeatureEnabled);
}

template <typename... Args>
NvmlResult<std::uint64_t> NvmlLibrary::counter_query(std::string_view function, nvml::Device device,
                                                     Args... args) const {
  unsigned long long count = 0;
  const auto code = call<nvml::Return (*)(nvml::Device, Args..., unsigned long long*)>(
      function, device, args..., &count);
  return result_of(code, static_cast<std::uint64_t>(count));
}

NvmlResult<std::string> NvmlLibrary::driver_version() const {
  std::vector<char> buffer(nvml::kVersionBufferSize, '\0');
  const auto code = call<nvml::Return (*)(char*, unsigned)>(
      "nvmlSystemGetDriverVersion", buffer.data(), nvml::kVersionBufferSize);
  return result_of(code, text_of(buffer));
}

NvmlResult<std::string> NvmlLibrary::nvml_version() const {
  std::vector<char> buffer(nvml::kVersionBufferSize, '\0');
  const auto code = call<nvml::Return (*)(char*, unsigned)>(
      "nvmlSystemGetNVMLVersion", buffer.data(), nvml::kVersionBufferSize);
  return result_of(code, text_of(buffer));
}

NvmlResult<unsigned> NvmlLibrary::device_count() const {
  unsigned count = 0;
  const auto code = call<nvml::Return (*)(unsigned*)>("nvmlDeviceGetCount_v2", &count);
  return result_of(code, count);
}

NvmlResult<nvml::Device> NvmlLibrary::device_by_index(unsigned index) const {
  nvml::Device device = nullptr;
  const auto code = call<nvml::Return (*)(unsigned, nvml::Device*)>("nvmlDeviceGetHandleByIndex_v2",
                                                                    index, &device);
  return result_of(code, device);
}

NvmlResult<nvml::Device> NvmlLibrary::device_by_pci_bus_id(const std::string& bus_id) const {
  nvml::Device device = nullptr;
  const auto code = call<nvml::Return (*)(const char*, nvml::Device*)>(
      "nvmlDeviceGetHandleByPciBusId_v2", bus_id.c_str(), &device);
  return result_of(code, device);
}

NvmlResult<unsigned> NvmlLibrary::index(nvml::Device device) const {
  return unsigned_query("nvmlDeviceGetIndex", device);
}

NvmlResult<std::string> NvmlLibrary::name(nvml::Device device) const {
  return string_query("nvmlDeviceGetName", device, nvml::kNameBufferSize);
}

NvmlResult<std::string> NvmlLibrary::uuid(nvml::Device device) const {
  return string_query("nvmlDeviceGetUUID", device, nvml::kUuidBufferSize);
}

NvmlResult<std::string> NvmlLibrary::serial(nvml::Device device) const {
  return string_query("nvmlDeviceGetSerial", device, nvml::kSerialBufferSize);
}

NvmlResult<std::string> NvmlLibrary::vbios_version(nvml::Device device) const {
  return string_query("nvmlDeviceGetVbiosVersion", device, nvml::kVbiosBufferSize);
}

NvmlResult<std::string> NvmlLibrary::pci_bus_id(nvml::Device device) const {
  nvml::PciInfo info{};
  const auto code = call<nvml::Return (*)(nvml::Device, nvml::PciInfo*)>("nvmlDeviceGetPciInfo_v3",
                                                                         device, &info);
  std::vector<char> bus_id(info.bus_id, info.bus_id + sizeof(info.bus_id));
  return result_of(code, text_of(bus_id));
}

NvmlResult<bool> NvmlLibrary::ecc_enabled(nvml::Device device) const {
  int current = 0;
  int pending = 0;
  const auto code = call<nvml::Return (*)(nvml::Device, int*, int*)>("nvmlDeviceGetEccMode", device,
                                                                     &current, &pending);
  return result_of(code, current == nvml::kFeatureEnabled);
}

NvmlResult<std::uint64_t> NvmlLibrary::ecc_errors(nvml::Device device, int error_type,
                                                  int counter_type) const {
  return counter_query("nvmlDeviceGetTotalEccErrors", device, error_type, counter_type);
}

NvmlResult<NvmlRemappedRows> NvmlLibrary::remapped_rows(nvml::Device device) const {
  unsigned correctable = 0;
  unsigned uncorrectable = 0;
  unsigned pending = 0;
  unsigned failure = 0;
  const auto code =
      call<nvml::Return (*)(nvml::Device, unsigned*, unsigned*, unsigned*, unsigned*)>(
          "nvmlDeviceGetRemappedRows", device, &correctable, &uncorrectable, &pending, &failure);
  return result_of(code, NvmlRemappedRows{correctable, uncorrectable, pending != 0, failure != 0});
}

NvmlResult<unsigned> NvmlLibrary::retired_pages(nvml::Device device, int cause) const {
  // A zero-sized query returns the count; NVML answers "insufficient size" when there are pages.
  unsigned count = 0;
  auto code = call<nvml::Return (*)(nvml::Device, int, unsigned*, unsigned long long*)>(
      "nvmlDeviceGetRetiredPages", device, cause, &count, nullptr);
  if (code == nvml::kErrorInsufficientSize) code = nvml::kSuccess;
  return result_of(code, count);
}

NvmlResult<bool> NvmlLibrary::retired_pages_pending(nvml::Device device) const {
  return feature_query("nvmlDeviceGetRetiredPagesPendingStatus", device);
}

NvmlResult<unsigned> NvmlLibrary::pcie_generation(nvml::Device device, bool maximum) const {
  return unsigned_query(
      maximum ? "nvmlDeviceGetMaxPcieLinkGeneration" : "nvmlDeviceGetCurrPcieLinkGeneration",
      device);
}

NvmlResult<unsigned> NvmlLibrary::pcie_width(nvml::Device device, bool maximum) const {
  return unsigned_query(
      maximum ? "nvmlDeviceGetMaxPcieLinkWidth" : "nvmlDeviceGetCurrPcieLinkWidth", device);
}

NvmlResult<unsigned> NvmlLibrary::pcie_replay_counter(nvml::Device device) const {
  return unsigned_query("nvmlDeviceGetPcieReplayCounter", device);
}

NvmlResult<bool> NvmlLibrary::nvlink_active(nvml::Device device, unsigned link) const {
  return feature_query("nvmlDeviceGetNvLinkState", device, link);
}

NvmlResult<std::uint64_t> NvmlLibrary::nvlink_error_counter(nvml::Device device, unsigned link,
                                                            int counter) const {
  return counter_query("nvmlDeviceGetNvLinkErrorCounter", device, link, counter);
}

NvmlResult<unsigned> NvmlLibrary::temperature_c(nvml::Device device) const {
  // The versioned call where this NVML has it; drivers before it only have the deprecated one.
  if (has_symbol("nvmlDeviceGetTemperatureV")) {
    nvml::TemperatureV1 reading;
    reading.version = nvml::kTemperatureV1Version;
    reading.sensor_type = nvml::kTemperatureGpu;
    const auto code = call<nvml::Return (*)(nvml::Device, nvml::TemperatureV1*)>(
        "nvmlDeviceGetTemperatureV", device, &reading);
    if (code != nvml::kSuccess || reading.temperature < 0) {
      return result_of(code != nvml::kSuccess ? code : nvml::kErrorUnknown, 0U);
    }
    return result_of(code, static_cast<unsigned>(reading.temperature));
  }
  unsigned value = 0;
  const auto code = call<nvml::Return (*)(nvml::Device, int, unsigned*)>(
      "nvmlDeviceGetTemperature", device, nvml::kTemperatureGpu, &value);
  return result_of(code, value);
}

NvmlResult<unsigned> NvmlLibrary::power_mw(nvml::Device device) const {
  return unsigned_query("nvmlDeviceGetPowerUsage", device);
}

NvmlResult<unsigned> NvmlLibrary::power_limit_mw(nvml::Device device) const {
  return unsigned_query("nvmlDeviceGetEnforcedPowerLimit", device);
}

NvmlResult<unsigned> NvmlLibrary::clock_mhz(nvml::Device device, int clock_type) const {
  unsigned value = 0;
  const auto code = call<nvml::Return (*)(nvml::Device, int, unsigned*)>(
      "nvmlDeviceGetClockInfo", device, clock_type, &value);
  return result_of(code, value);
}

NvmlResult<unsigned> NvmlLibrary::max_clock_mhz(nvml::Device device, int clock_type) const {
  unsigned value = 0;
  const auto code = call<nvml::Return (*)(nvml::Device, int, unsigned*)>(
      "nvmlDeviceGetMaxClockInfo", device, clock_type, &value);
  return result_of(code, value);
}

NvmlResult<std::uint64_t> NvmlLibrary::clock_event_reasons(nvml::Device device) const {
  unsigned long long reasons = 0;
  using Fn = nvml::Return (*)(nvml::Device, unsigned long long*);
  nvml::Return code = call<Fn>("nvmlDeviceGetCurrentClocksEventReasons", device, &reasons);
  if (code == kNvmlMissingSymbol) {
    code = call<Fn>("nvmlDeviceGetCurrentClocksThrottleReasons", device, &reasons);
  }
  return result_of(code, static_cast<std::uint64_t>(reasons));
}

NvmlResult<bool> NvmlLibrary::persistence_mode(nvml::Device device) const {
  int mode = 0;
  const auto code =
      call<nvml::Return (*)(nvml::Device, int*)>("nvmlDeviceGetPersistenceMode", device, &mode);
  return result_of(code, mode == nvml::kFeatureEnabled);
}

NvmlResult<nvml::EventSet> NvmlLibrary::create_event_set() const {
  nvml::EventSet set = nullptr;
  const auto code = call<nvml::Return (*)(nvml::EventSet*)>("nvmlEventSetCreate", &set);
  return result_of(code, set);
}

nvml::Return NvmlLibrary::register_events(nvml::Device device, unsigned long long types,
                                          nvml::EventSet set) const {
  return call<nvml::Return (*)(nvml::Device, unsigned long long, nvml::EventSet)>(
      "nvmlDeviceRegisterEvents", device, types, set);
}

NvmlResult<NvmlEvent> NvmlLibrary::wait_event(nvml::EventSet set, unsigned timeout_ms) const {
  nvml::EventData data{};
  const auto code = call<nvml::Return (*)(nvml::EventSet, nvml::EventData*, unsigned)>(
      "nvmlEventSetWait_v2", set, &data, timeout_ms);
  return result_of(code, NvmlEvent{data.device, data.event_type, data.event_data});
}

void NvmlLibrary::free_event_set(nvml::EventSet set) const {
  (void)call<nvml::Return (*)(nvml::EventSet)>("nvmlEventSetFree", set);
}

}  // namespace commcert
