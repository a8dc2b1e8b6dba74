#pragma once

// The part of NVML's C API that commcert calls, declared here because no nvml.h exists at build
// time: NVML is loaded at run time (dlopen) so one binary runs on GPU and GPU-less hosts. Values
// and layouts follow NVML's public header (docs.nvidia.com/deploy/nvml-api); only what we call
// is declared, and every struct here is one NVML has kept unchanged across versions.

#include <cstdint>

namespace commcert::nvml {

using Return = int;
using Device = struct nvmlDevice_st*;
using EventSet = struct nvmlEventSet_st*;

// nvmlReturn_t values we act on.
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorUninitialized = 1;
inline constexpr Return kErrorInvalidArgument = 2;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorNoPermission = 4;
inline constexpr Return kErrorNotFound = 6;
inline constexpr Return kErrorInsufficientSize = 7;
inline constexpr Return kErrorDriverNotLoaded = 9;
inline constexpr Return kErrorTimeout = 10;
inline constexpr Return kErrorLibraryNotFound = 12;
inline constexpr Return kErrorFunctionNotFound = 13;
inline constexpr Return kErrorGpuIsLost = 15;
inline constexpr Return kErrorUnknown = 999;

// nvmlEnableState_t
inline constexpr int kFeatureDisabled = 0;
inline constexpr int kFeatureEnabled = 1;

// nvmlClockType_t
inline constexpr int kClockGraphics = 0;
inline constexpr int kClockSm = 1;
inline constexpr int kClockMem = 2;

// nvmlTemperatureSensors_t
inline constexpr int kTemperatureGpu = 0;

// nvmlTemperature_v1_t, for nvmlDeviceGetTemperatureV (nvmlDeviceGetTemperature is deprecated in
// CUDA 13's NVML). NVML checks `version` (struct size | version << 24) before it writes.
struct TemperatureV1 {
  unsigned version = 0;
  int sensor_type = 0;
  int temperature = 0;
};
inline constexpr unsigned kTemperatureV1Version =
    static_cast<unsigned>(sizeof(TemperatureV1)) | (1U << 24);

// nvmlMemoryErrorType_t and nvmlEccCounterType_t
inline constexpr int kMemoryErrorCorrected = 0;
inline constexpr int kMemoryErrorUncorrected = 1;
inline constexpr int kVolatileEcc = 0;
inline constexpr int kAggregateEcc = 1;

// nvmlPageRetirementCause_t
inline constexpr int kRetiredMultipleSingleBit = 0;
inline constexpr int kRetiredDoubleBit = 1;

// nvmlNvLinkErrorCounter_t
inline constexpr int kNvLinkErrorReplay = 0;
inline constexpr int kNvLinkErrorRecovery = 1;
inline constexpr int kNvLinkErrorCrcFlit = 2;
inline constexpr int kNvLinkErrorCrcData = 3;
// NVML_NVLINK_MAX_LINKS of the CUDA 13 nvml.h (18 before Blackwell). Older drivers answer
// NVML_ERROR_INVALID_ARGUMENT for links past their own maximum, which ends nothing but the scan.
inline constexpr unsigned kNvLinkMaxLinks = 36;

// nvmlEventType bits
inline constexpr unsigned long long kEventTypeXidCriticalError = 0x8ULL;

// Buffer sizes NVML documents for its string queries (the _V2 sizes where there are two).
inline constexpr unsigned kNameBufferSize = 96;
inline constexpr unsigned kUuidBufferSize = 96;
inline constexpr unsigned kSerialBufferSize = 30;
inline constexpr unsigned kVbiosBufferSize = 32;
inline constexpr unsigned kVersionBufferSize = 80;

// nvmlPciInfo_t (nvmlDeviceGetPciInfo_v3).
struct PciInfo {
  char bus_id_legacy[16];
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pci_device_id;
  unsigned pci_subsystem_id;
  char bus_id[32];
};

// nvmlEventData_t as nvmlEventSetWait_v2 fills it.
struct EventData {
  Device device;
  unsigned long long event_type;
  unsigned long long event_data;  // the Xid for kEventTypeXidCriticalError (999: unknown Xid)
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};

}  // namespace commcert::nvml
