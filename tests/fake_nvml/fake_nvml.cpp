// A stand-in for libnvidia-ml.so.1 that answers from a script, so the NVML loader and everything
// built on it can be tested without a driver. It proves our handling of NVML's answers (errors,
// missing functions, older drivers); it says nothing about what a real GPU reports.
//
// The script is the JSON file named by COMMCERT_FAKE_NVML_SCRIPT, read at nvmlInit_v2:
//   {"init": 0, "driver_version": "...", "devices": [{"name": ..., "temperature": [30, 31], ...,
//    "errors": {"nvmlDeviceGetSerial": 4}, "xids": [79]}]}
// A missing value answers NVML_ERROR_NOT_SUPPORTED; a list answers its elements in turn (the
// last one repeats), which scripts sensors that change while the burn samples them.
//
// Variants (compile definitions): FAKE_NVML_LEGACY lacks entry points newer drivers added
// (nvmlDeviceGetRemappedRows, nvmlDeviceGetCurrentClocksEventReasons, nvmlDeviceGetTemperatureV);
// FAKE_NVML_BROKEN lacks nvmlInit_v2.

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

using Json = nlohmann::json;
using Return = int;

constexpr Return kSuccess = 0;
constexpr Return kUninitialized = 1;
constexpr Return kInvalidArgument = 2;
constexpr Return kNotSupported = 3;
constexpr Return kInsufficientSize = 7;
constexpr Return kTimeout = 10;

struct FakeDevice {
  Json script;
  std::map<std::string, std::size_t> calls;  // per-key position in a scripted sequence
  bool registered = false;
};

struct State {
  std::mutex mutex;
  bool initialized = false;
  Json script;
  std::deque<FakeDevice> devices;  // stable addresses: handles point at them
  std::deque<std::pair<FakeDevice*, unsigned long long>> pending_events;
};

State& state() {
  static State s;
  return s;
}

FakeDevice* device_of(void* handle) {
  return static_cast<FakeDevice*>(handle);
}

Return scripted_error(FakeDevice* d, const char* function) {
  if (!d) return kSuccess;
  const Json& errors = d->script.value("errors", Json::object());
  const auto it = errors.find(function);
  return it == errors.end() ? kSuccess : it->get<int>();
}

// The next value of a scripted sensor, or nullptr when the script does not have it.
const Json* next_value(FakeDevice* d, const std::string& key) {
  const auto it = d->script.find(key);
  if (it == d->script.end()) return nullptr;
  if (!it->is_array()) return &*it;
  if (it->empty()) return nullptr;
  std::size_t& position = d->calls[key];
  const Json* value = &(*it)[position < it->size() ? position : it->size() - 1];
  ++position;
  return value;
}

template <typename T>
Return answer(void* handle, const char* function, const std::string& key, T* out) {
  std::lock_guard lock(state().mutex);
  if (!state().initialized) return kUninitialized;
  FakeDevice* d = device_of(handle);
  if (!d || !out) return kInvalidArgument;
  if (Return error = scripted_error(d, function)) return error;
  const Json* value = next_value(d, key);
  if (!value) return kNotSupported;
  *out = value->get<T>();
  return kSuccess;
}

Return answer_string(void* handle, const char* function, const std::string& key, char* out,
                     unsigned length) {
  std::string text;
  const Return code = answer(handle, function, key, &text);
  if (code != kSuccess) return code;
  if (text.size() + 1 > length) return kInsufficientSize;
  std::memcpy(out, text.c_str(), text.size() + 1);
  return kSuccess;
}

// A nested value such as ecc.volatile_corrected.
template <typename T>
Return answer_nested(void* handle, const char* function, const std::string& object,
                     const std::string& key, T* out) {
  std::lock_guard lock(state().mutex);
  if (!state().initialized) return kUninitialized;
  FakeDevice* d = device_of(handle);
  if (!d || !out) return kInvalidArgument;
  if (Return error = scripted_error(d, function)) return error;
  const auto it = d->script.find(object);
  if (it == d->script.end() || !it->contains(key)) return kNotSupported;
  *out = (*it)[key].get<T>();
  return kSuccess;
}

}  // namespace

