#include "report/report_svg.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/units.hpp"
#include "report/markup.hpp"

namespace commcert {
namespace {

constexpr double kWidth = 760;
constexpr double kHeight = 300;
constexpr double kLeft = 70;
constexpr double kRight = 180;  // room for the legend
constexpr double kTop = 28;
constexpr double kBottom = 46;
constexpr double kPlotWidth = kWidth - kLeft - kRight;
constexpr double kPlotHeight = kHeight - kTop - kBottom;

// 1, 2 or 5 times a power of ten at or above `raw`: axis steps people can read.
double nice_step(double raw) {
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double factor : {1.0, 2.0, 5.0, 10.0}) {
    if (factor * magnitude >= raw) return factor * magnitude;
  }
  return 10 * magnitude;
}

struct YAxis {
  double top = 1;
  double step = 1;
};

YAxis y_axis(double max_value) {
  if (!(max_value > 0)) return {};
  const double step = nice_step(max_value / 5);
  return {std::ceil(max_value / step) * step, step};
}

double y_pixel(double value, const YAxis& axis) {
  return kTop + kPlotHeight * (1 - value / axis.top);
}

std::string y_axis_svg(const YAxis& axis, double scale, const std::string& label) {
  std::string out;
  for (double v = 0; v <= axis.top * (1 + 1e-9); v += axis.step) {
    const double y = y_pixel(v, axis);
    out += fmt::format(
        "<line class=\"grid\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>"
        "<text class=\"tick\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
        kLeft, y, kLeft + kPlotWidth, y, kLeft - 6, y + 4, fmt::format("{:.4g}", v / scale));
  }
  out += fmt::format(
      "<text class=\"axis-label\" transform=\"translate(16 {:.1f}) rotate(-90)\" "
      "text-anchor=\"middle\">{}</text>\n",
      kTop + kPlotHeight / 2, escape_markup(label));
  return out;
}

std::string frame(const std::string& title, const std::string& attributes) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {}\" width=\"{}\" "
      "height=\"{}\" role=\"img\"{}{}>\n<title>{}</title>\n"
      "<text class=\"plot-title\" x=\"{}\" y=\"18\">{}</text>\n",
      kWidth, kHeight, kWidth, kHeight, attributes.empty() ? "" : " ", attributes,
      escape_markup(title), kLeft, escape_markup(title));
}

std::string legend_entry(std::size_t index, const std::string& css_class, const std::string& label,
                         bool as_box) {
  const double y = kTop + 8 + 18 * static_cast<double>(index);
  const double x = kLeft + kPlotWidth + 14;
  const std::string mark =
      as_box ? fmt::format("<rect class=\"{}\" x=\"{}\" y=\"{}\" width=\"16\" height=\"10\"/>",
                           css_class, x, y - 8)
             : fmt::format("<line class=\"{}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>",
                           css_class, x, y - 3, x + 16, y - 3);
  return fmt::format("<g class=\"legend\">{}<text x=\"{}\" y=\"{}\">{}</text></g>\n", mark, x + 22,
                     y, escape_markup(label));
}

// The lines of a plot, flagged ones last; legend entries continue from `legend`.
template <typename XPixel>
std::string plot_lines(const LinePlot& plot, const XPixel& x_pixel, const YAxis& axis,
                       std::size_t legend = 0) {
  std::string out;
  // Flagged lines last, so they are drawn over the healthy ones.
  std::vector<const PlotLine*> order;
  for (const auto& line : plot.lines)
    order.push_back(&line);
  std::stable_partition(order.begin(), order.end(), [](const PlotLine* line) {
    return line->css_class.find("flagged") == std::string::npos;
  });
  for (const PlotLine* line : order) {
    std::string points;
    for (const auto& p : line->points)
      points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", x_pixel(p.x),
                            y_pixel(p.y, axis));
    const std::string node =
        line->node.empty() ? "" : fmt::format(" data-node=\"{}\"", escape_markup(line->node));
    out += fmt::format("<polyline class=\"{}\"{} points=\"{}\"><title>{}</title></polyline>\n",
                       line->css_class, node, points, escape_markup(line->label));
    if (line->points.size() == 1) {
      out += fmt::format("<circle class=\"{}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\"/>\n",
                         line->css_class, x_pixel(line->points[0].x),
                         y_pixel(line->points[0].y, axis));
    }
    // The legend names the flagged lines and the median; healthy nodes are the grey mass.
    if (line->css_class != "curve" && legend < 12)
      out += legend_entry(legend++, line->css_class, line->label, false);
  }
  return out;
}

