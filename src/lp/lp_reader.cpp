// LP-file reader (CPLEX/Gurobi dialect): one pass tokenizer over the whole buffer, then a
// recursive-descent parser building the Model IR. Every rejection is a trex::Error naming
// file:line:column of the offending token. The accepted dialect and every semantic decision are
// documented in docs/lp-format.md.
#include <charconv>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "lp/lp_format.hpp"
#include "lp/lp_syntax.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"

namespace trex::lp {
namespace {

using namespace syntax;

enum class Tok : uint8_t {
  Name, Number, Plus, Minus, Star, Caret, Slash, Colon, DColon, LBrack, RBrack, LE, GE, EQ, Arrow, Keyword, Eof
};
enum class Kw : uint8_t { None, Minimize, Maximize, SubjectTo, Bounds, Binaries, Generals, Semis, Sos, End };

struct Token {
  Tok kind = Tok::Eof;
  Kw kw = Kw::None;
  bool line_start = false;  // first token on its line
  int32_t line = 0, col = 0;
  uint32_t off = 0, len = 0;
  double num = 0.0;
};

// Section keyword phrases, matched case-insensitively at the first token of a line; a space in a
// phrase matches one or more blanks. Phrases of unsupported sections are refused.
struct Phrase {
  std::string_view text;
  Kw kw;
  const char* refuse;  // non-null: unsupported section, this is the message
};
constexpr Phrase kPhrases[] = {
    {"minimize", Kw::Minimize, nullptr},
    {"minimum", Kw::Minimize, nullptr},
    {"min", Kw::Minimize, nullptr},
    {"maximize", Kw::Maximize, nullptr},
    {"maximum", Kw::Maximize, nullptr},
    {"max", Kw::Maximize, nullptr},
    {"subject to", Kw::SubjectTo, nullptr},
    {"such that", Kw::SubjectTo, nullptr},
    {"s.t.", Kw::SubjectTo, nullptr},
    {"st.", Kw::SubjectTo, nullptr},
    {"st", Kw::SubjectTo, nullptr},
    {"bounds", Kw::Bounds, nullptr},
    {"bound", Kw::Bounds, nullptr},
    {"binaries", Kw::Binaries, nullptr},
    {"binary", Kw::Binaries, nullptr},
    {"bin", Kw::Binaries, nullptr},
    {"general constraints", Kw::None, "General Constraints sections are not supported"},
    {"general constraint", Kw::None, "General Constraints sections are not supported"},
    {"generals", Kw::Generals, nullptr},
    {"general", Kw::Generals, nullptr},
    {"gen", Kw::Generals, nullptr},
    {"integers", Kw::Generals, nullptr},
    {"integer", Kw::Generals, nullptr},
    {"int", Kw::Generals, nullptr},
    {"semi-continuous", Kw::Semis, nullptr},
    {"semi continuous", Kw::Semis, nullptr},
    {"semis", Kw::Semis, nullptr},
    {"semi", Kw::Semis, nullptr},
    {"sos", Kw::Sos, nullptr},
    {"end", Kw::End, nullptr},
    {"lazy constraints", Kw::None, "Lazy Constraints sections are not supported"},
    {"user cuts", Kw::None, "User Cuts sections are not supported"},
    {"pwlobj", Kw::None, "piecewise-linear objectives (PWLObj) are not supported"},
    {"genconstrs", Kw::None, "General Constraints sections are not supported"},
};

bool is_blank(char c) { return c == ' ' || c == '\t'; }
bool ends_word(std::string_view s, size_t i) {
  return i >= s.size() || is_space(static_cast<unsigned char>(s[i])) || s[i] == '\\';
}

// Length of the keyword phrase at text[i] (0 when none).
size_t match_phrase(std::string_view text, size_t i, std::string_view phrase) {
  size_t j = i;
  for (size_t k = 0; k < phrase.size(); ++k) {
    if (phrase[k] == ' ') {
      if (j >= text.size() || !is_blank(text[j])) return 0;
      while (j < text.size() && is_blank(text[j])) ++j;
      continue;
    }
    if (j >= text.size() || lower(text[j]) != phrase[k]) return 0;
    ++j;
  }
  return ends_word(text, j) ? j - i : 0;
}

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  std::vector<Token> run(std::string& first_comment) {
    std::vector<Token> toks;
    toks.reserve(text_.size() / 8 + 16);
    size_t i = 0;
    const size_t n = text_.size();
    bool at_line_start = true;
    while (true) {
      // Skip blanks, newlines and comments.
      while (i < n) {
        char c = text_[i];
        if (c == '\n') {
          ++i;
          ++line_;
          line_off_ = i;
          at_line_start = true;
        } else if (is_space(static_cast<unsigned char>(c))) {
          ++i;
        } else if (c == '\\') {
          size_t e = text_.find('\n', i);
          if (e == std::string_view::npos) e = n;
          if (line_ == 1 && i == 0) first_comment = std::string(text_.substr(1, e - 1));
          i = e;
        } else {
          break;
        }
      }
      Token t;
      t.line = int32_t(line_);
      t.col = int32_t(i - line_off_ + 1);
      t.off = uint32_t(i);
      t.line_start = at_line_start;
      if (i >= n) {
        t.kind = Tok::Eof;
        toks.push_back(t);
        return toks;
      }
      at_line_start = false;
      if (t.line_start) {
        size_t len = keyword_at(i, t);
        if (len > 0) {
          t.kw = kw_;
          t.kind = Tok::Keyword;
          t.len = uint32_t(len);
          i += len;
          toks.push_back(t);
          continue;
        }
      }
      const auto c = static_cast<unsigned char>(text_[i]);
      size_t len = 1;
      switch (c) {
        case '+': t.kind = Tok::Plus; break;
        case '*': t.kind = Tok::Star; break;
        case '^': t.kind = Tok::Caret; break;
        case '/': t.kind = Tok::Slash; break;
        case '[': t.kind = Tok::LBrack; break;
        case ']': t.kind = Tok::RBrack; break;
        case '-':
          if (i + 1 < n && text_[i + 1] == '>') {
            t.kind = Tok::Arrow;
            len = 2;
          } else {
            t.kind = Tok::Minus;
          }
          break;
        case ':':
          if (i + 1 < n && text_[i + 1] == ':') {
            t.kind = Tok::DColon;
            len = 2;
          } else {
            t.kind = Tok::Colon;
          }
          break;
        case '<':
          t.kind = Tok::LE;
          if (i + 1 < n && text_[i + 1] == '=') len = 2;
          break;
        case '>':
          t.kind = Tok::GE;
          if (i + 1 < n && text_[i + 1] == '=') len = 2;
          break;
        case '=':
          if (i + 1 < n && text_[i + 1] == '<') {
            t.kind = Tok::LE;
            len = 2;
          } else if (i + 1 < n && text_[i + 1] == '>') {
            t.kind = Tok::GE;
            len = 2;
          } else if (i + 1 < n && text_[i + 1] == '=') {
            fail(t, "'==' is not an LP-file operator; use '='");
          } else {
            t.kind = Tok::EQ;
          }
          break;
        default:
          if (is_digit(c) || (c == '.' && i + 1 < n && is_digit(static_cast<unsigned char>(text_[i + 1])))) {
            len = scan_number(i, t);
          } else if (is_name_start(c)) {
            t.kind = Tok::Name;
            len = scan_name(text_.substr(i));
          } else if (is_control(c)) {
            fail(t, "unexpected control character (byte " + std::to_string(int(c)) + ")");
          } else {
            fail(t, std::string("unexpected character '") + char(c) + "'");
          }
      }
      t.len = uint32_t(len);
      i += len;
      toks.push_back(t);
    }
  }

