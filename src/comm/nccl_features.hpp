#pragma once

#include <algorithm>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "comm/gpu_runtime.hpp"
#include "kernels/collective_types.hpp"

namespace commcert {

// Which NCCL a feature needs, as NCCL_VERSION_CODE spells versions since 2.9 (major * 10000 +
// minor * 100 + patch). Pure, so the rule is unit-tested without NCCL or a GPU.

// ncclCommSplit (node and pairs scopes) and ncclGetLastError: nothing older is driven at all.
inline constexpr int kOldestNcclVersion = 21800;
// ncclFloat8e4m3 / ncclFloat8e5m2.
inline constexpr int kNcclFp8Version = 22400;
// The native ncclAlltoAll, ncclGather and ncclScatter calls.
inline constexpr int kNcclAllToAllGatherScatterVersion = 22800;

// The version whose features may be used: a feature needs both the headers commcert was compiled
// against (else the call or enum value is not in the binary) and the libnccl.so.2 loaded at run
// time (else "undefined symbol" or an invalid-argument error mid-sweep). nccl-tests' rule.
[[nodiscard]] constexpr int usable_nccl_version(int compiled_version, int loaded_version) {
  return std::min(compiled_version, loaded_version);
}

// Why the loaded NCCL cannot be used at all, or nullopt when it can.
[[nodiscard]] inline std::optional<std::string> nccl_too_old(int loaded_version) {
  if (loaded_version >= kOldestNcclVersion) return std::nullopt;
  return fmt::format("the loaded NCCL is {}; commcert needs NCCL {} or later",
                     format_nccl_version(loaded_version), format_nccl_version(kOldestNcclVersion));
}

// Why NCCL of `version` (usable_nccl_version) cannot run `kind` on `type`, or nullopt when it
// can. The text goes into the `skipped` record as it is.
[[nodiscard]] inline std::optional<std::string> nccl_version_lacks(int version, CollectiveKind kind,
                                                                   DataType type) {
  const auto needs = [version](std::string_view what, int needed) {
    return fmt::format("{} needs NCCL {} or later; this NCCL is {}", what,
                       format_nccl_version(needed), format_nccl_version(version));
  };
  if (version < kNcclAllToAllGatherScatterVersion) {
    switch (kind) {
      case CollectiveKind::kAllToAll:
        return needs("ncclAlltoAll", kNcclAllToAllGatherScatterVersion);
      case CollectiveKind::kGather:
        return needs("ncclGather", kNcclAllToAllGatherScatterVersion);
      case CollectiveKind::kScatter:
        return needs("ncclScatter", kNcclAllToAllGatherScatterVersion);
      default:
        break;
    }
  }
  if ((type == DataType::kFp8E4M3 || type == DataType::kFp8E5M2) && version < kNcclFp8Version) {
    return needs("fp8", kNcclFp8Version);
  }
  return std::nullopt;
}

}  // namespace commcert
