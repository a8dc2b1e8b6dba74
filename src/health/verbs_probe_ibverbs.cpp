#include <cerrno>
#include <cstring>
#include <infiniband/verbs.h>

#include <fmt/format.h>

#include "health/verbs_probe.hpp"
#include "runtime/shared_library.hpp"

namespace commcert {

// libibverbs is loaded, not linked: a bundled binary must start on nodes without rdma-core, and
// the node's own copy finds the node's own providers.
VerbsProbe probe_verbs() {
  VerbsProbe probe;
  probe.built = true;
  std::string error;
  static const auto kVerbs = SharedLibrary::open("libibverbs.so.1", /*global=*/false, error);
  if (!kVerbs) {
    probe.error = fmt::format("libibverbs.so.1 cannot be loaded: {}", error);
    return probe;
  }
  auto get_list =
      reinterpret_cast<decltype(&ibv_get_device_list)>(kVerbs->symbol("ibv_get_device_list"));
  auto free_list =
      reinterpret_cast<decltype(&ibv_free_device_list)>(kVerbs->symbol("ibv_free_device_list"));
  auto get_name =
      reinterpret_cast<decltype(&ibv_get_device_name)>(kVerbs->symbol("ibv_get_device_name"));
  if (!get_list || !free_list || !get_name) {
    probe.error = fmt::format("{} lacks the device-list calls", kVerbs->path());
    return probe;
  }
  int count = 0;
  errno = 0;
  ibv_device** list = get_list(&count);
  if (!list) {
    const int code = errno;
    probe.error = fmt::format("ibv_get_device_list: {}", code ? std::strerror(code) : "no devices");
    return probe;
  }
  for (int i = 0; i < count && list[i]; ++i) {
    if (const char* name = get_name(list[i])) probe.devices.emplace_back(name);
  }
  free_list(list);
  return probe;
}

}  // namespace commcert