 private:
  [[noreturn]] void fail(const Token& t, const std::string& msg) const {
    fail_at(SourceLocation{source_, t.line, t.col}, msg);
  }

  size_t keyword_at(size_t i, const Token& t) {
    for (const auto& p : kPhrases) {
      size_t len = match_phrase(text_, i, p.text);
      if (len == 0) continue;
      if (p.refuse) fail(t, std::string(p.refuse) + " (only linear/quadratic rows, bounds, integrality, semi-continuous and SOS are)");
      if (p.kw == Kw::Minimize || p.kw == Kw::Maximize) {
        size_t j = i + len;
        while (j < text_.size() && is_blank(text_[j])) ++j;
        if (match_phrase(text_, j, "multi-objectives") > 0) fail(t, "multi-objective models are not supported");
      }
      if (p.kw != Kw::Minimize && p.kw != Kw::Maximize && p.kw != Kw::SubjectTo) {
        // "bin z" in a Generals list could be a variable named bin or a section switch: refuse.
        size_t j = i + len;
        while (j < text_.size() && (is_blank(text_[j]) || text_[j] == '\r')) ++j;
        if (j < text_.size() && text_[j] != '\n' && text_[j] != '\\')
          fail(t, "'" + std::string(text_.substr(i, len)) +
                      "' at the start of a line is a section keyword and must stand alone on its line "
                      "(a variable cannot be named like a keyword there)");
      }
      kw_ = p.kw;
      return len;
    }
    return 0;
  }

