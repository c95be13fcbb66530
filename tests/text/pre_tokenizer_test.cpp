// Pre-tokenizer: DeepSeek's split (digits in groups of 1-3, CJK runs, words), the ECMAScript regex
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

TEST(Regex, EcmaScriptWhitespaceAndClasses) {
  // ECMAScript \s includes U+FEFF and excludes U+0085 (PCRE2's own \s is the other way round).
  Regex ws("\\s+");
  size_t b = 0, e = 0;
  ASSERT_TRUE(ws.find("a\xEF\xBB\xBF" "b", 0, b, e));
  EXPECT_EQ(b, 1u);
  EXPECT_EQ(e, 4u);
  EXPECT_FALSE(ws.find("a\xC2\x85" "b", 0, b, e));
  EXPECT_EQ(translate_ecmascript("\\d"), "[0-9]");
  EXPECT_THROW(translate_ecmascript("[\\S]"), trex::Error);
  EXPECT_THROW(Regex("(unclosed"), trex::Error);
  // Invalid UTF-8 never matches but does not stop the search.
  Regex letters("\\p{L}+");
  ASSERT_TRUE(letters.find("\xFF\xFE" "abc", 0, b, e));
  EXPECT_EQ(b, 2u);
}
