// SVG drawing: axes with "nice" ticks, polylines per series, legend; bars with value labels.
#include "pipeline/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace trex::pipeline {

namespace {

const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

// Tick step of 1, 2 or 5 times a power of ten giving about `target` ticks.
double nice_step(double span, int target) {
  if (!(span > 0)) return 1.0;
  double raw = span / target;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double f = raw / mag;
  return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

std::string num(double v) {
  if (v == 0) return "0";
  double a = std::fabs(v);
  if (a >= 1e5 || a < 1e-3) return fmt::format("{:.2g}", v);
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.3g}", v);
}

struct Frame {
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;  // data range
  int left = 64, right = 16, top = 36, bottom = 48, w = 0, h = 0;
  double px(double x) const { return left + (x - x0) / (x1 - x0) * (w - left - right); }
  double py(double y) const { return h - bottom - (y - y0) / (y1 - y0) * (h - top - bottom); }
};

std::string header(const ChartOptions& o) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">{3}</text>\n",
      o.width, o.height, o.width / 2, xml_escape(o.title));
}

std::string axes(const Frame& f, const ChartOptions& o, bool log_y, bool draw_x_ticks) {
  std::string s;
  s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"black\"/>\n", f.left, f.h - f.bottom, f.w - f.right);
  s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"black\"/>\n", f.left, f.top, f.h - f.bottom);
  double ys = nice_step(f.y1 - f.y0, 5);
  for (double y = std::ceil(f.y0 / ys) * ys; y <= f.y1 + 1e-12; y += ys) {
    double py = f.py(y);
    s += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>\n", f.left, py, f.w - f.right);
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", f.left - 4, py + 4,
                     num(log_y ? std::pow(10.0, y) : y));
  }
  if (draw_x_ticks) {
    double xs = nice_step(f.x1 - f.x0, 6);
    for (double x = std::ceil(f.x0 / xs) * xs; x <= f.x1 + 1e-12; x += xs)
      s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", f.px(x), f.h - f.bottom + 16, num(x));
  }
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", (f.left + f.w - f.right) / 2, f.h - 8,
                   xml_escape(o.x_label));
  s += fmt::format("<text x=\"14\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {0})\">{1}</text>\n",
                   (f.top + f.h - f.bottom) / 2, xml_escape(o.y_label));
  return s;
}

}  // namespace

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string svg_line_chart(const std::vector<Series>& series, const ChartOptions& o) {
  Frame f;
  f.x0 = f.y0 = std::numeric_limits<double>::infinity();
  f.x1 = f.y1 = -std::numeric_limits<double>::infinity();
  f.w = o.width;
  f.h = o.height;
  auto ty = [&](double y) { return o.log_y ? std::log10(std::max(y, 1e-12)) : y; };
  for (const auto& s : series)
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!std::isfinite(s.y[i])) continue;
      f.x0 = std::min(f.x0, s.x[i]);
      f.x1 = std::max(f.x1, s.x[i]);
      f.y0 = std::min(f.y0, ty(s.y[i]));
      f.y1 = std::max(f.y1, ty(s.y[i]));
    }
  if (!std::isfinite(f.x0)) f.x0 = 0, f.x1 = 1, f.y0 = 0, f.y1 = 1;
  if (f.x1 == f.x0) f.x1 = f.x0 + 1;
  if (f.y1 == f.y0) f.y1 = f.y0 + 1;
  double pad = 0.05 * (f.y1 - f.y0);
  f.y0 -= pad;
  f.y1 += pad;
  std::string svg = header(o) + axes(f, o, o.log_y, true);
  for (std::size_t k = 0; k < series.size(); ++k) {
    const auto& s = series[k];
    std::string pts;
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i)
      if (std::isfinite(s.y[i])) pts += fmt::format("{:.1f},{:.1f} ", f.px(s.x[i]), f.py(ty(s.y[i])));
    const char* color = kPalette[k % 8];
    svg += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" points=\"{}\"/>\n", color, pts);
    int ly = f.top + 4 + int(k) * 16;
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"3\" fill=\"{}\"/>\n", f.w - f.right - 150, ly, color);
    svg += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", f.w - f.right - 134, ly + 5, xml_escape(s.label));
  }
  return svg + "</svg>\n";
}

std::string svg_bar_chart(const std::vector<Bar>& bars, const ChartOptions& o) {
  Frame f;
  f.x1 = double(std::max<std::size_t>(bars.size(), 1));
  f.y1 = 0;
  f.w = o.width;
  f.h = o.height;
  for (const auto& b : bars) f.y1 = std::max(f.y1, b.value);
  if (f.y1 <= 0) f.y1 = 1;
  f.y1 *= 1.1;
  std::string svg = header(o) + axes(f, o, false, false);
  double slot = (f.px(1) - f.px(0));
  for (std::size_t i = 0; i < bars.size(); ++i) {
    double x = f.px(double(i)) + slot * 0.15, w = slot * 0.7;
    double y = f.py(bars[i].value), y0 = f.py(0);
    svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"/>\n", x, y, w,
                       std::max(0.0, y0 - y), kPalette[i % 8]);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", x + w / 2, y - 4, num(bars[i].value));
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x + w / 2, f.h - f.bottom + 16,
                       xml_escape(bars[i].label));
  }
  return svg + "</svg>\n";
}

}  // namespace trex::pipeline