  size_t scan_number(size_t i, Token& t) const {
    t.kind = Tok::Number;
    const char* b = text_.data() + i;
    const char* e = text_.data() + text_.size();
    auto [ptr, ec] = std::from_chars(b, e, t.num, std::chars_format::general);
    if (ec == std::errc::result_out_of_range) fail(t, "number '" + std::string(b, size_t(ptr - b)) + "' is out of the range of a double");
    if (ec != std::errc()) fail(t, "malformed number");
    if (ptr < e) {
      auto c = static_cast<unsigned char>(*ptr);
      if (is_name_char(c) || c == '[' || c == ']')
        fail(t, "number '" + std::string(b, size_t(ptr - b)) + "' is immediately followed by '" + char(c) +
                    "': separate a coefficient from its variable with a space");
    }
    return size_t(ptr - b);
  }

  std::string_view text_;
  const std::string& source_;
  long line_ = 1;
  size_t line_off_ = 0;
  Kw kw_ = Kw::None;
};

// A parsed linear/quadratic expression with duplicates merged (first position kept).
struct Expr {
  std::vector<Term> terms;
  std::vector<QuadTerm> quad;
  double constant = 0.0;
  bool has_constant = false;
  bool empty() const { return terms.empty() && quad.empty() && !has_constant; }
  void clear() {
    terms.clear();
    quad.clear();
    constant = 0.0;
    has_constant = false;
  }
};

class Parser {
 public:
  Parser(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  Model run() {
    std::string first_comment;
    toks_ = Lexer(text_, source_).run(first_comment);
    model_.name = model_name_from_comment(first_comment);
    parse_file();
    finish();
    return std::move(model_);
  }

 private:
  // ---- helpers ----
  const Token& peek(size_t k = 0) const {
    size_t i = p_ + k;
    return toks_[i < toks_.size() ? i : toks_.size() - 1];
  }
  const Token& next() {
    const Token& t = toks_[p_];
    if (t.kind != Tok::Eof) ++p_;
    return t;
  }
  std::string_view text(const Token& t) const { return text_.substr(t.off, t.len); }
  [[noreturn]] void fail(const Token& t, const std::string& msg) const {
    fail_at(SourceLocation{source_, t.line, t.col}, msg);
  }
  std::string show(const Token& t) const {
    if (t.kind == Tok::Eof) return "end of file";
    std::string s(text(t).substr(0, 40));
    return "'" + s + "'";
  }
  static bool is_op(const Token& t) { return t.kind == Tok::LE || t.kind == Tok::GE || t.kind == Tok::EQ; }
  static bool section_end(const Token& t) { return t.kind == Tok::Keyword || t.kind == Tok::Eof; }
  static RowSense sense_of(const Token& t) {
    return t.kind == Tok::LE ? RowSense::LE : t.kind == Tok::GE ? RowSense::GE : RowSense::EQ;
  }

  static std::string model_name_from_comment(const std::string& c) {
    // Gurobi writes "\ Model NAME" as the first line, CPLEX "\Problem name: NAME".
    std::string_view s(c);
    while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
    while (!s.empty() && (is_blank(s.back()) || s.back() == '\r')) s.remove_suffix(1);
    size_t prefix = s == "Model" ? 5 : s.substr(0, 6) == "Model " ? 6 : s.substr(0, 13) == "Problem name:" ? 13 : 0;
    if (prefix == 0) return "";
    s.remove_prefix(prefix);
    while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);  // the writer refuses outer blanks
    return std::string(s);
  }

