// SVG charts: every point and bar is drawn, text is escaped, degenerate inputs still give a chart.
#include <gtest/gtest.h>

#include "pipeline/svg_chart.hpp"

using namespace trex::pipeline;

static int count(const std::string& s, const std::string& needle) {
  int n = 0;
  for (std::size_t p = 0; (p = s.find(needle, p)) != std::string::npos; p += needle.size()) ++n;
  return n;
}

TEST(SvgChart, LineChartDrawsEverySeriesAndPoint) {
  Series a{"CPT -> SFT", {0, 1, 2, 3}, {5, 4, 3, 2.5}}, b{"SFT <only>", {0, 1, 2}, {5, 4.5, 4}};
  std::string svg = svg_line_chart({a, b}, {"loss & steps", "step", "loss"});
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(count(svg, "<polyline"), 2);
  EXPECT_NE(svg.find("SFT &lt;only&gt;"), std::string::npos);
  EXPECT_NE(svg.find("loss &amp; steps"), std::string::npos);
  auto first = svg.find("points=\"");
  auto end = svg.find('"', first + 8);
  EXPECT_EQ(count(svg.substr(first, end - first), ","), 4);
}

TEST(SvgChart, DegenerateInputs) {
  EXPECT_NE(svg_line_chart({}, {"empty", "x", "y"}).find("</svg>"), std::string::npos);
  EXPECT_NE(svg_line_chart({{"flat", {1}, {2}}}, {"one point", "x", "y"}).find("<polyline"), std::string::npos);
  std::string bars = svg_bar_chart({{"a", 3}, {"b", 0}, {"c", 10}}, {"bars", "", "tok/s"});
  EXPECT_EQ(count(bars, "<rect"), 4);  // background + 3 bars
  EXPECT_NE(svg_bar_chart({}, {"none", "", ""}).find("</svg>"), std::string::npos);
}
