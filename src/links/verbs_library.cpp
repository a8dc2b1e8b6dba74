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
// Each entry point from the function it is named after (VerbsLibrary's members drop "ibv_").
#define COMMCERT_BIND_IBV(entry) bind(*kSo, "ibv_" #entry, l.entry, missing)
  COMMCERT_BIND_IBV(get_device_list);
  COMMCERT_BIND_IBV(free_device_list);
  COMMCERT_BIND_IBV(get_device_name);
  COMMCERT_BIND_IBV(open_device);
  COMMCERT_BIND_IBV(close_device);
  COMMCERT_BIND_IBV(query_device);
  bind(*kSo, "ibv_query_port", l.query_port_compat, missing);
  COMMCERT_BIND_IBV(query_gid);
  COMMCERT_BIND_IBV(alloc_pd);
  COMMCERT_BIND_IBV(dealloc_pd);
  COMMCERT_BIND_IBV(create_cq);
  COMMCERT_BIND_IBV(destroy_cq);
  COMMCERT_BIND_IBV(create_qp);
  COMMCERT_BIND_IBV(destroy_qp);
  COMMCERT_BIND_IBV(modify_qp);
  COMMCERT_BIND_IBV(reg_mr);
  COMMCERT_BIND_IBV(dereg_mr);
  COMMCERT_BIND_IBV(wc_status_str);
#undef COMMCERT_BIND_IBV
  if (!missing.empty()) {
    out.error = fmt::format("{} lacks {}", kSo->path(), missing);
    return out;
  }
  // Optional: without it GPU memory falls back to peer memory (nvidia-peermem).
  l.reg_dmabuf_mr = reinterpret_cast<decltype(l.reg_dmabuf_mr)>(kSo->symbol("ibv_reg_dmabuf_mr"));
  return out;
}

}  // namespace

int VerbsLibrary::query_port(ibv_context* context, std::uint8_t port, ibv_port_attr& attr) const {
  std::memset(&attr, 0, sizeof(attr));
  // verbs_get_ctx_op's test, spelled out (the macro is a GNU statement expression): the
  // provider's context is large enough to hold the entry, and the entry is set.
  const verbs_context* extended = verbs_get_ctx(context);
  if (extended && extended->sz >= sizeof(verbs_context) - offsetof(verbs_context, query_port) &&
      extended->query_port) {
    return extended->query_port(context, port, &attr, sizeof(attr));
  }
  return query_port_compat(context, port, reinterpret_cast<_compat_ibv_port_attr*>(&attr));
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