  int var_index(const Token& t) {
    std::string_view name = text(t);
    auto it = var_ids_.find(name);
    if (it != var_ids_.end()) return it->second;
    int idx = int(model_.vars.size());
    Variable v;
    v.name = std::string(name);
    model_.vars.push_back(std::move(v));
    var_ids_.emplace(name, idx);
    slot_.push_back(-1);
    flags_.push_back(0);
    return idx;
  }
  int expr_var(const Token& t) {
    std::string_view w = text(t);
    if (iequals(w, "inf") || iequals(w, "infinity") || iequals(w, "free"))
      fail(t, "'" + std::string(w) + "' is a keyword and cannot be used as a variable name here");
    return var_index(t);
  }

  // ---- expressions ----
  void begin_expr(Expr& e) {
    for (const auto& term : e.terms) slot_[size_t(term.var)] = -1;
    e.clear();
    quad_slot_.clear();
  }
  void add_linear(Expr& e, int var, double coef) {
    int& s = slot_[size_t(var)];
    if (s >= 0) {
      e.terms[size_t(s)].coef += coef;
    } else {
      s = int(e.terms.size());
      e.terms.push_back({var, coef});
    }
  }
  void add_quad(Expr& e, int v1, int v2, double coef) {
    uint64_t key = v1 <= v2 ? (uint64_t(uint32_t(v1)) << 32 | uint32_t(v2)) : (uint64_t(uint32_t(v2)) << 32 | uint32_t(v1));
    auto [it, fresh] = quad_slot_.emplace(key, int(e.quad.size()));
    if (fresh)
      e.quad.push_back({v1, v2, coef});
    else
      e.quad[size_t(it->second)].coef += coef;
  }
  void add_constant(Expr& e, double v) {
    e.constant = e.has_constant ? e.constant + v : v;
    e.has_constant = true;
  }

  // Reads terms until a token that cannot continue the expression (operator, keyword, end...).
  void parse_expr(Expr& e) {
    bool first = true;
    while (true) {
      const Token& t = peek();
      bool neg = false;
      if (t.kind == Tok::Plus || t.kind == Tok::Minus) {
        neg = t.kind == Tok::Minus;
        next();
        const Token& u = peek();
        if (u.kind == Tok::Plus || u.kind == Tok::Minus) fail(u, "two signs in a row");
        if (u.kind != Tok::Number && u.kind != Tok::Name && u.kind != Tok::LBrack)
          fail(u, "expected a term after '" + std::string(neg ? "-" : "+") + "', found " + show(u));
      } else if (t.kind == Tok::Number || t.kind == Tok::Name || t.kind == Tok::LBrack) {
        if (!first) {
          if (t.kind == Tok::Name && peek(1).kind == Tok::Colon)
            fail(t, "expected <=, >= or = before the next constraint " + show(t));
          fail(t, "expected '+' or '-' before " + show(t));
        }
      } else {
        if (t.kind == Tok::Star || t.kind == Tok::Caret)
          fail(t, "quadratic terms must be written inside [ ]");
        return;
      }
      first = false;
      const Token& u = next();
      if (u.kind == Tok::LBrack) {
        parse_quad(e, neg, u);
      } else if (u.kind == Tok::Number) {
        double coef = neg ? -u.num : u.num;
        const Token& v = peek();
        if (v.kind == Tok::Name && v.line == u.line) {
          next();
          add_linear(e, expr_var(v), coef);
          check_not_quadratic_outside();
        } else if (v.kind == Tok::Star || v.kind == Tok::LBrack) {
          fail(v, v.kind == Tok::Star ? "'*' between a coefficient and a variable is only allowed inside [ ]"
                                      : "a coefficient before '[' is not supported");
        } else {
          add_constant(e, coef);
        }
      } else {  // Name
        add_linear(e, expr_var(u), neg ? -1.0 : 1.0);
        check_not_quadratic_outside();
      }
    }
  }
  void check_not_quadratic_outside() {
    const Token& t = peek();
    if (t.kind == Tok::Star || t.kind == Tok::Caret) fail(t, "quadratic terms must be written inside [ ]");
  }