extern "C" {

#ifndef FAKE_NVML_BROKEN
Return nvmlInit_v2() {
  std::lock_guard lock(state().mutex);
  const char* path = std::getenv("COMMCERT_FAKE_NVML_SCRIPT");
  Json script = Json::object();
  if (path && *path) {
    std::ifstream in(path);
    if (!in) return 999;
    script = Json::parse(in);
  }
  const Return init = script.value("init", 0);
  if (init != kSuccess) return init;
  State& s = state();
  s.script = script;
  s.devices.clear();
  s.pending_events.clear();
  for (const auto& device : script.value("devices", Json::array()))
    s.devices.push_back({device, {}, false});
  s.initialized = true;
  return kSuccess;
}
#endif

Return nvmlShutdown() {
  std::lock_guard lock(state().mutex);
  state().initialized = false;
  return kSuccess;
}

const char* nvmlErrorString(Return code) {
  switch (code) {
    case 0:
      return "Success";
    case 1:
      return "Uninitialized";
    case 2:
      return "Invalid Argument";
    case 3:
      return "Not Supported";
    case 4:
      return "Insufficient Permissions";
    case 9:
      return "Driver Not Loaded";
    case 10:
      return "Timeout";
    case 14:
      return "Corrupted infoROM";
    case 15:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}

Return nvmlSystemGetDriverVersion(char* out, unsigned length) {
  std::lock_guard lock(state().mutex);
  if (!state().initialized) return kUninitialized;
  const std::string text = state().script.value("driver_version", "");
  if (text.empty()) return kNotSupported;
  if (text.size() + 1 > length) return kInsufficientSize;
  std::memcpy(out, text.c_str(), text.size() + 1);
  return kSuccess;
}

Return nvmlSystemGetNVMLVersion(char* out, unsigned length) {
  std::lock_guard lock(state().mutex);
  const std::string text = state().script.value("nvml_version", "12.0");
  if (text.size() + 1 > length) return kInsufficientSize;
  std::memcpy(out, text.c_str(), text.size() + 1);
  return kSuccess;
}

Return nvmlDeviceGetCount_v2(unsigned* count) {
  std::lock_guard lock(state().mutex);
  if (!state().initialized) return kUninitialized;
  if (state().script.contains("count_error")) return state().script["count_error"].get<int>();
  *count = static_cast<unsigned>(state().devices.size());
  return kSuccess;
}

Return nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) {
  std::lock_guard lock(state().mutex);
  if (!state().initialized) return kUninitialized;
  if (index >= state().devices.size()) return kInvalidArgument;
  FakeDevice* d = &state().devices[index];
  if (d->script.contains("handle_error")) return d->script["handle_error"].get<int>();
  *device = d;
  return kSuccess;
}

Return nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, void** device) {
  std::lock_guard lock(state().mutex);
  if (!state().initialized) return kUninitialized;
  // Compare case-insensitively and ignore leading domain zeros, as NVML does.
  const auto tail = [](std::string text) {
    for (auto& c : text)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const auto colon = text.find(':');
    if (colon != std::string::npos) {
      std::string domain = text.substr(0, colon);
      domain.erase(0, std::min(domain.find_first_not_of('0'), domain.size()));
      text = domain + text.substr(colon);
    }
    return text;
  };
  for (auto& d : state().devices) {
    if (tail(d.script.value("pci_bus_id", "")) == tail(bus_id)) {
      *device = &d;
      return kSuccess;
    }
  }
  return 6;  // not found
}

Return nvmlDeviceGetName(void* d, char* out, unsigned n) {
  return answer_string(d, "nvmlDeviceGetName", "name", out, n);
}
Return nvmlDeviceGetUUID(void* d, char* out, unsigned n) {
  return answer_string(d, "nvmlDeviceGetUUID", "uuid", out, n);
}
Return nvmlDeviceGetSerial(void* d, char* out, unsigned n) {
  return answer_string(d, "nvmlDeviceGetSerial", "serial", out, n);
}
Return nvmlDeviceGetVbiosVersion(void* d, char* out, unsigned n) {
  return answer_string(d, "nvmlDeviceGetVbiosVersion", "vbios", out, n);
}

struct PciInfo {
  char bus_id_legacy[16];
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pci_device_id;
  unsigned pci_subsystem_id;
  char bus_id[32];
};

Return nvmlDeviceGetPciInfo_v3(void* d, PciInfo* info) {
  std::string bus;
  const Return code = answer(d, "nvmlDeviceGetPciInfo_v3", "pci_bus_id", &bus);
  if (code != kSuccess) return code;
  std::memset(info, 0, sizeof(*info));
  std::strncpy(info->bus_id, bus.c_str(), sizeof(info->bus_id) - 1);
  return kSuccess;
}

Return nvmlDeviceGetEccMode(void* d, int* current, int* pending) {
  const Return code = answer(d, "nvmlDeviceGetEccMode", "ecc_mode", current);
  if (code == kSuccess && pending) *pending = *current;
  return code;
}

