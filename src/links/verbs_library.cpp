#include "links/verbs_library.hpp"

#include <cstddef>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "runtime/shared_library.hpp"

namespace commcert {
namespace {

struct Loaded {
  VerbsLibrary library;
  std::string error;
};

template <typename Pointer>
bool bind(const SharedLibrary& so, const char* name, Pointer& into, std::string& missing) {
  into = reinterpret_cast<Pointer>(so.symbol(name));
  if (!into) missing += missing.empty() ? name : fmt::format(", {}", name);
  return into != nullptr;
}

Loaded load() {
  Loaded out;
  std::string error;
  static const auto kSo = SharedLibrary::open("libibverbs.so.1", /*global=*/false, error);
  if (!kSo) {
    out.error = fmt::format("libibverbs.so.1 cannot be loaded: {}", error);
    return out;
  }
  VerbsLibrary& l = out.library;
  std::string missing;
  bind(*kSo, "ibv_get_device_list", l.get_device_list, missing);
  bind(*kSo, "ibv_free_device_list", l.free_device_list, missing);
  bind(*kSo, "ibv_get_device_name", l.get_device_name, missing);
  bind(*kSo, "ibv_open_device", l.open_device, missing);
  bind(*kSo, "ibv_close_device", l.close_device, missing);
  bind(*kSo, "ibv_query_device", l.query_device, missing);
  bind(*kSo, "ibv_query_port", l.query_port, missing);
  bind(*kSo, "ibv_query_gid", l.query_gid, missing);
  bind(*kSo, "ibv_alloc_pd", l.alloc_pd, missing);
  bind(*kSo, "ibv_dealloc_pd", l.dealloc_pd, missing);
  bind(*kSo, "ibv_create_cq", l.create_cq, missing);
  bind(*kSo, "ibv_destroy_cq", l.destroy_cq, missing);
  bind(*kSo, "ibv_create_qp", l.create_qp, missing);
  bind(*kSo, "ibv_destroy_qp", l.destroy_qp, missing);
  bind(*kSo, "ibv_modify_qp", l.modify_qp, missing);
  bind(*kSo, "ibv_reg_mr", l.reg_mr, missing);
  bind(*kSo, "ibv_dereg_mr", l.dereg_mr, missing);
  bind(*kSo, "ibv_wc_status_str", l.wc_status_str, missing);
  if (!missing.empty()) {
    out.error = fmt::format("{} lacks {}", kSo->path(), missing);
    return out;
  }
  // Optional: without it GPU memory falls back to peer memory (nvidia-peermem).
  l.reg_dmabuf_mr = reinterpret_cast<decltype(l.reg_dmabuf_mr)>(kSo->symbol("ibv_reg_dmabuf_mr"));
  return out;
}

}  // namespace

int VerbsLibrary::query_port_attr(ibv_context* context, std::uint8_t port,
                                  ibv_port_attr& attr) const {
  std::memset(&attr, 0, sizeof(attr));
  // verbs_get_ctx_op's test, spelled out (the macro is a GNU statement expression): the
  // provider's context is large enough to hold the entry, and the entry is set.
  const verbs_context* extended = verbs_get_ctx(context);
  if (extended && extended->sz >= sizeof(verbs_context) - offsetof(verbs_context, query_port) &&
      extended->query_port) {
    return extended->query_port(context, port, &attr, sizeof(attr));
  }
  return query_port(context, port, reinterpret_cast<_compat_ibv_port_attr*>(&attr));
}

const VerbsLibrary* load_verbs_library(std::string& error) {
  static const Loaded kLoaded = load();
  if (!kLoaded.error.empty()) {
    error = kLoaded.error;
    return nullptr;
  }
  return &kLoaded.library;
}

}  // namespace commcert
