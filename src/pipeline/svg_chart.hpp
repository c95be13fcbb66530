// Small SVG charts written by our own code (no plotting dependency): line charts for loss curves and
// bar charts for per-stage throughput and expert load, embedded in report.html and linked from report.md.
#pragma once
#include <string>
#include <vector>

namespace trex::pipeline {

struct Series {
  std::string label;
  std::vector<double> x, y;
};

struct ChartOptions {
  std::string title, x_label, y_label;
  int width = 640, height = 360;
  bool log_y = false;
};

std::string svg_line_chart(const std::vector<Series>& series, const ChartOptions& options);

struct Bar {
  std::string label;
  double value = 0.0;
};

std::string svg_bar_chart(const std::vector<Bar>& bars, const ChartOptions& options);

// Escapes &, <, >, " for SVG/HTML text.
std::string xml_escape(const std::string& s);

}  // namespace trex::pipeline
