#include "core/records_file.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace commcert {
namespace {

void write_all(int fd, std::string_view data, const std::filesystem::path& path) {
  while (!data.empty()) {
    const ssize_t written = ::write(fd, data.data(), data.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      throw RuntimeFailure(fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
    }
    data.remove_prefix(static_cast<std::size_t>(written));
  }
}

}  // namespace

RecordsFile::RecordsFile(const std::filesystem::path& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw RuntimeFailure(fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
  }
}

RecordsFile::~RecordsFile() {
  if (fd_ >= 0) ::close(fd_);
}

void RecordsFile::append(const Json& record) {
  std::string line = record.dump(-1, ' ', false, Json::error_handler_t::replace);
  line.push_back('\n');
  write_all(fd_, line, path_);
  ::fdatasync(fd_);
}

void write_json_file_atomically(const std::filesystem::path& path, const Json& value) {
  write_text_file_atomically(path,
                             value.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
}

void write_text_file_atomically(const std::filesystem::path& path, std::string_view text) {
  const std::filesystem::path temporary = path.string() + fmt::format(".tmp.{}", ::getpid());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw RuntimeFailure(
        fmt::format("cannot write {}: {}", temporary.string(), std::strerror(errno)));
  }
  try {
    write_all(fd, text, temporary);
  } catch (...) {
    ::close(fd);
    throw;
  }
  // Data on disk before the rename makes it visible: a power loss leaves the old file or the new
  // one, never an empty one.
  ::fsync(fd);
  ::close(fd);
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw RuntimeFailure(fmt::format("cannot rename {} to {}: {}", temporary.string(),
                                     path.string(), error.message()));
  }
}

}  // namespace commcert
