#include "validate/string_pool.hpp"

namespace commcert {

StringId StringPool::intern(std::string_view text) {
  // Consecutive records mostly name the same one or two hosts (writer and subject), the same
  // collective or kernel: a two-entry cache saves most hash lookups.
  for (const StringId recent : recent_) {
    if (recent != kNoString && strings_[recent] == text) return recent;
  }
  // Lists of nodes (a cluster-wide record's `group_nodes`, 40,960 names per record at scale)
  // name them in the order they were first interned: try the id after the last one first.
  if (const StringId next = recent_[0] + 1;
      recent_[0] != kNoString && next < strings_.size() && strings_[next] == text) {
    return remember(next);
  }
  if (const auto it = ids_.find(text); it != ids_.end()) return remember(it->second);
  const auto id = static_cast<StringId>(strings_.size());
  const std::string& stored = strings_.emplace_back(text);
  ids_.emplace(stored, id);
  return remember(id);
}

StringId StringPool::remember(StringId id) {
  recent_[1] = recent_[0];
  recent_[0] = id;
  return id;
}

std::optional<StringId> StringPool::find(std::string_view text) const {
  if (const auto it = ids_.find(text); it != ids_.end()) return it->second;
  return std::nullopt;
}

}  // namespace commcert