  void parse_quad(Expr& e, bool neg, const Token& open) {
    std::vector<QuadTerm>& buf = quad_buf_;
    buf.clear();
    bool first = true;
    while (true) {
      const Token& t = peek();
      if (t.kind == Tok::RBrack) {
        if (first) fail(t, "empty [ ]");
        next();
        break;
      }
      if (section_end(t)) fail(open, "'[' is not closed by ']'");
      bool qneg = neg;
      if (t.kind == Tok::Plus || t.kind == Tok::Minus) {
        if (t.kind == Tok::Minus) qneg = !qneg;
        next();
      } else if (!first) {
        fail(t, "expected '+', '-' or ']' inside [ ], found " + show(t));
      }
      first = false;
      double coef = 1.0;
      const Token* c = &peek();
      if (c->kind == Tok::Number) {
        coef = c->num;
        next();
        c = &peek();
      }
      if (c->kind != Tok::Name) fail(*c, "expected a variable inside [ ], found " + show(*c));
      int v1 = expr_var(next());
      int v2;
      const Token& op = peek();
      if (op.kind == Tok::Caret) {
        next();
        const Token& ex = peek();
        if (ex.kind != Tok::Number || ex.num != 2.0) fail(ex, "only '^ 2' is supported as an exponent");
        next();
        v2 = v1;
      } else if (op.kind == Tok::Star) {
        next();
        const Token& w = peek();
        if (w.kind != Tok::Name) fail(w, "expected a variable after '*', found " + show(w));
        v2 = expr_var(next());
        if (peek().kind == Tok::Star || peek().kind == Tok::Caret) fail(peek(), "only products of two variables are supported");
      } else {
        fail(op, "linear term inside [ ]: quadratic terms need 'x * y' or 'x ^ 2'");
      }
      buf.push_back({v1, v2, qneg ? -coef : coef});
    }
    bool half = false;
    if (peek().kind == Tok::Slash) {
      next();
      const Token& d = peek();
      if (d.kind != Tok::Number || d.num != 2.0) fail(d, "only '/ 2' may follow ']'");
      next();
      half = true;
    }
    for (const auto& q : buf) add_quad(e, q.var1, q.var2, half ? q.coef / 2 : q.coef);
  }

  // [sign] number, or [sign] inf/infinity when allow_inf.
  double parse_value(bool allow_inf, const char* what) {
    bool neg = false;
    const Token* t = &peek();
    if (t->kind == Tok::Plus || t->kind == Tok::Minus) {
      neg = t->kind == Tok::Minus;
      next();
      t = &peek();
    }
    if (t->kind == Tok::Number) {
      next();
      return neg ? -t->num : t->num;
    }
    if (t->kind == Tok::Name && is_infinity_word(text(*t))) {
      if (!allow_inf) fail(*t, std::string("infinite ") + what + " is not supported");
      next();
      return neg ? -kInf : kInf;
    }
    fail(*t, std::string("expected a number for the ") + what + ", found " + show(*t));
  }

  // The token after a complete row or bound must start a new line.
  void expect_line_end(const Token& last, const char* what) {
    const Token& t = peek();
    if (t.kind == Tok::Arrow) fail(t, "indicator constraints ('->') are not supported");
    if (t.kind != Tok::Eof && !t.line_start)
      fail(t, std::string("unexpected ") + show(t) + " after the " + what + " (each one starts on a new line)");
    (void)last;
  }

