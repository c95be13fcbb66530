// LP-file writer in Gurobi style: header comment, Minimize/Maximize, " name: + 3 x - 2 y <= 5" rows
// wrapped like Gurobi's, Bounds, Binaries, Generals, Semi-continuous, SOS, quadratic "[ ... ] / 2"
// in the objective, End. Doubles are printed with the shortest representation that reads back to
// the same bits (std::to_chars), so read -> write -> read gives the same model (docs/lp-format.md).
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "lp/lp_format.hpp"
#include "lp/lp_syntax.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"

namespace trex::lp {
namespace {

constexpr size_t kWrap = 78;  // wrap before a piece that would pass this column, as Gurobi does

bool is_pos_zero(double v) { return std::bit_cast<uint64_t>(v) == 0; }

// Shortest round-trip text of a finite double.
void append_number(std::string& out, double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}
std::string number(double v) {
  std::string s;
  append_number(s, v);
  return s;
}
// Bound values: finite numbers or (-)infinity.
std::string bound_value(double v) {
  if (v == kInf) return "infinity";
  if (v == -kInf) return "-infinity";
  return number(v);
}

class Writer {
 public:
  explicit Writer(const Model& m) : m_(m) {}

  std::string run() {
    check_model();
    out_.reserve(64 + 48 * size_t(m_.num_nonzeros()) + 32 * m_.vars.size());
    out_ += "\\ Model " + m_.name + "\n";
    out_ += "\\ LP format - written by trex (Gurobi style)\n";
    write_objective();
    write_rows();
    write_bounds();
    write_name_list("Binaries", [](VarType t) { return t == VarType::Binary; });
    write_name_list("Generals", [](VarType t) { return t == VarType::Integer || t == VarType::SemiInteger; });
    write_name_list("Semi-continuous",
                    [](VarType t) { return t == VarType::SemiContinuous || t == VarType::SemiInteger; });
    write_sos();
    out_ += "End\n";
    return std::move(out_);
  }

 private:
  [[noreturn]] static void refuse(const std::string& what) { throw Error("cannot write LP file: " + what); }

  static void check_label(const std::string& name, const char* what) {
    if (name.empty()) return;
    if (syntax::scan_name(name) != name.size())
      refuse(std::string(what) + " name '" + name + "' cannot be written in LP format");
  }
  static void check_finite(double v, const std::string& what) {
    if (!std::isfinite(v)) refuse(what + " is " + (std::isnan(v) ? "NaN" : "infinite"));
  }

  void check_model() const {
    for (char c : m_.name)
      if (c == '\n' || c == '\r') refuse("the model name contains a line break");
    if (!m_.name.empty() && (syntax::is_space(static_cast<unsigned char>(m_.name.front())) ||
                             syntax::is_space(static_cast<unsigned char>(m_.name.back()))))
      refuse("the model name starts or ends with a blank");
    for (const auto& v : m_.vars) {
      if (v.name.empty() || syntax::scan_name(v.name) != v.name.size())
        refuse("variable name '" + v.name + "' cannot be written in LP format");
      if (syntax::is_reserved_word(v.name)) refuse("variable name '" + v.name + "' is an LP-format keyword");
      if (std::isnan(v.lb) || std::isnan(v.ub)) refuse("variable '" + v.name + "' has a NaN bound");
      if (v.lb == kInf || v.ub == -kInf) refuse("variable '" + v.name + "' has an impossible infinite bound");
      if (v.type == VarType::Binary && (v.lb < 0 || v.ub > 1))
        refuse("binary variable '" + v.name + "' has bounds outside [0, 1]");
    }
    check_label(m_.objective.name, "objective");
    check_expr(m_.objective.terms, m_.objective.quad, "the objective");
    check_finite(m_.objective.constant, "the objective constant");
    for (const auto& r : m_.rows) {
      check_label(r.name, "constraint");
      check_expr(r.terms, r.quad, "constraint '" + r.name + "'");
      check_finite(r.rhs, "the right-hand side of '" + r.name + "'");
      if (r.sense == RowSense::Range) {
        check_finite(r.range_upper, "the range of '" + r.name + "'");
        if (r.terms.empty() && r.quad.empty()) refuse("ranged constraint '" + r.name + "' has no terms");
      }
    }
    for (const auto& s : m_.sos) {
      check_label(s.name, "SOS");
      if (s.type != 1 && s.type != 2) refuse("SOS set '" + s.name + "' has type " + std::to_string(s.type));
      if (s.members.empty()) refuse("SOS set '" + s.name + "' is empty");
      check_expr(s.members, {}, "SOS set '" + s.name + "'");
    }
  }
  void check_expr(const std::vector<Term>& terms, const std::vector<QuadTerm>& quad, const std::string& what) const {
    const int n = m_.num_vars();
    for (const auto& t : terms) {
      if (t.var < 0 || t.var >= n) refuse(what + " refers to variable index " + std::to_string(t.var));
      check_finite(t.coef, "a coefficient in " + what);
    }
    for (const auto& q : quad) {
      if (q.var1 < 0 || q.var1 >= n || q.var2 < 0 || q.var2 >= n) refuse(what + " refers to a bad variable index");
      check_finite(q.coef, "a quadratic coefficient in " + what);
    }
  }

