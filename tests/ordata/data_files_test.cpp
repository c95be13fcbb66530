// DPS data files: the JSON + CSV layout read back by the reference reader gives exactly the instance
// data for every structure; CSV quoting; a changed or lost number is caught; DPS renders both layouts.
#include <gtest/gtest.h>

#include "ordata/answers.hpp"
#include "ordata/data_files.hpp"
#include "ordata/families.hpp"
#include "util/error.hpp"

using namespace trex::ordata;
using trex::Json;

TEST(DataFiles, JsonCsvRoundTripsForEveryStructure) {
  for (int st = 0; st < kNumStructures; ++st)
    for (int d = 0; d < kNumDifficulties; ++d) {
      Instance in = generate(Structure(st), Difficulty(d), st % 10, 100 + uint64_t(st * 7 + d));
      Json data = data_json(in);
      auto json_only = data_files(in, data, DataLayout::JsonOnly);
      ASSERT_EQ(json_only.size(), 1u);
      EXPECT_EQ(read_data_files(json_only), data);
      auto files = data_files(in, data, DataLayout::JsonCsv);
      ASSERT_EQ(layout_of(files), DataLayout::JsonCsv) << to_string(Structure(st));
      ASSERT_EQ(files[0].name, "data.json");
      EXPECT_EQ(read_data_files(files), data) << to_string(Structure(st));
      EXPECT_EQ(check_data_files(files, data), "");
      // data.json keeps the sets and scalars only; every other parameter is in a CSV file.
      Json small = Json::parse(files[0].content);
      for (const auto& p : in.params) EXPECT_EQ(small.contains(p.key), p.dims.empty()) << p.key;
      for (const auto& s : in.sets) EXPECT_TRUE(small.contains(s.key)) << s.key;
      // One changed cell is caught.
      auto bad = files;
      std::string& csv = bad[1].content;
      size_t nl = csv.find('\n');
      size_t comma = csv.find(',', nl + 1);
      ASSERT_NE(comma, std::string::npos);
      csv.insert(comma + 1, "9");
      EXPECT_EQ(check_data_files(bad, data), "data_files_mismatch") << bad[1].name << "\n" << csv;
      // A lost file is caught.
      bad = files;
      bad.pop_back();
      EXPECT_EQ(check_data_files(bad, data), "data_files_mismatch");
    }
}

TEST(DataFiles, CsvParsingQuotesAndErrors) {
  auto rows = parse_csv("a,\"b,c\",\"say \"\"hi\"\"\"\r\n1,2,3\n", "t.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"a", "b,c", "say \"hi\""}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_THROW(parse_csv("a,\"b\n", "t.csv"), trex::Error);
  DataFile j{DataFile::Json, "data.json", "", "{\"s\": [\"x,y\"]}"};
  DataFile c{DataFile::Columns, "s.csv", "s", "s,cap\n\"x,y\",12.5\n"};
  Json got = read_data_files({j, c});
  EXPECT_EQ(got["cap"]["x,y"], Json(12.5));
  DataFile ints{DataFile::Columns, "s.csv", "s", "s,cap\n\"x,y\",-3\n"};
  EXPECT_TRUE(read_data_files({j, ints})["cap"]["x,y"].is_number_integer());
  DataFile bad{DataFile::Columns, "s.csv", "s", "s,cap\nx,12kg\n"};
  try {
    read_data_files({j, bad});
    FAIL() << "no error";
  } catch (const trex::Error& e) {
    EXPECT_NE(std::string(e.what()).find("s.csv:2"), std::string::npos) << e.what();
  }
  DataFile ragged{DataFile::Matrix, "m.csv", "m", "s,a,b\nx,1\n"};
  EXPECT_THROW(read_data_files({j, ragged}), trex::Error);
}

TEST(DataFiles, DpsRendersBothLayoutsWithFileBlocks) {
  Instance in = generate(Structure::Transportation, Difficulty::Small, 0, 5);
  trex::Rng rng(9);
  int seen[2] = {0, 0};
  for (int i = 0; i < 40; ++i) {
    RenderedProblem p = render_problem(in, Mode::DPS, rng);
    ASSERT_FALSE(p.files.empty());
    DataLayout l = layout_of(p.files);
    ++seen[int(l)];
    for (const auto& f : p.files) {
      std::string fence = f.kind == DataFile::Json ? "json" : "csv";
      EXPECT_NE(p.text.find("### " + f.name + "\n```" + fence + "\n"), std::string::npos) << f.name;
      std::string body = f.content;
      while (!body.empty() && body.back() == '\n') body.pop_back();
      EXPECT_NE(p.text.find(body), std::string::npos) << f.name;
    }
    EXPECT_EQ(read_data_files(p.files), p.data);
  }
  EXPECT_GT(seen[0], 5);
  EXPECT_GT(seen[1], 5);
}
