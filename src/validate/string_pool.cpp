#include "validate/string_pool.hpp"

namespace commcert {

StringId StringPool::intern(std::string_view text) {
  // Consecutive records mostly name the same host, collective or kernel.
  if (last_ != kNoString && strings_[last_] == text) return last_;
  if (const auto it = ids_.find(text); it != ids_.end()) return last_ = it->second;
  const auto id = static_cast<StringId>(strings_.size());
  const std::string& stored = strings_.emplace_back(text);
  ids_.emplace(stored, id);
  return last_ = id;
}

std::optional<StringId> StringPool::find(std::string_view text) const {
  if (const auto it = ids_.find(text); it != ids_.end()) return it->second;
  return std::nullopt;
}

}  // namespace commcert
