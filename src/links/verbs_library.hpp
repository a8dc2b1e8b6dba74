#pragma once

#include <infiniband/verbs.h>
#include <string>

#include "links/verbs_handle.hpp"

namespace commcert {

// The libibverbs entry points the verbs link transport calls, loaded at run time like the health
// probe's (health/verbs_probe_ibverbs.cpp): one binary starts on nodes without rdma-core, and the
// node's own libibverbs finds the node's own providers. Only exported functions are loaded;
// the data-path calls (ibv_post_send, ibv_post_recv, ibv_poll_cq) are inline in verbs.h and go
// through the provider's table, as they do in every verbs program. Each member is named as its
// function without the "ibv_" prefix: the checks of links/verbs_errors.hpp name a failed call
// from that.
struct VerbsLibrary {
  decltype(&ibv_get_device_list) get_device_list = nullptr;
  decltype(&ibv_free_device_list) free_device_list = nullptr;
  decltype(&ibv_get_device_name) get_device_name = nullptr;
  decltype(&ibv_open_device) open_device = nullptr;
  decltype(&ibv_close_device) close_device = nullptr;
  decltype(&ibv_query_device) query_device = nullptr;
  // ibv_query_port's compatibility entry; query_port() below is the call to make.
  decltype(&ibv_query_port) query_port_compat = nullptr;
  decltype(&ibv_query_gid) query_gid = nullptr;
  decltype(&ibv_alloc_pd) alloc_pd = nullptr;
  decltype(&ibv_dealloc_pd) dealloc_pd = nullptr;
  decltype(&ibv_create_cq) create_cq = nullptr;
  decltype(&ibv_destroy_cq) destroy_cq = nullptr;
  decltype(&ibv_create_qp) create_qp = nullptr;
  decltype(&ibv_destroy_qp) destroy_qp = nullptr;
  decltype(&ibv_modify_qp) modify_qp = nullptr;
  decltype(&ibv_reg_mr) reg_mr = nullptr;
  decltype(&ibv_reg_dmabuf_mr) reg_dmabuf_mr = nullptr;  // rdma-core 34 and later; may be null
  decltype(&ibv_dereg_mr) dereg_mr = nullptr;
  decltype(&ibv_wc_status_str) wc_status_str = nullptr;

  // ibv_query_port through the provider's extended entry when it has one (what verbs.h's inline
  // wrapper does, without linking libibverbs).
  int query_port(ibv_context* context, std::uint8_t port, ibv_port_attr& attr) const;
};

// The loaded library, or nullptr with `error` saying why (not installed, a symbol missing).
[[nodiscard]] const VerbsLibrary* load_verbs_library(std::string& error);

// The owners of what the transport opens through the library, each closed by its own entry point.
using VerbsDeviceList = VerbsHandle<VerbsLibrary, ibv_device*, &VerbsLibrary::free_device_list>;
using VerbsContext = VerbsHandle<VerbsLibrary, ibv_context, &VerbsLibrary::close_device>;
using VerbsProtectionDomain = VerbsHandle<VerbsLibrary, ibv_pd, &VerbsLibrary::dealloc_pd>;
using VerbsCompletionQueue = VerbsHandle<VerbsLibrary, ibv_cq, &VerbsLibrary::destroy_cq>;
using VerbsQueuePair = VerbsHandle<VerbsLibrary, ibv_qp, &VerbsLibrary::destroy_qp>;
using VerbsMemoryRegion = VerbsHandle<VerbsLibrary, ibv_mr, &VerbsLibrary::dereg_mr>;

}  // namespace commcert
