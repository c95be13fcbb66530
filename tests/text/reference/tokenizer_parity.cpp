// Exact id and decode parity with Hugging Face tokenizers, over the committed samples and 10,000 generated texts:
// on DeepSeek-V3's own tokenizer.json and GPT-2's (read in place from TREX_TOKENIZERS, ../shared/tokenizers), on
// one trained by `trex tokenizer train` (which HF loads), and on one trained by HF's trainer (which trex loads).
// The expected files are written at test time into TREX_TOKENIZER_REFERENCE_DIR by the ctest fixture
// text_tokenizer_reference (tests/reference/tokenizer/setup.sh + make_reference.py, in the reference environment).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "text/tokenizer.hpp"
#include "util/jsonl.hpp"

namespace fs = std::filesystem;
using trex::text::TokenId;
using trex::text::Tokenizer;

namespace {

fs::path reference_dir() {
  const char* d = std::getenv("TREX_TOKENIZER_REFERENCE_DIR");
  return d ? fs::path(d) : fs::path();
}
fs::path real_tokenizers_dir() {  // TREX_TOKENIZERS, else CMake's TREX_TOKENIZERS at build time
  const char* d = std::getenv("TREX_TOKENIZERS");
  return d ? fs::path(d) : fs::path(TREX_TOKENIZERS_DEFAULT);
}

constexpr int kReferencePathTexts = 200;  // the slow readable encoder checks the first texts only

void check_parity(const fs::path& tokenizer_json, const fs::path& expected) {
  ASSERT_FALSE(reference_dir().empty()) << "TREX_TOKENIZER_REFERENCE_DIR is not set (run through ctest)";
  ASSERT_TRUE(fs::exists(tokenizer_json)) << tokenizer_json << " is missing: the fixture text_tokenizer_reference "
                                          << "(setup.sh + make_reference.py) did not run or failed";
  ASSERT_TRUE(fs::exists(expected)) << expected << " is missing: the reference fixture failed";
  Tokenizer tok = Tokenizer::load(tokenizer_json);
  trex::JsonlReader reader(expected);
  int n = 0, mismatches = 0, decode_mismatches = 0;
  while (auto rec = reader.next()) {
    std::string text = (*rec)["text"];
    std::vector<TokenId> want = (*rec)["ids"];
    std::string want_decoded = (*rec)["decoded"];
    std::vector<TokenId> got = tok.encode(text);
    if (got != want && ++mismatches <= 5) {
      std::string g, w;
      for (auto id : got) g += std::to_string(id) + " ";
      for (auto id : want) w += std::to_string(id) + " ";
      ADD_FAILURE() << expected << ":" << reader.line() << ": ids differ for " << nlohmann::json(text).dump()
                    << "\n  trex:         " << g << "\n  HF tokenizers: " << w;
    }
    if (tok.decode(want) != want_decoded && ++decode_mismatches <= 5)
      ADD_FAILURE() << expected << ":" << reader.line() << ": decode differs from HF's for "
                    << nlohmann::json(text).dump() << "\n  trex:          " << nlohmann::json(tok.decode(want)).dump()
                    << "\n  HF tokenizers: " << nlohmann::json(want_decoded).dump();
    // trex's readable reference encoder (the oracle of its fast path) on the committed samples
    if (n < kReferencePathTexts) {
      EXPECT_EQ(tok.encode_reference(text), want) << "reference path, line " << reader.line();
    }
    ++n;
  }
  EXPECT_EQ(mismatches, 0) << mismatches << " of " << n << " texts differ in ids";
  EXPECT_EQ(decode_mismatches, 0) << decode_mismatches << " of " << n << " texts differ in decode";
  EXPECT_GE(n, 10000) << "too few texts in " << expected;
}

}  // namespace

TEST(TokenizerParity, DeepSeekV3TokenizerJson) {
  check_parity(real_tokenizers_dir() / "deepseek_v3.tokenizer.json", reference_dir() / "deepseek_v3.expected.jsonl");
}

TEST(TokenizerParity, Gpt2TokenizerJson) {
  check_parity(real_tokenizers_dir() / "gpt2.tokenizer.json", reference_dir() / "gpt2.expected.jsonl");
}

// trex -> HF: a tokenizer.json written by `trex tokenizer train`, loaded by HF tokenizers.
TEST(TokenizerParity, OurTrainedTokenizerJson) {
  check_parity(reference_dir() / "ours.tokenizer.json", reference_dir() / "ours.expected.jsonl");
}

// HF -> trex: a tokenizer.json written by HF's BpeTrainer (Tokenizer.save), loaded by trex.
TEST(TokenizerParity, HfTrainedTokenizerJson) {
  check_parity(reference_dir() / "hf_trained.tokenizer.json", reference_dir() / "hf_trained.expected.jsonl");
}

TEST(TokenizerParity, DeepSeekV3SaveLoadRoundTrip) {
  fs::path src = real_tokenizers_dir() / "deepseek_v3.tokenizer.json";
  ASSERT_TRUE(fs::exists(src)) << src << " is missing: the reference fixture failed";
  Tokenizer a = Tokenizer::load(src);
  fs::path copy = fs::temp_directory_path() / "trex_parity_resaved.tokenizer.json";
  a.save(copy);
  Tokenizer b = Tokenizer::load(copy);
  EXPECT_EQ(a.fingerprint(), b.fingerprint());
  EXPECT_EQ(a.vocab_size(), b.vocab_size());
  EXPECT_EQ(a.vocab_size(), 128815u);
  EXPECT_EQ(a.require_token("<｜begin▁of▁sentence｜>"), 0);
  EXPECT_EQ(a.require_token("<｜end▁of▁sentence｜>"), 1);
  EXPECT_EQ(a.require_token("<｜User｜>"), 128803);
  EXPECT_EQ(a.require_token("<｜Assistant｜>"), 128804);
  trex::JsonlReader reader(reference_dir() / "deepseek_v3.expected.jsonl");
  while (auto rec = reader.next()) {
    std::string text = (*rec)["text"];
    EXPECT_EQ(a.encode(text), b.encode(text)) << "line " << reader.line();
  }
  fs::remove(copy);
}
