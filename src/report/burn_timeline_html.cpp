#include "report/burn_timeline_html.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "report/markup.hpp"
#include "report/report_svg.hpp"

namespace commcert {
namespace {

using Column = std::vector<std::optional<double>> BurnTimeline::*;

std::string gpu_label(const BurnGpu& gpu) {
  return fmt::format("{} gpu{}", gpu.node, gpu.gpu);
}

std::string time_plot(const std::vector<BurnGpu>& burns, const char* title, const char* y_label,
                      const char* css, Column column) {
  LinePlot plot;
  plot.title = title;
  plot.y_label = y_label;
  plot.x_in_seconds = true;
  plot.attributes = fmt::format("class=\"plot burn-timeline {}\"", css);
  for (const auto& gpu : burns) {
    if (!gpu.timeline) continue;
    const BurnTimeline& t = *gpu.timeline;
    PlotLine line;
    line.label = gpu_label(gpu);
    line.node = gpu.node;
    line.css_class = gpu.status == "ok" ? "curve" : "curve flagged";
    const auto& values = t.*column;
    for (std::size_t i = 0; i < t.t_s.size() && i < values.size(); ++i) {
      if (values[i]) line.points.push_back({t.t_s[i], *values[i]});
    }
    if (!line.points.empty()) plot.lines.push_back(std::move(line));
  }
  return plot.lines.empty() ? std::string() : "<figure>" + render_svg(plot) + "</figure>\n";
}

// Consecutive points with the same reasons form one span; a point covers (previous t, t].
std::vector<StripSpan> throttle_spans(const BurnTimeline& t) {
  std::vector<StripSpan> spans;
  std::vector<std::string> open;
  for (std::size_t i = 0; i < t.t_s.size(); ++i) {
    const double from = i == 0 ? 0.0 : t.t_s[i - 1];
    const auto& reasons = t.throttle[i];
    if (!reasons.empty() && reasons == open) {
      spans.back().to_s = t.t_s[i];
      continue;
    }
    open = reasons;
    if (reasons.empty()) continue;
    std::string label;
    for (const auto& reason : reasons)
      label += (label.empty() ? "" : ", ") + reason;
    spans.push_back({from, t.t_s[i], label});
  }
  return spans;
}

}  // namespace

std::string burn_timeline_figures(const std::vector<BurnGpu>& burns) {
  StripChart strips;
  strips.title = "burn: clock-event (throttle) reasons over time";
  strips.attributes = "class=\"plot burn-throttle\"";
  for (const auto& gpu : burns) {
    if (!gpu.timeline || gpu.timeline->t_s.empty()) continue;
    strips.end_s = std::max(strips.end_s, gpu.timeline->t_s.back());
    strips.rows.push_back({gpu_label(gpu), gpu.node, throttle_spans(*gpu.timeline)});
  }
  if (strips.rows.empty()) return {};
  return "<h3>Burn over time</h3>\n<p class=\"muted\">One point per measurement window (or run of "
         "windows, in long burns): TFLOP/s of the window, median SM clock and power, highest "
         "temperature; GPUs whose burn did not pass are red.</p>\n" +
         time_plot(burns, "burn: TFLOP/s over time", "TFLOP/s", "tflops", &BurnTimeline::tflops) +
         time_plot(burns, "burn: SM clock over time", "MHz", "sm-clock",
                   &BurnTimeline::sm_clock_mhz) +
         time_plot(burns, "burn: power over time", "W", "power", &BurnTimeline::power_w) +
         time_plot(burns, "burn: temperature over time (highest per point)", "°C", "temperature",
                   &BurnTimeline::temperature_c) +
         "<figure>" + render_svg(strips) + "</figure>\n";
}

}  // namespace commcert
