#include "core/bounded_input.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/units.hpp"

namespace commcert {

int open_input(const std::filesystem::path& path, std::string_view what) {
  // O_NONBLOCK only for the open: opening a FIFO for reading otherwise waits for a writer,
  // forever if none comes.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    throw UsageError(
        fmt::format("cannot open {} {}: {}", what, path.string(), std::strerror(errno)));
  }
  struct stat info {};
  if (::fstat(fd, &info) == 0 && S_ISDIR(info.st_mode)) {
    ::close(fd);
    throw UsageError(fmt::format("cannot read {} {}: it is a directory", what, path.string()));
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

std::string read_bounded_file(const std::filesystem::path& path, std::uint64_t limit,
                              std::string_view what) {
  const int fd = open_input(path, what);
  const auto too_large = [&] {
    ::close(fd);
    return UsageError(fmt::format("{} {} is larger than {}, the most a {} file may hold", what,
                                  path.string(), format_bytes(limit), what));
  };
  struct stat info {};
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) &&
      static_cast<std::uint64_t>(info.st_size) > limit) {
    throw too_large();
  }
  // Devices and pipes have no size: read one byte past the limit to tell.
  std::string text;
  char buffer[65536];
  while (true) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int error = errno;
      ::close(fd);
      throw UsageError(
          fmt::format("cannot read {} {}: {}", what, path.string(), std::strerror(error)));
    }
    if (got == 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
    if (text.size() > limit) throw too_large();
  }
  ::close(fd);
  return text;
}

}  // namespace commcert
