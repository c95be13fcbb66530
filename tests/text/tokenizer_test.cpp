// Tokenizer: encode/decode identity on arbitrary bytes, fast path == reference path, added tokens,
// tokenizer.json save -> load stability, and errors for unsupported or malformed tokenizer.json.
#include <gtest/gtest.h>

#include "text/byte_level.hpp"
#include "text/tokenizer.hpp"
#include "text_test_util.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"

using namespace trex::text;
using trex::text::testing::small_tokenizer;
using trex::text::testing::temp_path;

namespace {

// Random bytes biased towards text: ASCII words, spaces, digits, UTF-8 sequences (valid and broken),
// special-token strings.
std::string random_bytes(trex::Rng& rng, size_t n) {
  static const char* pieces[] = {"the", " ", "  ", "\n", "\t", "123", "4567", "é", "中文", "🙂", "<｜User｜>",
                                 "</think>", "\xE4\xB8", "\xF0\x9F", "\x80", "\xFF", "\xC0\xAF", "'s", "x_1", "!!"};
  std::string s;
  while (s.size() < n) {
    if (rng.bernoulli(0.3)) {
      s.push_back(char(rng.uniform_int(0, 255)));
    } else {
      s += pieces[rng.uniform_int(0, 19)];
    }
  }
  return s;
}

}  // namespace

TEST(ByteLevel, MapIsABijectionOverBytes) {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(char(b));
  std::string text = bytes_to_token_text(all), back;
  ASSERT_TRUE(token_text_to_bytes(text, back));
  EXPECT_EQ(back, all);
  EXPECT_EQ(bytes_to_token_text(" "), "Ġ");
  EXPECT_EQ(bytes_to_token_text("\n"), "Ċ");
}

TEST(Tokenizer, EncodeDecodeIsIdentityOnArbitraryBytes) {
  const Tokenizer& tok = small_tokenizer();
  trex::Rng rng(42);
  for (int i = 0; i < 400; ++i) {
    std::string s = random_bytes(rng, size_t(rng.uniform_int(0, 300)));
    for (bool special : {true, false}) {
      auto ids = tok.encode(s, EncodeOptions{special});
      ASSERT_EQ(tok.decode(ids), s) << "case " << i;
    }
  }
}

TEST(Tokenizer, FastPathMatchesReferencePath) {
  const Tokenizer& tok = small_tokenizer();
  trex::Rng rng(7);
  for (int i = 0; i < 300; ++i) {
    std::string s = random_bytes(rng, size_t(rng.uniform_int(0, 400)));
    ASSERT_EQ(tok.encode(s), tok.encode_reference(s)) << "case " << i;
  }
  for (const auto& doc : synthetic_corpus(99, 50000)) ASSERT_EQ(tok.encode(doc), tok.encode_reference(doc));
}

TEST(Tokenizer, SpecialTokensAreSingleIds) {
  const Tokenizer& tok = small_tokenizer();
  TokenId user = tok.require_token(tokens::kUser), asst = tok.require_token(tokens::kAssistant);
  EXPECT_EQ(tok.require_token(tokens::kBos), 0);
  EXPECT_EQ(tok.require_token(tokens::kEos), 1);
  auto ids = tok.encode(std::string(tokens::kUser) + "hi" + tokens::kAssistant);
  ASSERT_GE(ids.size(), 3u);
  EXPECT_EQ(ids.front(), user);
  EXPECT_EQ(ids.back(), asst);
  EXPECT_TRUE(tok.is_special(user));
  // With special parsing off the same text is ordinary bytes.
  auto plain = tok.encode(std::string(tokens::kUser) + "hi", EncodeOptions{false});
  for (TokenId id : plain) EXPECT_FALSE(tok.is_special(id));
  EXPECT_EQ(tok.decode(plain), std::string(tokens::kUser) + "hi");
  EXPECT_EQ(tok.decode(ids, /*skip_special=*/true), "hi");
}

TEST(Tokenizer, SaveLoadEncodeIsStable) {
  const Tokenizer& tok = small_tokenizer();
  auto p = temp_path("roundtrip.tokenizer.json");
  tok.save(p);
  Tokenizer back = Tokenizer::load(p);
  EXPECT_EQ(back.vocab_size(), tok.vocab_size());
  EXPECT_EQ(back.fingerprint(), tok.fingerprint());
  auto p2 = temp_path("roundtrip2.tokenizer.json");
  back.save(p2);
  EXPECT_EQ(trex::read_file(p), trex::read_file(p2));  // byte-identical re-save
  for (const auto& doc : synthetic_corpus(5, 30000)) ASSERT_EQ(back.encode(doc), tok.encode(doc));
  std::filesystem::remove(p);
  std::filesystem::remove(p2);
}

TEST(Tokenizer, DecodeRejectsUnknownIds) {
  const Tokenizer& tok = small_tokenizer();
  std::vector<TokenId> bad{TokenId(tok.vocab_size())};
  EXPECT_THROW(tok.decode(bad), trex::Error);
  std::vector<TokenId> neg{-1};
  EXPECT_THROW(tok.decode(neg), trex::Error);
}

TEST(Tokenizer, RejectsUnsupportedOrBrokenJson) {
  auto j = trex::Json::parse(small_tokenizer().to_json().dump());
  auto expect_error = [](const trex::Json& bad, const std::string& needle) {
    try {
      Tokenizer::from_json(bad, "bad.json");
      ADD_FAILURE() << "no error for " << needle;
    } catch (const trex::Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
    }
  };
  auto a = j;
  a["model"]["type"] = "WordPiece";
  expect_error(a, "WordPiece");
  auto b = j;
  b["normalizer"] = trex::Json{{"type", "NFKC"}};
  expect_error(b, "NFKC");
  auto c = j;
  c["model"]["merges"].push_back("zzzq qqqz");
  expect_error(c, "missing from the vocabulary");
  auto d = j;
  d["pre_tokenizer"] = trex::Json{{"type", "Whitespace"}};
  expect_error(d, "Whitespace");
  auto e = j;
  e["model"]["vocab"].erase("Ġ");
  expect_error(e, "byte");
  EXPECT_THROW(Tokenizer::load(temp_path("does_not_exist.json")), trex::Error);
}

TEST(Tokenizer, LoadsLegacyAndPairMergeFormats) {
  auto j = trex::Json::parse(small_tokenizer().to_json().dump());
  auto pairs = j;
  trex::Json merged = trex::Json::array();
  for (const auto& m : j["model"]["merges"]) {
    std::string s = m;
    merged.push_back({s.substr(0, s.find(' ')), s.substr(s.find(' ') + 1)});
  }
  pairs["model"]["merges"] = merged;
  Tokenizer a = Tokenizer::from_json(j), b = Tokenizer::from_json(pairs);
  std::string text = "Maximize obj: 3 x1 + 4 x2 运筹学 🙂";
  EXPECT_EQ(a.encode(text), b.encode(text));
}
