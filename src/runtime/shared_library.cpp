#include "runtime/shared_library.hpp"

#include <dlfcn.h>
#include <filesystem>
#include <link.h>
#include <system_error>

namespace commcert {

std::optional<SharedLibrary> SharedLibrary::open(const std::string& name_or_path, bool global,
                                                 std::string& error) {
  dlerror();
  void* handle = dlopen(name_or_path.c_str(), RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
  if (!handle) {
    const char* text = dlerror();
    error = text ? text : "dlopen failed";
    return std::nullopt;
  }
  std::string path = name_or_path;
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name) {
    path = map->l_name;
  }
  return SharedLibrary(handle, std::move(path));
}

void* SharedLibrary::symbol(const char* name) const {
  return dlsym(handle_, name);
}

std::string executable_directory() {
  std::error_code error;
  const auto executable = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return {};
  return executable.parent_path().string();
}

std::optional<std::string> loaded_object_path(const std::string& prefix) {
  struct Search {
    const std::string* prefix;
    std::optional<std::string> found;
  } search{&prefix, std::nullopt};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto* state = static_cast<Search*>(data);
        if (!info->dlpi_name || !*info->dlpi_name) return 0;
        const std::string path = info->dlpi_name;
        const std::string file = std::filesystem::path(path).filename().string();
        if (file.rfind(*state->prefix, 0) != 0) return 0;
        state->found = path;
        return 1;
      },
      &search);
  return search.found;
}

}  // namespace commcert