  // ---- sections ----
  void parse_file() {
    const Token& first = peek();
    if (first.kind != Tok::Keyword || (first.kw != Kw::Minimize && first.kw != Kw::Maximize)) {
      if (first.kind == Tok::Eof) fail(first, "empty LP file: expected Minimize or Maximize");
      fail(first, "expected Minimize or Maximize at the start of the LP file, found " + show(first));
    }
    bool seen_constraints = false, seen_later = false;
    while (true) {
      const Token& t = peek();
      if (t.kind == Tok::Eof) fail(t, "missing End (the file is truncated?)");
      if (t.kind != Tok::Keyword) fail(t, "unexpected " + show(t));
      next();
      switch (t.kw) {
        case Kw::Minimize:
        case Kw::Maximize:
          if (&t != &toks_[0]) fail(t, "a second objective section (multiple objectives are not supported)");
          model_.objective.sense = t.kw == Kw::Minimize ? ObjSense::Minimize : ObjSense::Maximize;
          parse_objective();
          break;
        case Kw::SubjectTo:
          if (seen_later) fail(t, "Subject To must come before Bounds, Generals, Binaries, Semi-continuous and SOS");
          if (seen_constraints) fail(t, "a second Subject To section");
          seen_constraints = true;
          parse_constraints();
          break;
        case Kw::Bounds:
          seen_later = true;
          parse_bounds();
          break;
        case Kw::Binaries:
          seen_later = true;
          parse_type_list(kBin, "Binaries");
          break;
        case Kw::Generals:
          seen_later = true;
          parse_type_list(kGen, "Generals");
          break;
        case Kw::Semis:
          seen_later = true;
          parse_type_list(kSemi, "Semi-continuous");
          break;
        case Kw::Sos:
          seen_later = true;
          parse_sos();
          break;
        case Kw::End: {
          const Token& after = peek();
          if (after.kind != Tok::Eof) fail(after, "unexpected " + show(after) + " after End");
          return;
        }
        case Kw::None:
          fail(t, "unexpected keyword");
      }
    }
  }

  void parse_objective() {
    Objective& obj = model_.objective;
    if (peek().kind == Tok::Name && peek(1).kind == Tok::Colon) {
      obj.name = std::string(text(next()));
      next();
    }
    begin_expr(expr_);
    parse_expr(expr_);
    const Token& t = peek();
    if (!section_end(t)) {
      if (is_op(t)) fail(t, "the objective cannot contain " + show(t));
      fail(t, "unexpected " + show(t) + " in the objective");
    }
    obj.terms = expr_.terms;
    obj.quad = expr_.quad;
    if (expr_.has_constant) obj.constant = expr_.constant;
  }

  void parse_constraints() {
    while (!section_end(peek())) {
      const Token& start = peek();
      Row row;
      bool named = false;
      if (start.kind == Tok::Name && peek(1).kind == Tok::Colon) {
        row.name = std::string(text(next()));
        next();
        named = true;
        row_names_.insert(row.name);  // duplicates are allowed: Gurobi writes them; rows stay distinct
      }
      begin_expr(expr_);
      parse_expr(expr_);
      const Token& op = peek();
      if (!is_op(op)) {
        if (op.kind == Tok::Arrow) fail(op, "indicator constraints ('->') are not supported");
        fail(op, "expected <=, >= or = in the constraint, found " + show(op));
      }
      next();
      bool lhs_constant_only = expr_.terms.empty() && expr_.quad.empty() && expr_.has_constant;
      if (lhs_constant_only && middle_follows()) {
        // Ranged row "lo <= expr <= hi" (or "hi >= expr >= lo").
        if (op.kind == Tok::EQ) fail(op, "'=' cannot be used in a ranged constraint");
        double c1 = expr_.constant;
        begin_expr(expr_);
        parse_expr(expr_);
        const Token& op2 = peek();
        if (!is_op(op2))
          fail(op2, "a constant on the left of a constraint needs the ranged form 'lo <= expr <= hi'; write 'expr >= lo' instead");
        if (op2.kind != op.kind) fail(op2, "both operators of a ranged constraint must be '<=' or both '>='");
        next();
        double c3 = parse_value(false, "right-hand side");
        double lo = op.kind == Tok::LE ? c1 : c3, hi = op.kind == Tok::LE ? c3 : c1;
        if (expr_.has_constant) {
          lo -= expr_.constant;
          hi -= expr_.constant;
        }
        row.sense = RowSense::Range;
        row.rhs = lo;
        row.range_upper = hi;
      } else {
        double v = parse_value(false, "right-hand side");
        row.sense = sense_of(op);
        row.rhs = expr_.has_constant ? v - expr_.constant : v;
      }
      row.terms = expr_.terms;
      row.quad = expr_.quad;
      expect_line_end(op, "constraint");
      if (!named) unnamed_rows_.push_back(model_.rows.size());
      model_.rows.push_back(std::move(row));
    }
  }

