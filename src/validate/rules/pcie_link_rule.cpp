#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "validate/rules/rules.hpp"
#include "validate/rules/support.hpp"

namespace commcert::rules {
namespace {

// NVML can read a link's generation and not its width, or the reverse: the message then says
// which figure it could not read, not a generation or width of 0 (an x0 link has no lanes).
std::string link_figure(const std::optional<int>& value) {
  return value ? std::to_string(*value) : "?";
}

// What the link was held to: "gen5 x16", or only the figure the baseline asks for ("x16" when
// it asks nothing of the generation), never a generation or width of 0.
std::string expectation(int gen_expected, int width_expected) {
  std::vector<std::string> parts;
  if (gen_expected > 0) parts.push_back("gen" + std::to_string(gen_expected));
  if (width_expected > 0) parts.push_back("x" + std::to_string(width_expected));
  return join(parts, " ");
}

// A GPU that trained its PCIe link below its maximum generation or width moves host data at a
// fraction of the rate (DCGM's pcie plugin fails on gen/width below the SKU's minimum).
class PcieLinkRule final : public Rule {
 public:
  std::string_view id() const override { return "rule.pcie_link"; }
  void judge(const JudgeContext& context, std::vector<Finding>& out) const override {
    const auto& limits = context.baseline.gpu_health;
    for (const auto& r : context.evidence.gpu_health) {
      if (r.status != RecordStatus::kOk) continue;
      int gen_expected = limits.pcie_min_gen.value_or(0);
      int width_expected = limits.pcie_min_width.value_or(0);
      if (limits.pcie_at_max) {
        gen_expected = std::max(gen_expected, r.pcie_gen_max.value_or(0));
        width_expected = std::max(width_expected, r.pcie_width_max.value_or(0));
      }
      const bool gen_low = r.pcie_gen && *r.pcie_gen < gen_expected;
      const bool width_low = r.pcie_width && *r.pcie_width < width_expected;
      if (gen_low || width_low) {
        Finding f = gpu_finding(context.evidence, "health.pcie_degraded", id(), "health.gpu",
                                r.node, r.gpu, r.ref);
        f.fields.emplace_back("gen", link_figure(r.pcie_gen));
        f.fields.emplace_back("width", link_figure(r.pcie_width));
        f.fields.emplace_back("expected", expectation(gen_expected, width_expected));
        out.push_back(std::move(f));
      }
      // Fail closed: a figure the link is held to that NVML did not read certifies nothing and
      // blames nothing; the GPU is inconclusive on it. So is a figure read as 0 or less, held
      // to anything or not: the record gave a value that is no reading.
      if (!r.pcie_gen && (gen_expected > 0 || r.pcie_gen_not_read)) {
        out.push_back(unread(context, r, "PCIe link generation", r.pcie_gen_not_read,
                             expectation(gen_expected, 0)));
      }
      if (!r.pcie_width && (width_expected > 0 || r.pcie_width_not_read)) {
        out.push_back(unread(context, r, "PCIe link width", r.pcie_width_not_read,
                             expectation(0, width_expected)));
      }
      if (limits.max_pcie_replays && r.pcie_replays && *r.pcie_replays > *limits.max_pcie_replays) {
        Finding f = gpu_finding(context.evidence, "health.pcie_replays", id(), "health.gpu", r.node,
                                r.gpu, r.ref);
        f.measured = static_cast<double>(*r.pcie_replays);
        f.limit = static_cast<double>(*limits.max_pcie_replays);
        f.fields.emplace_back("count", std::to_string(*r.pcie_replays));
        f.fields.emplace_back("limit", std::to_string(*limits.max_pcie_replays));
        out.push_back(std::move(f));
      }
    }
  }

 private:
  Finding unread(const JudgeContext& context, const GpuHealthEvidence& r, std::string metric,
                 const std::optional<int>& read_as, const std::string& expected) const {
    Finding f = gpu_finding(context.evidence, "evidence.no_figure", id(), "health.gpu", r.node,
                            r.gpu, r.ref);
    f.fields.emplace_back("metric", std::move(metric));
    std::vector<std::string> parts;
    if (read_as) parts.push_back(fmt::format("read as {}, which is no reading", *read_as));
    if (!expected.empty()) parts.push_back(expected + " expected");
    f.fields.emplace_back("detail", " (" + join(parts, "; ") + ")");
    return f;
  }
};

}  // namespace

std::unique_ptr<Rule> make_pcie_link_rule() {
  return std::make_unique<PcieLinkRule>();
}

}  // namespace commcert::rules
