#include <fmt/format.h>

#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// DCGM's health watch fails on any NVLink replay or recovery error and on inactive links; CRC
// errors it judges by rate, which one snapshot cannot give, so they are a warning here.
class NvlinkRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.nvlink"; }
  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    const auto& limits = context.baseline.gpu_health;
    const auto expected_links = context.baseline.nvlinks_per_gpu;
    for (const auto& r : context.evidence.gpu_health) {
      if (r.status != RecordStatus::kOk || !r.nvlinks) continue;
      const auto make = [&](ReasonCode code, int link) {
        Finding f = gpu_finding(context.evidence, code, id(), "health.gpu", r.node, r.gpu, r.ref);
        if (link >= 0) f.link = LinkRef{"nvlink", {}, link, {}};
        return f;
      };
      std::vector<std::string> inactive;
      for (const auto& link : *r.nvlinks) {
        if (!link.active.value_or(true)) inactive.push_back(std::to_string(link.link));
        const auto replay = link.replay_errors.value_or(0);
        const auto recovery = link.recovery_errors.value_or(0);
        if (replay > limits.max_nvlink_replay_errors ||
            recovery > limits.max_nvlink_recovery_errors) {
          Finding f = make("health.nvlink_errors", link.link);
          f.measured = static_cast<double>(replay + recovery);
          f.fields.emplace_back("link", std::to_string(link.link));
          f.fields.emplace_back("replay", std::to_string(replay));
          f.fields.emplace_back("recovery", std::to_string(recovery));
          f.fields.emplace_back("limit", fmt::format("{}/{}", limits.max_nvlink_replay_errors,
                                                     limits.max_nvlink_recovery_errors));
          out.push_back(std::move(f));
        }
        const auto crc = link.crc_flit_errors.value_or(0) + link.crc_data_errors.value_or(0);
        if (crc > limits.max_nvlink_crc_errors) {
          Finding f = make("health.nvlink_crc", link.link);
          f.measured = static_cast<double>(crc);
          f.limit = static_cast<double>(limits.max_nvlink_crc_errors);
          f.fields.emplace_back("link", std::to_string(link.link));
          f.fields.emplace_back("count", std::to_string(crc));
          f.fields.emplace_back("limit", std::to_string(limits.max_nvlink_crc_errors));
          out.push_back(std::move(f));
        }
      }
      if (!inactive.empty()) {
        Finding f = make("health.nvlink_down", inactive.size() == 1 ? std::stoi(inactive[0]) : -1);
        f.fields.emplace_back("detail", fmt::format("NVLink {} inactive", join(inactive)));
        out.push_back(std::move(f));
      }
      if (expected_links && r.nvlinks->size() < static_cast<std::size_t>(*expected_links)) {
        Finding f = make("health.nvlink_down", -1);
        f.measured = static_cast<double>(r.nvlinks->size());
        f.limit = *expected_links;
        f.fields.emplace_back("detail", fmt::format("{} NVLinks reported, the baseline expects {}",
                                                    r.nvlinks->size(), *expected_links));
        out.push_back(std::move(f));
      }
    }
  }
};

}  // namespace

std::unique_ptr<Rule> make_nvlink_rule() {
  return std::make_unique<NvlinkRule>();
}

}  // namespace commcert::rules
