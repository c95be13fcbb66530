// Quality gates: a well-formed record passes; each broken property is caught by name.
#include <gtest/gtest.h>

#include "ordata/gates.hpp"

using namespace trex::ordata;
using trex::Json;

static Json good(const std::string& mode, const std::string& user) {
  Json meta = {{"mode", mode},
               {"domain", "logistics"},
               {"structure", "transportation"},
               {"difficulty", "small"},
               {"data_interface", mode == "DP" ? "inline_text" : mode == "DT" ? "markdown_table" : "attached_files"},
               {"answer_style", "lp"},
               {"task", "lp_structure"},
               {"objective", 12.5},
               {"seed", 7}};
  return {{"id", "x"},
          {"messages", Json::array({{{"role", "user"}, {"content", user}}, {{"role", "assistant"}, {"content", "```lp\nMinimize\n x\nEnd\n```"}}})},
          {"metadata", meta}};
}

TEST(Gates, AcceptsWellFormedRecords) {
  EXPECT_EQ(quality_gate(good("DP", "Ship 5 tons.")), "");
  EXPECT_EQ(quality_gate(good("DT", "Data:\n\n| A | B |\n| --- | ---: |\n| x | 1 |\n")), "");
  EXPECT_EQ(quality_gate(good("DPS", "Files.\n\n### data.json\n```json\n{}\n```")), "");
}

TEST(Gates, RejectsBrokenRecords) {
  auto r = good("DP", "Ship 5 tons.");
  r["messages"].push_back({{"role", "user"}, {"content", "more"}});
  EXPECT_EQ(quality_gate(r), "message_count");
  r = good("DP", "Ship 5 tons.");
  r["messages"][0]["role"] = "system";
  EXPECT_EQ(quality_gate(r), "message_roles");
  r = good("DP", "");
  EXPECT_EQ(quality_gate(r), "empty_message");
  r = good("DP", "Ship TODO tons.");
  EXPECT_EQ(quality_gate(r), "forbidden_text");
  r = good("DP", "Ship 5 tons.");
  r["messages"][1]["content"] = "```lp\nMinimize\n x\n";
  EXPECT_EQ(quality_gate(r), "unfinished_answer");
  r = good("DP", "Ship 5 tons.");
  r["messages"][1]["content"] = "<think>\nabc";
  EXPECT_EQ(quality_gate(r), "unfinished_answer");
  r = good("DP", "Ship 5 tons.");
  r["metadata"].erase("seed");
  EXPECT_EQ(quality_gate(r), "metadata_incomplete");
  r = good("DP", "Ship 5 tons.");
  r["metadata"]["structure"] = "crop_circles";  // not a structure (knapsack is one since issue 26)
  EXPECT_EQ(quality_gate(r), "metadata_vocabulary");
  r = good("DP", "Ship 5 tons.");
  r["metadata"]["domain"] = "space";
  EXPECT_EQ(quality_gate(r), "metadata_vocabulary");
  r = good("DP", "Ship 5 tons.");
  r["metadata"]["data_interface"] = "markdown_table";
  EXPECT_EQ(quality_gate(r), "metadata_vocabulary");
  // DT needs a real separator row: pipes alone are not enough.
  EXPECT_EQ(quality_gate(good("DT", "a | b | c")), "dt_without_table");
  EXPECT_EQ(quality_gate(good("DPS", "see data.json")), "dps_without_file_block");
}
