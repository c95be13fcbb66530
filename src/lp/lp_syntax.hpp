// Character classes and keyword phrases of the LP-file dialect, shared by the reader and the writer
// so that the writer only emits names the reader reads back as one name (internal header).
#pragma once
#include <cstddef>
#include <string_view>

namespace trex::lp::syntax {

// Characters that end a name: operators, separators and the comment start. '[' and ']' are handled
// separately (allowed inside a name, never at its start; a ']' only closes a '[' of the same name).
inline bool is_delimiter(unsigned char c) {
  switch (c) {
    case '+': case '-': case '*': case '^': case '/': case '<': case '>': case '=': case ':': case '\\':
      return true;
    default:
      return false;
  }
}
inline bool is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }
inline bool is_control(unsigned char c) { return (c < 32 && !is_space(c)) || c == 127; }
inline bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

// A name may not start with a digit, '.', '(', ')', ',', '[' or ']' (CPLEX and Gurobi rules).
inline bool is_name_start(unsigned char c) {
  if (is_space(c) || is_control(c) || is_delimiter(c) || is_digit(c)) return false;
  return c != '.' && c != '(' && c != ')' && c != ',' && c != '[' && c != ']';
}
// Inside a name ('[' / ']' excluded: the scanner tracks their nesting).
inline bool is_name_char(unsigned char c) {
  return !(is_space(c) || is_control(c) || is_delimiter(c) || c == '[' || c == ']');
}

inline char lower(char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; }
inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

// Length of the name scanned from s[0] (0 when s does not start with a name).
inline size_t scan_name(std::string_view s) {
  if (s.empty() || !is_name_start(static_cast<unsigned char>(s[0]))) return 0;
  size_t i = 1;
  int depth = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '[') {
      ++depth;
    } else if (c == ']') {
      if (depth == 0) break;
      --depth;
    } else if (!is_name_char(c)) {
      break;
    }
    ++i;
  }
  return i;
}

// Words that are keywords somewhere in the format; the writer refuses them as variable names
// because a variable at the start of a line (Bounds, Generals) would be read as a section keyword,
// and the reader refuses inf/infinity/free as variables inside expressions.
inline bool is_reserved_word(std::string_view w) {
  static constexpr std::string_view words[] = {
      "min", "max", "minimize", "maximize", "minimum", "maximum", "st", "s.t.", "st.", "bounds", "bound",
      "binaries", "binary", "bin", "generals", "general", "gen", "integers", "integer", "int", "semi",
      "semis", "sos", "end", "free", "inf", "infinity"};
  for (auto k : words)
    if (iequals(w, k)) return true;
  return false;
}
inline bool is_infinity_word(std::string_view w) { return iequals(w, "inf") || iequals(w, "infinity"); }

}  // namespace trex::lp::syntax