  // After "const op": does an expression follow (ranged row), or just the right-hand side?
  bool middle_follows() const {
    size_t k = 0;
    if (peek(k).kind == Tok::Plus || peek(k).kind == Tok::Minus) ++k;
    const Token& t = peek(k);
    if (t.kind == Tok::Number) {
      const Token& u = peek(k + 1);
      return (u.kind == Tok::Name || u.kind == Tok::LBrack) && u.line == t.line;
    }
    if (t.kind == Tok::Name) return !is_infinity_word(text(t));
    return t.kind == Tok::LBrack;
  }

  void set_bound(int var, Tok op, double v, bool value_left, const Token& at) {
    Variable& x = model_.vars[size_t(var)];
    // "x <= v" / "v >= x" set the upper bound; "x >= v" / "v <= x" the lower one.
    bool upper = (op == Tok::LE) != value_left;
    if (op == Tok::EQ) {
      if (v == kInf || v == -kInf) fail(at, "a variable cannot be fixed at infinity");
      x.lb = x.ub = v;
    } else if (upper) {
      if (v == -kInf) fail(at, "an upper bound of -infinity is not supported");
      x.ub = v;
    } else {
      if (v == kInf) fail(at, "a lower bound of +infinity is not supported");
      x.lb = v;
    }
  }

  void parse_bounds() {
    while (!section_end(peek())) {
      const Token& t = peek();
      bool value_first = t.kind == Tok::Plus || t.kind == Tok::Minus || t.kind == Tok::Number ||
                         (t.kind == Tok::Name && is_infinity_word(text(t)) && is_op(peek(1)));
      if (value_first) {
        double v1 = parse_value(true, "bound");
        const Token& op1 = peek();
        if (!is_op(op1)) fail(op1, "expected <=, >= or = after the bound value, found " + show(op1));
        next();
        const Token& nm = peek();
        if (nm.kind != Tok::Name || is_infinity_word(text(nm))) fail(nm, "expected a variable name, found " + show(nm));
        next();
        int var = var_index(nm);
        set_bound(var, op1.kind, v1, true, t);
        if (is_op(peek())) {
          const Token& op2 = next();
          if (op1.kind == Tok::EQ || op2.kind != op1.kind)
            fail(op2, "a two-sided bound needs 'l <= x <= u' or 'u >= x >= l'");
          const Token& vt = peek();
          double v2 = parse_value(true, "bound");
          set_bound(var, op2.kind, v2, false, vt);
        }
      } else if (t.kind == Tok::Name) {
        next();
        int var = var_index(t);
        const Token& u = peek();
        if (u.kind == Tok::Name && iequals(text(u), "free") && u.line == t.line) {
          next();
          model_.vars[size_t(var)].lb = -kInf;
          model_.vars[size_t(var)].ub = kInf;
        } else if (is_op(u)) {
          next();
          const Token& vt = peek();
          double v = parse_value(true, "bound");
          set_bound(var, u.kind, v, false, vt);
        } else {
          fail(u, "expected <=, >=, = or 'free' after '" + std::string(text(t)) + "' in Bounds, found " + show(u));
        }
      } else {
        fail(t, "unexpected " + show(t) + " in Bounds");
      }
      expect_line_end(t, "bound");
    }
  }

