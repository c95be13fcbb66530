// JSONL reader: records in order, blank lines skipped, errors name file and line.
#include <gtest/gtest.h>

#include <filesystem>

#include "util/atomic_file.hpp"
#include "util/jsonl.hpp"

namespace fs = std::filesystem;

static fs::path temp_file(const std::string& name, const std::string& content) {
  fs::path p = fs::temp_directory_path() / name;
  trex::write_file_atomic(p, content);
  return p;
}

TEST(Jsonl, ReadsRecordsAndSkipsBlankLines) {
  auto p = temp_file("trex_jsonl_ok.jsonl", "{\"a\":1}\n\n{\"a\":2}\r\n");
  trex::JsonlReader r(p);
  auto a = r.next();
  ASSERT_TRUE(a);
  EXPECT_EQ((*a)["a"], 1);
  auto b = r.next();
  ASSERT_TRUE(b);
  EXPECT_EQ((*b)["a"], 2);
  EXPECT_EQ(r.line(), 3);
  EXPECT_FALSE(r.next());
}

TEST(Jsonl, MalformedLineNamesFileAndLine) {
  auto p = temp_file("trex_jsonl_bad.jsonl", "{\"a\":1}\n{\"a\":\n");
  trex::JsonlReader r(p);
  r.next();
  try {
    r.next();
    FAIL() << "expected an error";
  } catch (const trex::Error& e) {
    EXPECT_NE(std::string(e.what()).find("trex_jsonl_bad.jsonl:2"), std::string::npos) << e.what();
  }
}

TEST(Jsonl, InvalidUtf8IsRejected) {
  auto p = temp_file("trex_jsonl_utf8.jsonl", std::string("{\"a\":\"\xff\xfe\"}\n"));
  trex::JsonlReader r(p);
  EXPECT_THROW(r.next(), trex::Error);
}

TEST(Jsonl, WriterCommitsAtomically) {
  fs::path p = fs::temp_directory_path() / "trex_jsonl_out.jsonl";
  fs::remove(p);
  {
    trex::JsonlWriter w(p);
    w.write({{"x", 1}});
    EXPECT_FALSE(fs::exists(p));
    w.commit();
  }
  EXPECT_EQ(trex::read_file(p), "{\"x\":1}\n");
}

TEST(Jsonl, RequireFieldErrors) {
  trex::Json j = {{"s", "v"}, {"n", 3}};
  trex::SourceLocation w{"f.jsonl", 7, 0};
  EXPECT_EQ(trex::require_string(j, "s", w), "v");
  try {
    trex::require_string(j, "n", w);
    FAIL();
  } catch (const trex::Error& e) {
    EXPECT_EQ(std::string(e.what()), "f.jsonl:7: field 'n' must be a string");
  }
  EXPECT_THROW(trex::require_field(j, "missing", w), trex::Error);
}