Return nvmlDeviceGetTotalEccErrors(void* d, int error_type, int counter_type,
                                   unsigned long long* count) {
  const std::string key = std::string(counter_type == 0 ? "volatile_" : "aggregate_") +
                          (error_type == 0 ? "corrected" : "uncorrected");
  return answer_nested(d, "nvmlDeviceGetTotalEccErrors", "ecc", key, count);
}

#ifndef FAKE_NVML_LEGACY
Return nvmlDeviceGetRemappedRows(void* d, unsigned* correctable, unsigned* uncorrectable,
                                 unsigned* pending, unsigned* failure) {
  Return code =
      answer_nested(d, "nvmlDeviceGetRemappedRows", "remapped_rows", "correctable", correctable);
  if (code != kSuccess) return code;
  (void)answer_nested(d, "nvmlDeviceGetRemappedRows", "remapped_rows", "uncorrectable",
                      uncorrectable);
  (void)answer_nested(d, "nvmlDeviceGetRemappedRows", "remapped_rows", "pending", pending);
  (void)answer_nested(d, "nvmlDeviceGetRemappedRows", "remapped_rows", "failure", failure);
  return kSuccess;
}
#endif

Return nvmlDeviceGetRetiredPages(void* d, int cause, unsigned* count,
                                 unsigned long long* /*addresses*/) {
  unsigned pages = 0;
  const Return code = answer_nested(d, "nvmlDeviceGetRetiredPages", "retired_pages",
                                    cause == 0 ? "single_bit" : "double_bit", &pages);
  if (code != kSuccess) return code;
  const bool fits = *count >= pages;
  *count = pages;
  return fits ? kSuccess : kInsufficientSize;
}

Return nvmlDeviceGetRetiredPagesPendingStatus(void* d, int* pending) {
  return answer_nested(d, "nvmlDeviceGetRetiredPagesPendingStatus", "retired_pages", "pending",
                       pending);
}

Return nvmlDeviceGetCurrPcieLinkGeneration(void* d, unsigned* v) {
  return answer_nested(d, "nvmlDeviceGetCurrPcieLinkGeneration", "pcie", "gen", v);
}
Return nvmlDeviceGetMaxPcieLinkGeneration(void* d, unsigned* v) {
  return answer_nested(d, "nvmlDeviceGetMaxPcieLinkGeneration", "pcie", "gen_max", v);
}
Return nvmlDeviceGetCurrPcieLinkWidth(void* d, unsigned* v) {
  return answer_nested(d, "nvmlDeviceGetCurrPcieLinkWidth", "pcie", "width", v);
}
Return nvmlDeviceGetMaxPcieLinkWidth(void* d, unsigned* v) {
  return answer_nested(d, "nvmlDeviceGetMaxPcieLinkWidth", "pcie", "width_max", v);
}
Return nvmlDeviceGetPcieReplayCounter(void* d, unsigned* v) {
  return answer_nested(d, "nvmlDeviceGetPcieReplayCounter", "pcie", "replay", v);
}

Return nvmlDeviceGetNvLinkState(void* handle, unsigned link, int* active) {
  std::lock_guard lock(state().mutex);
  FakeDevice* d = device_of(handle);
  if (Return error = scripted_error(d, "nvmlDeviceGetNvLinkState")) return error;
  const Json& links = d->script.value("nvlink", Json());
  if (!links.is_array()) return kNotSupported;
  if (link >= links.size()) return kInvalidArgument;
  *active = links[link].value("active", 0);
  return kSuccess;
}

Return nvmlDeviceGetNvLinkErrorCounter(void* handle, unsigned link, int counter,
                                       unsigned long long* value) {
  static const char* const kNames[] = {"replay", "recovery", "crc_flit", "crc_data", "ecc_data"};
  std::lock_guard lock(state().mutex);
  FakeDevice* d = device_of(handle);
  if (Return error = scripted_error(d, "nvmlDeviceGetNvLinkErrorCounter")) return error;
  const Json& links = d->script.value("nvlink", Json());
  if (!links.is_array() || link >= links.size() || counter < 0 || counter > 4)
    return kInvalidArgument;
  if (!links[link].contains(kNames[counter])) return kNotSupported;
  *value = links[link][kNames[counter]].get<unsigned long long>();
  return kSuccess;
}

Return nvmlDeviceGetTemperature(void* d, int /*sensor*/, unsigned* v) {
  return answer(d, "nvmlDeviceGetTemperature", "temperature", v);
}