  static constexpr uint8_t kGen = 1, kBin = 2, kSemi = 4;
  void parse_type_list(uint8_t flag, const char* section) {
    while (!section_end(peek())) {
      const Token& t = next();
      if (t.kind != Tok::Name) fail(t, std::string("expected a variable name in ") + section + ", found " + show(t));
      int var = var_index(t);
      uint8_t& f = flags_[size_t(var)];
      if ((flag == kBin && (f & (kGen | kSemi))) || (flag != kBin && (f & kBin)))
        fail(t, "variable '" + std::string(text(t)) + "' is declared binary and also general or semi-continuous");
      f |= flag;
    }
  }

  void parse_sos() {
    while (!section_end(peek())) {
      const Token& t = peek();
      SosSet set;
      if (t.kind == Tok::Name && peek(1).kind == Tok::Colon) {
        set.name = std::string(text(t));
        next();
        next();
      }
      const Token& ty = peek();
      if (ty.kind != Tok::Name || !(iequals(text(ty), "s1") || iequals(text(ty), "s2")))
        fail(ty, "expected S1 or S2 in the SOS section, found " + show(ty));
      set.type = (text(ty)[1] == '1') ? 1 : 2;
      next();
      if (peek().kind != Tok::DColon) fail(peek(), "expected '::' after the SOS type, found " + show(peek()));
      next();
      // Members "name:weight" until the next set header or section.
      while (peek().kind == Tok::Name && peek(1).kind == Tok::Colon &&
             (peek(2).kind == Tok::Number || peek(2).kind == Tok::Plus || peek(2).kind == Tok::Minus)) {
        const Token& nm = next();
        next();
        double w = parse_value(false, "SOS weight");
        set.members.push_back({var_index(nm), w});
      }
      if (set.members.empty()) fail(peek(), "an SOS set needs at least one member 'name:weight'");
      const Token& after = peek();
      if (!section_end(after) && !after.line_start) fail(after, "unexpected " + show(after) + " in the SOS section");
      model_.sos.push_back(std::move(set));
    }
  }

  void finish() {
    for (size_t i = 0; i < model_.vars.size(); ++i) {
      Variable& v = model_.vars[i];
      uint8_t f = flags_[i];
      if (f & kBin) {
        v.type = VarType::Binary;
        if (v.lb < 0) v.lb = 0.0;
        if (v.ub > 1) v.ub = 1.0;
      } else if ((f & kGen) && (f & kSemi)) {
        v.type = VarType::SemiInteger;
      } else if (f & kGen) {
        v.type = VarType::Integer;
      } else if (f & kSemi) {
        v.type = VarType::SemiContinuous;
      }
    }
    // Unnamed rows are named R<k> (k = 1-based row position), with a suffix on a clash.
    for (size_t r : unnamed_rows_) {
      std::string base = "R" + std::to_string(r + 1), name = base;
      for (int k = 1; row_names_.count(name); ++k) name = base + "_" + std::to_string(k);
      row_names_.insert(name);
      model_.rows[r].name = std::move(name);
    }
    model_.rebuild_index();
  }

  std::string_view text_;
  const std::string& source_;
  std::vector<Token> toks_;
  size_t p_ = 0;
  Model model_;
  std::unordered_map<std::string_view, int> var_ids_;
  std::vector<int> slot_;       // per variable: position in the current expression, -1 if absent
  std::vector<uint8_t> flags_;  // per variable: kGen/kBin/kSemi declarations
  std::unordered_map<uint64_t, int> quad_slot_;
  std::vector<QuadTerm> quad_buf_;
  Expr expr_;
  std::unordered_set<std::string> row_names_;
  std::vector<size_t> unnamed_rows_;
};

}  // namespace

Model read_lp_string(std::string_view text, const std::string& source_name) {
  // Token offsets and line numbers are 32-bit.
  if (text.size() >= 0x7FFFFFF0u) throw Error(SourceLocation{source_name, 0, 0}, "LP file too large (2 GiB limit)");
  return Parser(text, source_name).run();
}

Model read_lp_file(const std::filesystem::path& path) {
  std::string data = read_file(path);
  return read_lp_string(data, path.string());
}

}  // namespace trex::lp
