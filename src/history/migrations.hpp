#pragma once

#include <span>
#include <string_view>

namespace commcert {

// The history's schema as a list of steps: step i takes a database at PRAGMA user_version i to
// i + 1. A step is appended, never edited, once released: databases in the field went through
// the old text. HistoryDb::kSchemaVersion is the number of steps.
[[nodiscard]] std::span<const std::string_view> history_migrations();

}  // namespace commcert
