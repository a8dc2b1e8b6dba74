#pragma once

#include <cstdint>

namespace commcert {

// One bandwidth iteration of the verbs transport: `total` work requests (the --window messages),
// at most `depth` posted and not yet completed at a time (the send queue's depth). The transport
// posts what postable() allows, polls the completion queue, reports what completed, and repeats
// until done(). Pure arithmetic; throws std::logic_error on a count that cannot happen (more
// posted than allowed, more completed than posted), which would be a transport bug.
class RequestWindow {
 public:
  RequestWindow(int total, int depth);
  [[nodiscard]] int postable() const;
  [[nodiscard]] int next_index() const { return posted_; }  // the index of the next request
  [[nodiscard]] int outstanding() const { return posted_ - completed_; }
  [[nodiscard]] bool done() const { return completed_ == total_; }
  void posted(int count);
  void completed(int count);

 private:
  int total_;
  int depth_;
  int posted_ = 0;
  int completed_ = 0;
};

// Where message `index` of a window lives in the registered buffer: each in its own part, as
// the MPI transport does, so concurrent writes never overlap.
[[nodiscard]] std::uint64_t message_offset(int index, std::uint64_t message_bytes);

// Bytes the verbs transport registers: the largest window of bandwidth messages or the latency
// message, whichever is more.
[[nodiscard]] std::uint64_t verbs_buffer_bytes(std::uint64_t largest_size, int window,
                                               std::uint64_t latency_bytes);

}  // namespace commcert
