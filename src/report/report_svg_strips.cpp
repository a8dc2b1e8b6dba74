#include <algorithm>

#include <fmt/format.h>

#include "report/markup.hpp"
#include "report/report_svg.hpp"

namespace commcert {
namespace {

constexpr double kWidth = 760;
constexpr double kLeft = 150;  // room for the row labels
constexpr double kRight = 20;
constexpr double kTop = 28;
constexpr double kRowHeight = 16;
constexpr double kAxisHeight = 40;
constexpr double kPlotWidth = kWidth - kLeft - kRight;

}  // namespace

std::string render_svg(const StripChart& chart) {
  const double end = chart.end_s > 0 ? chart.end_s : 1;
  const double height = kTop + kRowHeight * static_cast<double>(chart.rows.size()) + kAxisHeight;
  const auto x_pixel = [&](double t) { return kLeft + kPlotWidth * std::clamp(t / end, 0.0, 1.0); };
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" "
      "role=\"img\"{}{}>\n<title>{}</title>\n<text class=\"plot-title\" x=\"{}\" "
      "y=\"18\">{}</text>\n",
      kWidth, height, kWidth, height, chart.attributes.empty() ? "" : " ", chart.attributes,
      escape_markup(chart.title), kLeft, escape_markup(chart.title));
  for (std::size_t r = 0; r < chart.rows.size(); ++r) {
    const StripRow& row = chart.rows[r];
    const double y = kTop + kRowHeight * static_cast<double>(r);
    const std::string node =
        row.node.empty() ? "" : fmt::format(" data-node=\"{}\"", escape_markup(row.node));
    out += fmt::format(
        "<g class=\"strip-row\"{}><text class=\"tick\" x=\"{:.1f}\" y=\"{:.1f}\" "
        "text-anchor=\"end\">{}</text><line class=\"grid\" x1=\"{:.1f}\" y1=\"{:.1f}\" "
        "x2=\"{:.1f}\" y2=\"{:.1f}\"/>\n",
        node, kLeft - 6, y + kRowHeight - 4, escape_markup(row.label), kLeft, y + kRowHeight / 2,
        kLeft + kPlotWidth, y + kRowHeight / 2);
    for (const StripSpan& span : row.spans) {
      const double x = x_pixel(span.from_s);
      const double width = std::max(x_pixel(span.to_s) - x, 1.0);
      out += fmt::format(
          "<rect class=\"strip\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\">"
          "<title>{}</title></rect>\n",
          x, y + 2, width, kRowHeight - 4, escape_markup(span.label));
    }
    out += "</g>\n";
  }
  const double axis_y = kTop + kRowHeight * static_cast<double>(chart.rows.size());
  for (int tick = 0; tick <= 6; ++tick) {
    const double t = end * tick / 6;
    out += fmt::format(
        "<text class=\"tick\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:.3g}</text>\n",
        x_pixel(t), axis_y + 16, t);
  }
  out += fmt::format(
      "<text class=\"axis-label\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">seconds since "
      "the burn started</text>\n</svg>\n",
      kLeft + kPlotWidth / 2, axis_y + 34);
  return out;
}

}  // namespace commcert
