#pragma once

// Thin helpers over simdjson's On-Demand API: every read names the field it was reading, so a
// bad record is reported as "busbw_bytes_per_s: INCORRECT_TYPE" rather than a bare error code.
// Only the record reader includes this (simdjson.h is large).

#include <cstdint>
#include <optional>
#include <simdjson.h>
#include <stdexcept>
#include <string>
#include <string_view>

#include "validate/detail/record_parser.hpp"

namespace commcert::detail {

namespace od = simdjson::ondemand;

// A 32-bit FNV-1a of a key, for `switch`: a record has some thirty keys and a million records
// are read, so a chain of string compares per key shows in the profile. Each case still
// compares the key itself (an unknown key may share a hash); two known keys that collide are
// duplicate case labels, a compile error.
constexpr std::uint32_t key_id(std::string_view key) {
  std::uint32_t hash = 2166136261u;
  for (const char c : key) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 16777619u;
  }
  return hash;
}

// Where a value sits in a record, for error messages: "field", "parent.field" or
// "parent[].field". Parts are the record definitions' name constants (records/*.hpp), so a
// reader spells no field name of its own; the text is put together only for an error.
struct Where {
  Where(std::string_view name) : field(name) {}    // NOLINT(google-explicit-constructor)
  Where(const char* name) : field(name) {}         // NOLINT(google-explicit-constructor)
  Where(const std::string& name) : field(name) {}  // NOLINT(google-explicit-constructor)
  Where(std::string_view parent_name, std::string_view name, bool in_element = false)
      : parent(parent_name), field(name), element(in_element) {}
  std::string_view parent;
  std::string_view field;
  bool element = false;  // field of an element of the array `parent`
};

// Throws RecordError "<where>: <problem>".
[[noreturn]] void record_error(const Where& where, std::string_view problem);

template <typename T>
T take(simdjson::simdjson_result<T>&& result, const Where& field) {
  T value{};
  if (const auto error = std::move(result).get(value)) {
    record_error(field, simdjson::error_message(error));
  }
  return value;
}

inline bool is_null(od::value& value, const Where& field) {
  return take(value.is_null(), field);
}
inline double number(od::value& value, const Where& field) {
  return take(value.get_double(), field);
}
inline std::int64_t integer(od::value& value, const Where& field) {
  return take(value.get_int64(), field);
}
inline bool boolean(od::value& value, const Where& field) {
  return take(value.get_bool(), field);
}
inline std::string_view string(od::value& value, const Where& field) {
  return take(value.get_string(), field);
}
inline od::object object(od::value& value, const Where& field) {
  return take(value.get_object(), field);
}
inline od::array array(od::value& value, const Where& field) {
  return take(value.get_array(), field);
}

// Missing evidence is null (docs/records.md): these return nullopt for null.
inline std::optional<double> optional_number(od::value& value, const Where& field) {
  if (is_null(value, field)) return std::nullopt;
  return number(value, field);
}
inline std::optional<std::int64_t> optional_integer(od::value& value, const Where& field) {
  if (is_null(value, field)) return std::nullopt;
  return integer(value, field);
}
// A count of events (errors, retired pages, miscompared elements): null is unread, a negative
// one is no count at all and the record is refused, never read as "fewer than the limit".
inline std::optional<std::int64_t> optional_count(od::value& value, const Where& field) {
  const std::optional<std::int64_t> count = optional_integer(value, field);
  if (count && *count < 0) record_error(field, "negative (" + std::to_string(*count) + ")");
  return count;
}
inline std::optional<bool> optional_boolean(od::value& value, const Where& field) {
  if (is_null(value, field)) return std::nullopt;
  return boolean(value, field);
}
inline std::optional<std::string_view> optional_string(od::value& value, const Where& field) {
  if (is_null(value, field)) return std::nullopt;
  return string(value, field);
}

// Calls f(key, value) for every field, in document order.
template <typename F>
void for_each_field(od::object object, const Where& where, F&& f) {
  for (auto result : object) {
    od::field field = take(std::move(result), where);
    const std::string_view key = take(field.unescaped_key(), where);
    f(key, field.value());
  }
}

// Calls f(value) for every element.
template <typename F>
void for_each_element(od::array array, const Where& where, F&& f) {
  for (auto result : array) {
    // NOLINTNEXTLINE(performance-move-const-arg): take() accepts only an rvalue result.
    od::value element = take(std::move(result), where);
    f(element);
  }
}

}  // namespace commcert::detail