#ifndef FAKE_NVML_LEGACY
struct TemperatureV1 {
  unsigned version;
  int sensor_type;
  int temperature;
};

// As NVML does, refuses a struct whose version field does not match before writing anything.
Return nvmlDeviceGetTemperatureV(void* d, TemperatureV1* reading) {
  constexpr unsigned kVersion1 = static_cast<unsigned>(sizeof(TemperatureV1)) | (1U << 24);
  constexpr Return kArgumentVersionMismatch = 25;
  if (!reading) return kInvalidArgument;
  if (reading->version != kVersion1) return kArgumentVersionMismatch;
  if (reading->sensor_type != 0) return kInvalidArgument;
  return answer(d, "nvmlDeviceGetTemperatureV", "temperature", &reading->temperature);
}
#endif

Return nvmlDeviceGetIndex(void* handle, unsigned* index) {
  std::lock_guard lock(state().mutex);
  if (!state().initialized) return kUninitialized;
  for (std::size_t i = 0; i < state().devices.size(); ++i) {
    if (&state().devices[i] == handle) {
      *index = static_cast<unsigned>(i);
      return kSuccess;
    }
  }
  return kInvalidArgument;
}
Return nvmlDeviceGetPowerUsage(void* d, unsigned* v) {
  return answer(d, "nvmlDeviceGetPowerUsage", "power_mw", v);
}
Return nvmlDeviceGetEnforcedPowerLimit(void* d, unsigned* v) {
  return answer(d, "nvmlDeviceGetEnforcedPowerLimit", "power_limit_mw", v);
}
Return nvmlDeviceGetClockInfo(void* d, int type, unsigned* v) {
  return answer(d, "nvmlDeviceGetClockInfo",
                type == 1   ? "clock_sm"
                : type == 2 ? "clock_mem"
                            : "clock_graphics",
                v);
}
Return nvmlDeviceGetMaxClockInfo(void* d, int type, unsigned* v) {
  return answer(d, "nvmlDeviceGetMaxClockInfo",
                type == 1   ? "clock_sm_max"
                : type == 2 ? "clock_mem_max"
                            : "none",
                v);
}

#ifndef FAKE_NVML_LEGACY
Return nvmlDeviceGetCurrentClocksEventReasons(void* d, unsigned long long* v) {
  return answer(d, "nvmlDeviceGetCurrentClocksEventReasons", "clock_event_reasons", v);
}
#endif
Return nvmlDeviceGetCurrentClocksThrottleReasons(void* d, unsigned long long* v) {
  return answer(d, "nvmlDeviceGetCurrentClocksThrottleReasons", "clock_event_reasons", v);
}

Return nvmlDeviceGetPersistenceMode(void* d, int* v) {
  return answer(d, "nvmlDeviceGetPersistenceMode", "persistence", v);
}

struct FakeEventSet {
  int unused;
};

Return nvmlEventSetCreate(void** set) {
  std::lock_guard lock(state().mutex);
  if (!state().initialized) return kUninitialized;
  if (state().script.contains("event_set_error"))
    return state().script["event_set_error"].get<int>();
  *set = new FakeEventSet{0};
  return kSuccess;
}

// Registration queues the device's scripted Xids: they "happen" while the tool runs.
Return nvmlDeviceRegisterEvents(void* handle, unsigned long long types, void* /*set*/) {
  std::lock_guard lock(state().mutex);
  FakeDevice* d = device_of(handle);
  if (Return error = scripted_error(d, "nvmlDeviceRegisterEvents")) return error;
  if ((types & 0x8ULL) && !d->registered) {
    d->registered = true;
    for (const auto& xid : d->script.value("xids", Json::array())) {
      state().pending_events.emplace_back(d, xid.get<unsigned long long>());
    }
  }
  return kSuccess;
}

struct EventData {
  void* device;
  unsigned long long event_type;
  unsigned long long event_data;
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};

Return nvmlEventSetWait_v2(void* /*set*/, EventData* data, unsigned /*timeout_ms*/) {
  std::lock_guard lock(state().mutex);
  auto& events = state().pending_events;
  if (events.empty()) return kTimeout;
  *data = EventData{events.front().first, 0x8ULL, events.front().second, 0xffffffffu, 0xffffffffu};
  events.pop_front();
  return kSuccess;
}

Return nvmlEventSetFree(void* set) {
  delete static_cast<FakeEventSet*>(set);
  return kSuccess;
}

}  // extern "C"
