// Shared helpers for the text module's tests: a small tokenizer trained once per process.
#pragma once
#include <filesystem>
#include <string>

#include "text/bpe_trainer.hpp"
#include "text/synthetic_corpus.hpp"
#include "text/tokenizer.hpp"
#include "util/atomic_file.hpp"

namespace trex::text::testing {

inline const Tokenizer& small_tokenizer() {
  static const Tokenizer tok = [] {
    BpeTrainerOptions opt;
    opt.vocab_size = 1500;
    opt.threads = 2;
    BpeTrainer trainer(opt);
    trainer.add_texts(synthetic_corpus(3, 300000));
    return trainer.train();
  }();
  return tok;
}

inline std::filesystem::path temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("trex_text_" + name);
}

inline std::filesystem::path write_temp(const std::string& name, const std::string& content) {
  auto p = temp_path(name);
  write_file_atomic(p, content);
  return p;
}

}  // namespace trex::text::testing
