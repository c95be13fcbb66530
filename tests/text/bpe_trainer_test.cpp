// BPE trainer: the incremental trainer learns exactly the merges of the naive reference, is
// deterministic across thread counts, and JSONL input errors name the line.
#include <gtest/gtest.h>

#include "text/bpe_trainer.hpp"
#include "text/synthetic_corpus.hpp"
#include "text_test_util.hpp"
#include "util/error.hpp"

using namespace trex::text;
using trex::text::testing::write_temp;

TEST(BpeTrainer, IncrementalMatchesReference) {
  auto docs = synthetic_corpus(11, 60000);
  BpeTrainerOptions opt;
  opt.vocab_size = 700;
  opt.max_token_bytes = 12;
  opt.threads = 2;
  BpeTrainer fast(opt), ref(opt);
  fast.add_texts(docs);
  ref.add_texts(docs);
  Tokenizer a = fast.train(), b = ref.train_reference();
  EXPECT_EQ(a.model().merges(), b.model().merges());
  EXPECT_EQ(a.fingerprint(), b.fingerprint());
  EXPECT_EQ(a.vocab_size(), 700u);
}

TEST(BpeTrainer, SameResultForAnyThreadCount) {
  auto docs = synthetic_corpus(12, 80000);
  std::string first;
  for (int threads : {1, 2, 3}) {
    BpeTrainerOptions opt;
    opt.vocab_size = 600;
    opt.threads = threads;
    BpeTrainer t(opt);
    t.add_texts(docs);
    std::string fp = t.train().fingerprint();
    if (first.empty()) first = fp;
    EXPECT_EQ(fp, first) << threads << " threads";
  }
}

TEST(BpeTrainer, SpecialTokensComeFirstAndAreNotLearnedFrom) {
  BpeTrainerOptions opt;
  opt.vocab_size = 400;
  BpeTrainer t(opt);
  std::vector<std::string> docs(50, std::string(tokens::kUser) + "hello " + tokens::kAssistant + "world");
  t.add_texts(docs);
  Tokenizer tok = t.train();
  for (size_t i = 0; i < opt.special_tokens.size(); ++i) EXPECT_EQ(tok.require_token(opt.special_tokens[i]), TokenId(i));
  // No merge reaches into the special-token bytes ("｜" never pairs with letters).
  for (auto& [a, b] : tok.model().merges()) EXPECT_EQ(tok.token_text(a).find("ï½"), std::string::npos);
}

TEST(BpeTrainer, JsonlErrorsNameTheLine) {
  BpeTrainerOptions opt;
  opt.vocab_size = 300;
  auto expect_line = [&](const std::string& content, const std::string& needle) {
    auto p = write_temp("trainer_bad.jsonl", content);
    BpeTrainer t(opt);
    try {
      t.add_jsonl(p);
      ADD_FAILURE() << "no error for " << needle;
    } catch (const trex::Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_line("{\"text\":\"a\"}\n{\"text\":\"b\"}\n{bad json\n", "trainer_bad.jsonl:3");
  expect_line("{\"text\":\"a\"}\n\n{\"txt\":\"b\"}\n", "trainer_bad.jsonl:3");
  expect_line("{\"text\":1}\n", "trainer_bad.jsonl:1");
  expect_line("{\"text\":\"ok\"}\n{\"text\":\"\xC3\x28\"}\n", "trainer_bad.jsonl:2");
}

TEST(BpeTrainer, RejectsTooSmallVocabulary) {
  BpeTrainerOptions opt;
  opt.vocab_size = 100;
  EXPECT_THROW(BpeTrainer t(opt), trex::Error);
}