// x ticks from 0 s at a readable step, and the axis label.
std::string seconds_axis_svg(double x_max) {
  std::string out;
  const double step = nice_step(x_max / 6);
  for (double t = 0; t <= x_max * (1 + 1e-9); t += step) {
    const double x = kLeft + kPlotWidth * t / x_max;
    out += fmt::format(
        "<line class=\"grid\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>"
        "<text class=\"tick\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:g}</text>\n",
        x, kTop, x, kTop + kPlotHeight, x, kTop + kPlotHeight + 16, t);
  }
  out += fmt::format(
      "<text class=\"axis-label\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">seconds "
      "since the burn started</text>\n",
      kLeft + kPlotWidth / 2, kHeight - 8);
  return out;
}

// The extent of a line plot: its x range (sizes, or seconds from 0) and the top of its y axis.
struct PlotRange {
  double x_min = INFINITY;
  double x_max = -INFINITY;
  double y_max = 0;
};

PlotRange plot_range(const LinePlot& plot) {
  PlotRange r;
  for (const auto& line : plot.lines) {
    for (const auto& p : line.points) {
      r.x_min = std::min(r.x_min, p.x);
      r.x_max = std::max(r.x_max, p.x);
      r.y_max = std::max(r.y_max, p.y);
    }
  }
  for (const auto& b : plot.band)
    r.y_max = std::max(r.y_max, b.high);
  if (plot.floor_y) r.y_max = std::max(r.y_max, *plot.floor_y);
  if (plot.x_in_seconds) {
    r.x_min = 0;
    if (!(r.x_max > 0)) r.x_max = 1;
  }
  if (!(r.x_min > 0) && !plot.x_in_seconds) r.x_min = 1;
  if (!(r.x_max >= r.x_min)) r.x_max = r.x_min;
  return r;
}

// The message-size axis: ticks at powers of two, at most nine of them.
template <typename XPixel>
std::string size_axis_svg(double log_min, double x_max, const XPixel& x_pixel) {
  std::string out;
  const int first = static_cast<int>(std::ceil(log_min - 1e-9));
  const int last = static_cast<int>(std::floor(std::log2(x_max) + 1e-9));
  const int stride = std::max(1, (last - first) / 8 + 1);
  for (int e = first; e <= last; e += stride) {
    const double x = x_pixel(std::ldexp(1.0, e));
    out += fmt::format(
        "<line class=\"grid\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>"
        "<text class=\"tick\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
        x, kTop, x, kTop + kPlotHeight, x, kTop + kPlotHeight + 16,
        escape_markup(format_bytes(std::uint64_t{1} << std::clamp(e, 0, 62))));
  }
  out += fmt::format(
      "<text class=\"axis-label\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">message "
      "size</text>\n",
      kLeft + kPlotWidth / 2, kHeight - 8);
  return out;
}

// The fleet band, the baseline floor and the judged size's marker, each with its legend entry
// (counted in `legend`).
template <typename XPixel>
std::string overlays_svg(const LinePlot& plot, const XPixel& x_pixel, const YAxis& axis,
                         std::size_t& legend) {
  std::string out;
  if (plot.band.size() >= 2) {
    std::string path;
    for (const auto& b : plot.band)
      path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", x_pixel(b.x),
                          y_pixel(b.high, axis));
    for (auto it = plot.band.rbegin(); it != plot.band.rend(); ++it)
      path += fmt::format(" L{:.1f},{:.1f}", x_pixel(it->x), y_pixel(it->low, axis));
    out += fmt::format(
        "<path class=\"band\" d=\"{} Z\"><title>fleet band: 25th to 75th "
        "percentile of the nodes</title></path>\n",
        path);
    out += legend_entry(legend++, "band", "fleet band (middle half)", true);
  }
  if (plot.floor_y) {
    const double y = y_pixel(*plot.floor_y, axis);
    out += fmt::format(
        "<line class=\"floor\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>\n", kLeft,
        y, kLeft + kPlotWidth, y);
    out += legend_entry(legend++, "floor", "baseline floor", false);
  }
  if (plot.marker_x) {
    const double x = x_pixel(*plot.marker_x);
    out += fmt::format(
        "<line class=\"judged\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>\n", x,
        kTop, x, kTop + kPlotHeight);
    out += legend_entry(legend++, "judged", plot.marker_label, false);
  }
  return out;
}

}  // namespace

