// PCRE2 wrapper and the Oniguruma (Hugging Face tokenizers) -> PCRE2 pattern translation.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "text/regex.hpp"

#include <pcre2.h>

#include "util/error.hpp"

namespace trex::text {
namespace {

// The classes as Oniguruma reads them in Hugging Face tokenizers (measured against tokenizers 0.23.3:
// tests/text/pre_tokenizer_test.cpp). \s: Unicode White_Space (U+0085 in, U+FEFF and U+180E out — ECMAScript's
// \s, which trex followed before, is the other way round); \d: decimal numbers (Nd, not only 0-9); \w: letters,
// letter numbers, marks, decimal numbers, connector punctuation and the joiners (Oniguruma's Word; its
// Alphabetic also holds a few symbols such as circled letters, which this class does not).
constexpr const char* kSpaceClass =
    "\\t\\n\\x{0B}\\f\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";
constexpr const char* kWordClass = "\\p{L}\\p{Nl}\\p{M}\\p{Nd}\\p{Pc}\\x{200C}\\x{200D}";
constexpr const char* kDigitClass = "\\p{Nd}";

[[noreturn]] void bad_pattern(std::string_view pattern, const std::string& why) {
  throw Error("regex '" + std::string(pattern) + "': " + why);
}

// Per-thread match data and JIT stack: pcre2 match data must not be shared between threads.
struct MatchState {
  pcre2_match_data* data = nullptr;
  pcre2_match_context* context = nullptr;
  pcre2_jit_stack* stack = nullptr;
  MatchState() {
    data = pcre2_match_data_create(1, nullptr);
    context = pcre2_match_context_create(nullptr);
    stack = pcre2_jit_stack_create(64 * 1024, 16 * 1024 * 1024, nullptr);
    pcre2_jit_stack_assign(context, nullptr, stack);
  }
  ~MatchState() {
    pcre2_jit_stack_free(stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(data);
  }
};

MatchState& match_state() {
  thread_local MatchState state;
  return state;
}

}  // namespace

std::string translate_oniguruma(std::string_view p) {
  std::string out;
  out.reserve(p.size() * 2);
  bool in_class = false;
  size_t i = 0;
  while (i < p.size()) {
    char c = p[i];
    if (c == '\\') {
      if (i + 1 >= p.size()) bad_pattern(p, "trailing backslash");
      char e = p[i + 1];
      i += 2;
      switch (e) {
        case 's':
          out += in_class ? std::string(kSpaceClass) : "[" + std::string(kSpaceClass) + "]";
          continue;
        case 'd':
          out += in_class ? std::string(kDigitClass) : "[" + std::string(kDigitClass) + "]";
          continue;
        case 'w':
          out += in_class ? std::string(kWordClass) : "[" + std::string(kWordClass) + "]";
          continue;
        case 'S':
        case 'D':
        case 'W': {
          if (in_class) bad_pattern(p, std::string("\\") + e + " inside a character class is not supported");
          const char* cls = e == 'S' ? kSpaceClass : e == 'D' ? kDigitClass : kWordClass;
          out += "[^" + std::string(cls) + "]";
          continue;
        }
        case 'b':
        case 'B':
          if (in_class) {  // [\b] is backspace
            out += "\\x{08}";
            continue;
          }
          {  // a boundary between a word character (kWordClass) and anything else
            const std::string w = "[" + std::string(kWordClass) + "]";
            out += e == 'b' ? "(?:(?<=" + w + ")(?!" + w + ")|(?<!" + w + ")(?=" + w + "))"
                            : "(?:(?<=" + w + ")(?=" + w + ")|(?<!" + w + ")(?!" + w + "))";
          }
          continue;
        case 'u': {
          size_t start = i, end = i;
          if (i < p.size() && p[i] == '{') {
            end = p.find('}', i);
            if (end == std::string_view::npos) bad_pattern(p, "unterminated \\u{...}");
            out += "\\x{" + std::string(p.substr(i + 1, end - i - 1)) + "}";
            i = end + 1;
          } else {
            if (i + 4 > p.size()) bad_pattern(p, "short \\u escape");
            out += "\\x{" + std::string(p.substr(start, 4)) + "}";
            i += 4;
          }
          continue;
        }
        default:
          out.push_back('\\');
          out.push_back(e);
          // copy the rest of a multi-byte character escaped as a literal
          while (i < p.size() && (static_cast<unsigned char>(p[i]) & 0xC0) == 0x80) out.push_back(p[i++]);
          continue;
      }
    }
    if (!in_class && c == '[') {
      if (p.substr(i, 2) == "[]") {
        out += "(?!)";
        i += 2;
        continue;
      }
      if (p.substr(i, 3) == "[^]") {
        out += "(?s:.)";
        i += 3;
        continue;
      }
      in_class = true;
      out.push_back('[');
      ++i;
      if (i < p.size() && p[i] == '^') out.push_back(p[i++]);
      continue;
    }
    if (in_class && c == '[') {  // a literal '[' inside a class (no real tokenizer nests classes); PCRE2 would read [: as POSIX
      out += "\\[";
      ++i;
      continue;
    }
    if (in_class && c == ']') {
      in_class = false;
      out.push_back(']');
      ++i;
      continue;
    }
    if (!in_class && c == '.') {
      out += "[^\\n\\r\\x{2028}\\x{2029}]";
      ++i;
      continue;
    }
    out.push_back(c);
    ++i;
  }
  if (in_class) bad_pattern(p, "unterminated character class");
  return out;
}

Regex::Regex(std::string_view pattern) : source_(pattern), translated_(translate_oniguruma(pattern)) {
  int err = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated_.data()), translated_.size(),
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &err, &offset, nullptr);
  if (!code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    bad_pattern(pattern, "does not compile (as '" + translated_ + "' at offset " + std::to_string(offset) +
                             "): " + reinterpret_cast<const char*>(msg));
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter when JIT is unavailable
  code_ = code;
}

Regex::~Regex() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

bool Regex::find(std::string_view subject, size_t from, size_t& begin, size_t& end) const {
  MatchState& st = match_state();
  int rc = pcre2_match(static_cast<pcre2_code*>(code_), reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(),
                       from, 0, st.data, st.context);
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  if (rc < 0) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(rc, msg, sizeof msg);
    throw Error("regex '" + source_ + "': match failed: " + reinterpret_cast<const char*>(msg));
  }
  PCRE2_SIZE* ov = pcre2_get_ovector_pointer(st.data);
  begin = ov[0];
  end = ov[1];
  return true;
}

}  // namespace trex::text