  // ---- line building with Gurobi-like wrapping ----
  void start_line(const char* indent) {
    out_ += indent;
    line_len_ = std::char_traits<char>::length(indent);
    line_has_piece_ = false;
  }
  void piece(const std::string& p) {
    if (line_has_piece_ && line_len_ + p.size() > kWrap) {
      out_ += "\n  ";
      line_len_ = 2;
    }
    out_ += p;
    line_len_ += p.size();
    line_has_piece_ = true;
  }
  void end_line() { out_ += '\n'; }

  // " + 3 x" / " - x" / first term "3 x" / "- x".
  std::string term_piece(double coef, const std::string& body, bool first) const {
    bool neg = std::signbit(coef);
    std::string p = first ? (neg ? "- " : "") : (neg ? " - " : " + ");
    double a = std::fabs(coef);
    if (a != 1.0) {
      append_number(p, a);
      p += ' ';
    }
    p += body;
    return p;
  }
  std::string quad_body(const QuadTerm& q) const {
    const std::string& a = m_.vars[size_t(q.var1)].name;
    if (q.var1 == q.var2) return a + " ^ 2";
    return a + " * " + m_.vars[size_t(q.var2)].name;
  }

  // Linear terms, optional constant, and "[ ... ]" (halved form "[ 2c ... ] / 2" when halve).
  // lead_space: the first piece is preceded by a blank (after a "name:" label or "lo <=").
  void write_expr(const std::vector<Term>& terms, const std::vector<QuadTerm>& quad, const double* constant,
                  bool halve, bool lead_space) {
    bool first = true;
    auto lead = [&] { return std::string(first && lead_space ? " " : ""); };
    for (const auto& t : terms) {
      piece(lead() + term_piece(t.coef, m_.vars[size_t(t.var)].name, first));
      first = false;
    }
    if (constant && !is_pos_zero(*constant)) {
      bool neg = std::signbit(*constant);
      std::string p = lead() + (first ? (neg ? "- " : "") : (neg ? " - " : " + "));
      append_number(p, std::fabs(*constant));
      piece(p);
      first = false;
    }
    if (quad.empty()) return;
    if (halve)
      for (const auto& q : quad)
        if (!std::isfinite(2 * q.coef)) halve = false;  // doubling would overflow: write the plain form
    piece(lead() + (first ? "[" : " + ["));
    bool qfirst = true;
    for (const auto& q : quad) {
      double c = halve ? 2 * q.coef : q.coef;
      piece(qfirst ? " " + term_piece(c, quad_body(q), true) : term_piece(c, quad_body(q), false));
      qfirst = false;
    }
    piece(halve ? " ] / 2" : " ]");
  }

