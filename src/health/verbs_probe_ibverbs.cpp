#include <cerrno>
#include <cstring>
#include <infiniband/verbs.h>

#include <fmt/format.h>

#include "health/verbs_probe.hpp"

namespace commcert {

VerbsProbe probe_verbs() {
  VerbsProbe probe;
  probe.built = true;
  int count = 0;
  errno = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (!list) {
    const int error = errno;
    probe.error =
        fmt::format("ibv_get_device_list: {}", error ? std::strerror(error) : "no devices");
    return probe;
  }
  for (int i = 0; i < count && list[i]; ++i) {
    if (const char* name = ibv_get_device_name(list[i])) probe.devices.emplace_back(name);
  }
  ibv_free_device_list(list);
  return probe;
}

}  // namespace commcert
