// Unicode regular expressions for pre-tokenizer patterns, on PCRE2 (UTF + UCP, JIT-compiled).
// tokenizer.json patterns are written for Oniguruma, which Hugging Face tokenizers (the reference) runs them
// with; translate_oniguruma() rewrites the classes whose meaning differs in PCRE2 (\s, \d, \w, \b, '.') so
// that matches agree with it. Subjects may hold invalid UTF-8
// (PCRE2_MATCH_INVALID_UTF): invalid bytes are never part of a match.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace trex::text {

// Oniguruma pattern (as tokenizers compiles it) -> equivalent PCRE2 pattern. Throws trex::Error on constructs it
// cannot translate faithfully (e.g. \S inside a character class).
std::string translate_oniguruma(std::string_view pattern);

class Regex {
 public:
  explicit Regex(std::string_view pattern);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // First match starting at or after `from`; false when there is none. Thread-safe.
  bool find(std::string_view subject, size_t from, size_t& match_begin, size_t& match_end) const;
  const std::string& pattern() const { return source_; }

 private:
  std::string source_, translated_;
  void* code_ = nullptr;  // pcre2_code_8*
};

}  // namespace trex::text
