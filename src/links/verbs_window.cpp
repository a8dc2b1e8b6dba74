#include "links/verbs_window.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace commcert {

RequestWindow::RequestWindow(int total, int depth) : total_(total), depth_(depth) {
  if (total < 1 || depth < 1) {
    throw std::logic_error(
        fmt::format("RequestWindow({}, {}): both must be positive", total, depth));
  }
}

int RequestWindow::postable() const {
  return std::min(total_ - posted_, depth_ - outstanding());
}

void RequestWindow::posted(int count) {
  if (count < 0 || count > postable()) {
    throw std::logic_error(fmt::format("RequestWindow: {} posted, {} allowed", count, postable()));
  }
  posted_ += count;
}

void RequestWindow::completed(int count) {
  if (count < 0 || count > outstanding()) {
    throw std::logic_error(
        fmt::format("RequestWindow: {} completed, {} outstanding", count, outstanding()));
  }
  completed_ += count;
}

std::uint64_t message_offset(int index, std::uint64_t message_bytes) {
  return static_cast<std::uint64_t>(index) * message_bytes;
}

std::uint64_t verbs_buffer_bytes(std::uint64_t largest_size, int window,
                                 std::uint64_t latency_bytes) {
  return std::max(largest_size * static_cast<std::uint64_t>(std::max(window, 1)), latency_bytes);
}

}  // namespace commcert
