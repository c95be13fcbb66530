// Pre-tokenizer: DeepSeek's split (digits in groups of 1-3, CJK runs, words), the Oniguruma-to-PCRE2 regex
// translation, and Hugging Face's Split delimiter behaviours.
#include <gtest/gtest.h>

#include "text/pre_tokenizer.hpp"
#include "text/regex.hpp"
#include "util/error.hpp"

using namespace trex::text;

namespace {
std::vector<std::string> split(const PreTokenizer& p, std::string_view text) {
  PieceBuffer buf;
  p.split(text, buf);
  return {buf.pieces.begin(), buf.pieces.end()};
}
PreTokenizer split_step(const std::string& regex, const std::string& behavior, bool invert = false) {
  trex::Json j = {{"type", "Sequence"},
                  {"pretokenizers",
                   {{{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", behavior}, {"invert", invert}},
                    {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
  return PreTokenizer::from_json(j);
}
using V = std::vector<std::string>;
}  // namespace

TEST(PreTokenizer, DeepSeekDigitsInGroupsOfThree) {
  auto p = PreTokenizer::deepseek_v3();
  EXPECT_EQ(split(p, "x 1234567"), (V{"x", " ", "123", "456", "7"}));
  EXPECT_EQ(split(p, "运筹学abc"), (V{"运筹学", "abc"}));
  EXPECT_EQ(split(p, "Hello world"), (V{"Hello", " world"}));
  EXPECT_EQ(split(p, "a  \n\nb"), (V{"a", "  \n\n", "b"}));
}

TEST(PreTokenizer, SplitBehaviours) {
  EXPECT_EQ(split(split_step("-", "Isolated"), "a-b--c"), (V{"a", "-", "b", "-", "-", "c"}));
  EXPECT_EQ(split(split_step("-", "Removed"), "a-b--c"), (V{"a", "b", "c"}));
  EXPECT_EQ(split(split_step("-", "MergedWithPrevious"), "a-b--c"), (V{"a-", "b-", "-", "c"}));
  EXPECT_EQ(split(split_step("-", "MergedWithNext"), "a-b--c"), (V{"a", "-b", "-", "-c"}));
  EXPECT_EQ(split(split_step("-", "Contiguous"), "a-b--c"), (V{"a", "-", "b", "--", "c"}));
  EXPECT_EQ(split(split_step("-", "Removed", true), "a-b--c"), (V{"-", "-", "-"}));
}

TEST(PreTokenizer, ByteLevelGpt2RegexAndPrefixSpace) {
  trex::Json j = {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"use_regex", true}};
  auto p = PreTokenizer::from_json(j);
  EXPECT_EQ(split(p, "Hello world's 42"), (V{" Hello", " world", "'s", " 42"}));
}

TEST(PreTokenizer, RejectsNonByteLevelPipelines) {
  trex::Json no_bytes = {{"type", "Split"}, {"pattern", {{"Regex", "a"}}}, {"behavior", "Isolated"}};
  EXPECT_THROW(PreTokenizer::from_json(no_bytes), trex::Error);
  EXPECT_THROW(PreTokenizer::from_json(trex::Json{{"type", "Metaspace"}}), trex::Error);
}

TEST(Regex, OnigurumaWhitespaceAndClasses) {
  // As Hugging Face tokenizers 0.23.3 splits (Split with these patterns, checked in its Python API): \s takes
  // U+0085 and U+3000 but not U+FEFF or U+180E; \d takes Arabic-Indic digits; \w takes é and ٣; \b is a
  // Unicode word boundary (none between ẋ and x).
  Regex ws("\\s+");
  size_t b = 0, e = 0;
  ASSERT_TRUE(ws.find("a\xC2\x85" "b", 0, b, e));
  EXPECT_EQ(b, 1u);
  EXPECT_EQ(e, 3u);
  EXPECT_FALSE(ws.find("a\xEF\xBB\xBF" "b\xE1\xA0\x8E" "c", 0, b, e));
  ASSERT_TRUE(ws.find("d\xE3\x80\x80" "e", 0, b, e));
  EXPECT_EQ(e - b, 3u);
  Regex digits("\\d+");
  ASSERT_TRUE(digits.find("a\xD9\xA3\xD9\xA4" "b", 0, b, e));  // a٣٤b
  EXPECT_EQ(b, 1u);
  EXPECT_EQ(e, 5u);
  Regex word("\\w+");
  ASSERT_TRUE(word.find("\xC3\xA9" "a_b\xD9\xA3" "x y", 0, b, e));  // éa_b٣x y
  EXPECT_EQ(b, 0u);
  EXPECT_EQ(e, 8u);
  Regex boundary("\\bx");
  ASSERT_TRUE(boundary.find("\xE1\xBA\x8Bx x", 0, b, e));  // ẋx x: only the last x starts a word
  EXPECT_EQ(b, 5u);
  EXPECT_THROW(translate_oniguruma("[\\S]"), trex::Error);
  EXPECT_THROW(Regex("(unclosed"), trex::Error);
  // Invalid UTF-8 never matches but does not stop the search.
  Regex letters("\\p{L}+");
  ASSERT_TRUE(letters.find("\xFF\xFE" "abc", 0, b, e));
  EXPECT_EQ(b, 2u);
}