std::string render_svg(const LinePlot& plot) {
  const PlotRange range = plot_range(plot);
  const double x_min = range.x_min;
  const double x_max = range.x_max;
  const double log_min = std::log2(std::max(x_min, 1e-300));
  const double log_span = std::max(std::log2(x_max) - log_min, 1.0);
  const auto x_pixel = [&](double x) {
    if (plot.x_in_seconds) return kLeft + kPlotWidth * std::clamp(x / x_max, 0.0, 1.0);
    return kLeft + kPlotWidth * (std::log2(std::max(x, x_min)) - log_min) / log_span;
  };
  const YAxis axis = y_axis(range.y_max);

  std::string out = frame(plot.title, plot.attributes);
  out += y_axis_svg(axis, plot.y_scale, plot.y_label);
  if (plot.x_in_seconds) {
    out += seconds_axis_svg(x_max);
    return out + plot_lines(plot, x_pixel, axis) + "</svg>\n";
  }
  out += size_axis_svg(log_min, x_max, x_pixel);
  std::size_t legend = 0;
  out += overlays_svg(plot, x_pixel, axis, legend);
  out += plot_lines(plot, x_pixel, axis, legend);
  return out + "</svg>\n";
}

std::string render_svg(const BarChart& chart) {
  double y_max = 0;
  for (const auto& group : chart.groups) {
    for (const auto& bar : group.bars)
      y_max = std::max(y_max, bar.value_or(0));
    y_max = std::max({y_max, group.high.value_or(0), group.reference.value_or(0)});
  }
  const YAxis axis = y_axis(y_max);
  std::string out = frame(chart.title, chart.attributes);
  out += y_axis_svg(axis, chart.y_scale, chart.y_label);
  const double slot =
      kPlotWidth / static_cast<double>(std::max<std::size_t>(chart.groups.size(), 1));
  const std::size_t per_group = std::max<std::size_t>(chart.series.size(), 1);
  const double bar_width = std::min(28.0, slot * 0.8 / static_cast<double>(per_group));
  std::size_t legend = 0;
  for (std::size_t s = 0; s < chart.series.size(); ++s)
    out += legend_entry(legend++, fmt::format("bar series{}", s), chart.series[s], true);
  if (!chart.reference_label.empty())
    out += legend_entry(legend++, "reference", chart.reference_label, false);
  for (std::size_t g = 0; g < chart.groups.size(); ++g) {
    const BarGroup& group = chart.groups[g];
    const double left = kLeft + slot * static_cast<double>(g) +
                        (slot - bar_width * static_cast<double>(per_group)) / 2;
    out += fmt::format("<g class=\"bar-group{}\" data-label=\"{}\">",
                       group.flagged ? " flagged" : "", escape_markup(group.label));
    for (std::size_t b = 0; b < group.bars.size(); ++b) {
      if (!group.bars[b]) continue;
      const double top = y_pixel(*group.bars[b], axis);
      out += fmt::format(
          "<rect class=\"bar series{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
          "height=\"{:.1f}\"><title>{}: {:.4g}</title></rect>",
          b, left + bar_width * static_cast<double>(b), top, bar_width * 0.9,
          kTop + kPlotHeight - top, escape_markup(group.label + " " + chart.series.at(b)),
          *group.bars[b] / chart.y_scale);
    }
    if (group.low && group.high) {
      const double x = left + bar_width * 0.45;
      out += fmt::format(
          "<line class=\"whisker\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>", x,
          y_pixel(*group.low, axis), x, y_pixel(*group.high, axis));
    }
    if (group.reference) {
      const double y = y_pixel(*group.reference, axis);
      out += fmt::format(
          "<line class=\"reference\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>",
          left - 3, y, left + bar_width * static_cast<double>(per_group) + 3, y);
    }
    out += fmt::format(
        "<text class=\"tick\" transform=\"translate({:.1f} {:.1f}) rotate(30)\">{}</text></g>\n",
        left, kTop + kPlotHeight + 12, escape_markup(group.label));
  }
  return out + "</svg>\n";
}

}  // namespace commcert
