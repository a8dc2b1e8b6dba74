#pragma once

#include <filesystem>
#include <string_view>

#include "core/json.hpp"

namespace commcert {

// Appends one JSON object per line to records.jsonl. Each append is one write(2) on an O_APPEND
// descriptor followed by fdatasync, so a crash (ours or the node's) keeps every record before it
// and a reader never sees half a line from us.
class RecordsFile {
 public:
  explicit RecordsFile(const std::filesystem::path& path);
  ~RecordsFile();
  RecordsFile(const RecordsFile&) = delete;
  RecordsFile& operator=(const RecordsFile&) = delete;

  void append(const Json& record);
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

// Writes `value` to `path` through a temporary file and rename, so readers never see a partial
// meta.json even if we die while writing it.
void write_json_file_atomically(const std::filesystem::path& path, const Json& value);

// The same for any text (a derived baseline): the old file stays whole until the new one is.
void write_text_file_atomically(const std::filesystem::path& path, std::string_view text);

}  // namespace commcert
