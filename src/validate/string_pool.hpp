#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace commcert {

// Ids of interned strings: a million records name a few thousand hosts, so evidence stores
// 4-byte ids and the text once.
using StringId = std::uint32_t;
inline constexpr StringId kNoString = std::numeric_limits<StringId>::max();

class StringPool {
 public:
  StringPool() = default;
  // Views into strings_ are map keys: copying would leave them pointing into the source.
  StringPool(const StringPool&) = delete;
  StringPool& operator=(const StringPool&) = delete;
  StringPool(StringPool&&) = default;
  StringPool& operator=(StringPool&&) = default;

  StringId intern(std::string_view text);
  [[nodiscard]] std::optional<StringId> find(std::string_view text) const;
  [[nodiscard]] const std::string& at(StringId id) const { return strings_.at(id); }
  [[nodiscard]] std::size_t size() const { return strings_.size(); }

 private:
  std::deque<std::string> strings_;  // a deque never moves its elements
  StringId remember(StringId id);

  std::unordered_map<std::string_view, StringId> ids_;
  std::array<StringId, 2> recent_ = {kNoString, kNoString};  // the ids returned last
};

}  // namespace commcert
