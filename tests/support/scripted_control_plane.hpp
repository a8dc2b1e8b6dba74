#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/control_plane.hpp"

namespace commcert::test_support {

// The control plane of one process of a job whose other processes are scripted: what the sweep
// engine's unit test drives to see what the job agrees on (the smallest buffer cap, a placement
// some process cannot run, a stop request, the slowest rank's time) and what process 0 gathers
// from the others, without running them. Collectives return at once; nothing blocks.
class ScriptedPeersControlPlane final : public ControlPlane {
 public:
  ScriptedPeersControlPlane(int process_index, int process_count)
      : index_(process_index), count_(process_count) {}

  // The element-wise maximum of the other processes' values in an all_reduce_max, given this
  // process's; by default they bring nothing larger.
  std::function<std::vector<double>(std::span<const double> mine)> peers_max;
  // Process 0: what the other processes send to gather_to_root, in process order (each an
  // encode_rank_results message); by default nothing (no rank results of theirs).
  std::function<std::vector<std::vector<double>>()> peers_gathered;

  // The length of every all_reduce_max, in order.
  std::vector<std::size_t> all_reduce_lengths;

  [[nodiscard]] int process_index() const override { return index_; }
  [[nodiscard]] int process_count() const override { return count_; }
  std::vector<std::string> all_gather(const std::string& mine) override {
    return std::vector<std::string>(static_cast<std::size_t>(count_), mine);
  }
  std::string broadcast_from_root(const std::string& value) override { return value; }
  void all_reduce_max(std::span<double> values) override {
    all_reduce_lengths.push_back(values.size());
    if (!peers_max) return;
    const std::vector<double> theirs = peers_max(values);
    if (theirs.size() != values.size()) {
      throw std::logic_error("ScriptedPeersControlPlane: peers answered another length");
    }
    for (std::size_t i = 0; i < values.size(); ++i)
      values[i] = std::max(values[i], theirs[i]);
  }
  std::vector<std::vector<double>> gather_to_root(std::span<const double> mine) override {
    if (index_ != 0) return {};
    std::vector<std::vector<double>> out{std::vector<double>(mine.begin(), mine.end())};
    if (peers_gathered) {
      for (auto& theirs : peers_gathered())
        out.push_back(std::move(theirs));
    }
    return out;
  }
  void barrier() override {}
  [[nodiscard]] bool has_side_channel() const override { return false; }
  void post_notice(std::span<const std::int64_t> /*payload*/) override {}
  std::optional<WatchdogNotice> poll_notice() override { return std::nullopt; }
  [[noreturn]] void abort_job(int /*exit_code*/) noexcept override { std::terminate(); }

 private:
  int index_;
  int count_;
};

}  // namespace commcert::test_support
