#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "health/nvml_library.hpp"
#include "records/health.hpp"  // XidEvent

namespace commcert {

// Xid events NVML delivers for a set of GPUs. NVML only reports events that happen after
// registration, so a watcher is created when a stage starts and polled until it ends; the
// kernel log (NVRM: Xid ...) is the record of anything earlier. Not thread-safe (NVML event sets
// are not): one thread creates, polls and destroys it.
class XidWatcher {
 public:
  XidWatcher(const NvmlLibrary& nvml, std::vector<nvml::Device> devices);
  ~XidWatcher();
  XidWatcher(const XidWatcher&) = delete;
  XidWatcher& operator=(const XidWatcher&) = delete;

  // Collects events for up to timeout_ms (0: only those already queued).
  void poll(unsigned timeout_ms);

  // Events of devices[slot]; nullopt when Xid events cannot be watched on it.
  [[nodiscard]] std::optional<std::vector<XidEvent>> events(std::size_t slot) const;
  // Why devices[slot] is not watched (empty when it is).
  [[nodiscard]] const std::string& unwatched_reason(std::size_t slot) const;

 private:
  const NvmlLibrary& nvml_;
  std::vector<nvml::Device> devices_;
  nvml::EventSet set_ = nullptr;
  std::vector<std::string> unwatched_;
  std::vector<std::vector<XidEvent>> events_;
};

}  // namespace commcert
