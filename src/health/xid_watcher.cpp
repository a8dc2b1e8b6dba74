#include "health/xid_watcher.hpp"

#include <chrono>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/record.hpp"

namespace commcert {
namespace {

// An event storm must not keep a poll from returning.
constexpr int kMaxEventsPerPoll = 10000;

}  // namespace

XidWatcher::XidWatcher(const NvmlLibrary& nvml, std::vector<nvml::Device> devices)
    : nvml_(nvml),
      devices_(std::move(devices)),
      unwatched_(devices_.size()),
      events_(devices_.size()) {
  const auto set = nvml_.create_event_set();
  if (!set.ok()) {
    for (auto& reason : unwatched_) {
      reason = fmt::format("nvmlEventSetCreate: {}", nvml_.describe(set.code));
    }
    return;
  }
  set_ = *set.value;
  for (std::size_t slot = 0; slot < devices_.size(); ++slot) {
    const auto code = nvml_.register_events(devices_[slot], nvml::kEventTypeXidCriticalError, set_);
    if (code != nvml::kSuccess) {
      unwatched_[slot] = fmt::format("nvmlDeviceRegisterEvents: {}", nvml_.describe(code));
    }
  }
}

XidWatcher::~XidWatcher() {
  if (set_) nvml_.free_event_set(set_);
}

void XidWatcher::poll(unsigned timeout_ms) {
  if (!set_) return;
  const auto deadline = SteadyClock::now() + std::chrono::milliseconds(timeout_ms);
  for (int received = 0; received < kMaxEventsPerPoll; ++received) {
    const auto remaining =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
    const auto wait_ms = static_cast<unsigned>(remaining.count() > 0 ? remaining.count() : 0);
    const auto event = nvml_.wait_event(set_, wait_ms);
    if (!event.ok()) return;  // timeout (nothing more) or an error: either way, stop
    if ((event.value->type & nvml::kEventTypeXidCriticalError) == 0) continue;
    for (std::size_t slot = 0; slot < devices_.size(); ++slot) {
      if (devices_[slot] == event.value->device) {
        events_[slot].push_back({event.value->data, utc_timestamp_now()});
      }
    }
  }
}

std::optional<std::vector<XidEvent>> XidWatcher::events(std::size_t slot) const {
  if (!unwatched_.at(slot).empty()) return std::nullopt;
  return events_.at(slot);
}

const std::string& XidWatcher::unwatched_reason(std::size_t slot) const {
  return unwatched_.at(slot);
}

}  // namespace commcert
