#pragma once

#include <optional>
#include <string>
#include <vector>

namespace commcert {

// Inline SVG charts for the HTML report, drawn here rather than by an embedded plotting library:
// a few hundred lines give the two chart shapes the report needs, the file stays small and
// self-contained (no script has to run for a chart to show, so it prints and survives a mail
// client), and every string in it goes through the same escaping as the rest of the page.

struct PlotPoint {
  double x = 0;
  double y = 0;
};

struct PlotLine {
  std::string label;      // legend and hover title
  std::string css_class;  // "curve", "curve flagged", "median"
  std::string node;       // data-node attribute; empty: none
  std::vector<PlotPoint> points;
};

struct PlotBandPoint {
  double x = 0;
  double low = 0;
  double high = 0;
};

// y against x: x on a base-2 logarithmic axis labelled as byte sizes, or (x_in_seconds) on a
// linear axis from 0 labelled in seconds.
struct LinePlot {
  std::string title;
  std::string y_label;
  double y_scale = 1;  // y values are divided by this for the axis labels
  std::vector<PlotLine> lines;
  std::vector<PlotBandPoint> band;  // drawn below the lines
  std::optional<double> marker_x;   // a vertical dashed line (the judged size)
  std::string marker_label;
  std::optional<double> floor_y;  // a horizontal dashed line (the baseline's floor)
  std::string attributes;         // extra attributes on <svg>, already escaped
  bool x_in_seconds = false;
};

struct BarGroup {
  std::string label;                        // category under the bars
  std::vector<std::optional<double>> bars;  // one per series; nullopt: not measured
  std::optional<double> low, high;          // a whisker over the first bar
  std::optional<double> reference;          // a tick across the group (the datasheet figure)
  bool flagged = false;
};

struct BarChart {
  std::string title;
  std::string y_label;
  double y_scale = 1;
  std::vector<std::string> series;  // legend, one per bar of a group
  std::vector<BarGroup> groups;
  std::string reference_label;
  std::string attributes;
};

// Rows of labelled spans along a time axis from 0 (e.g. when each GPU was throttled, and why).
struct StripSpan {
  double from_s = 0;
  double to_s = 0;
  std::string label;  // hover title
};

struct StripRow {
  std::string label;
  std::string node;  // data-node attribute; empty: none
  std::vector<StripSpan> spans;
};

struct StripChart {
  std::string title;
  double end_s = 0;
  std::vector<StripRow> rows;
  std::string attributes;
};

[[nodiscard]] std::string render_svg(const LinePlot& plot);
[[nodiscard]] std::string render_svg(const StripChart& chart);
[[nodiscard]] std::string render_svg(const BarChart& chart);

}  // namespace commcert