  void label(const std::string& name) {
    if (name.empty()) return;
    out_ += name + ":";
    line_len_ += name.size() + 1;
  }

  void write_objective() {
    const Objective& o = m_.objective;
    out_ += o.sense == ObjSense::Minimize ? "Minimize\n" : "Maximize\n";
    start_line("  ");
    label(o.name);
    write_expr(o.terms, o.quad, &o.constant, true, !o.name.empty());
    end_line();
  }

  void write_rows() {
    out_ += "Subject To\n";
    for (const auto& r : m_.rows) {
      start_line(" ");
      label(r.name);
      if (r.sense == RowSense::Range) {
        piece(" " + number(r.rhs) + " <=");
        write_expr(r.terms, r.quad, nullptr, false, true);
        piece(" <= " + number(r.range_upper));
      } else {
        write_expr(r.terms, r.quad, nullptr, false, true);
        const char* op = r.sense == RowSense::LE ? " <= " : r.sense == RowSense::GE ? " >= " : " = ";
        piece(op + number(r.rhs));
      }
      end_line();
    }
  }

  void write_bounds() {
    std::vector<char> mentioned(m_.vars.size(), 0);
    auto mark = [&](const std::vector<Term>& ts, const std::vector<QuadTerm>& qs) {
      for (const auto& t : ts) mentioned[size_t(t.var)] = 1;
      for (const auto& q : qs) mentioned[size_t(q.var1)] = mentioned[size_t(q.var2)] = 1;
    };
    mark(m_.objective.terms, m_.objective.quad);
    for (const auto& r : m_.rows) mark(r.terms, r.quad);
    out_ += "Bounds\n";
    for (size_t i = 0; i < m_.vars.size(); ++i) {
      const Variable& v = m_.vars[i];
      const double default_ub = v.type == VarType::Binary ? 1.0 : kInf;
      const bool lb_default = is_pos_zero(v.lb), ub_default = v.ub == default_ub;
      std::string line;
      if (lb_default && ub_default) {
        if (mentioned[i]) continue;
        line = v.name + " >= 0";  // declares a variable that appears nowhere else, in column order
      } else if (v.lb == -kInf && v.ub == kInf) {
        line = v.name + " free";
      } else if (std::bit_cast<uint64_t>(v.lb) == std::bit_cast<uint64_t>(v.ub)) {
        line = v.name + " = " + number(v.lb);
      } else if (lb_default) {
        line = v.name + " <= " + bound_value(v.ub);
      } else if (ub_default) {
        line = v.name + " >= " + bound_value(v.lb);
      } else {
        line = bound_value(v.lb) + " <= " + v.name + " <= " + bound_value(v.ub);
      }
      out_ += " " + line + "\n";
    }
  }

  template <typename Pred>
  void write_name_list(const char* section, Pred pred) {
    bool any = false;
    for (const auto& v : m_.vars) {
      if (!pred(v.type)) continue;
      if (!any) {
        out_ += section;
        out_ += "\n";
        start_line("");
        any = true;
      }
      piece(" " + v.name);
    }
    if (any) end_line();
  }

  void write_sos() {
    if (m_.sos.empty()) return;
    out_ += "SOS\n";
    for (const auto& s : m_.sos) {
      start_line(" ");
      label(s.name);
      piece(std::string(s.name.empty() ? "" : " ") + (s.type == 1 ? "S1 ::" : "S2 ::"));
      for (const auto& t : s.members) piece(" " + m_.vars[size_t(t.var)].name + ":" + number(t.coef));
      end_line();
    }
  }

  const Model& m_;
  std::string out_;
  size_t line_len_ = 0;
  bool line_has_piece_ = false;
};

}  // namespace

std::string write_lp_string(const Model& model) { return Writer(model).run(); }

void write_lp_file(const Model& model, const std::filesystem::path& path) {
  std::string text = write_lp_string(model);  // fails before anything is written
  AtomicFile file(path);
  file.write(text);
  file.commit();
}

}  // namespace trex::lp
