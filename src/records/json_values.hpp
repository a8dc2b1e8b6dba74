#pragma once

#include <optional>

#include "core/json.hpp"

namespace commcert {

// Missing evidence is null, never zero (docs/records.md).
template <typename T>
[[nodiscard]] Json or_null(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}

}  // namespace commcert
