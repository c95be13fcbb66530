// first_difference: exact, ordered comparison of two Model IRs (see model_compare.hpp).
#include "lp/model_compare.hpp"

#include <bit>
#include <charconv>
#include <cstdint>

namespace trex::lp {
namespace {

bool same(double a, double b) { return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b); }

std::string num(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string diff_terms(const char* what, const std::vector<Term>& a, const std::vector<Term>& b) {
  if (a.size() != b.size())
    return std::string(what) + ": " + std::to_string(a.size()) + " vs " + std::to_string(b.size()) + " terms";
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].var != b[i].var)
      return std::string(what) + "[" + std::to_string(i) + "]: variable " + std::to_string(a[i].var) + " vs " +
             std::to_string(b[i].var);
    if (!same(a[i].coef, b[i].coef))
      return std::string(what) + "[" + std::to_string(i) + "]: coefficient " + num(a[i].coef) + " vs " +
             num(b[i].coef);
  }
  return "";
}

std::string diff_quad(const char* what, const std::vector<QuadTerm>& a, const std::vector<QuadTerm>& b) {
  if (a.size() != b.size())
    return std::string(what) + ": " + std::to_string(a.size()) + " vs " + std::to_string(b.size()) +
           " quadratic terms";
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].var1 != b[i].var1 || a[i].var2 != b[i].var2)
      return std::string(what) + "[" + std::to_string(i) + "]: variables (" + std::to_string(a[i].var1) + "," +
             std::to_string(a[i].var2) + ") vs (" + std::to_string(b[i].var1) + "," + std::to_string(b[i].var2) + ")";
    if (!same(a[i].coef, b[i].coef))
      return std::string(what) + "[" + std::to_string(i) + "]: coefficient " + num(a[i].coef) + " vs " +
             num(b[i].coef);
  }
  return "";
}

}  // namespace

std::string first_difference(const Model& a, const Model& b) {
  if (a.name != b.name) return "model name " + quoted(a.name) + " vs " + quoted(b.name);
  if (a.vars.size() != b.vars.size())
    return "variables: " + std::to_string(a.vars.size()) + " vs " + std::to_string(b.vars.size());
  for (size_t i = 0; i < a.vars.size(); ++i) {
    const Variable &x = a.vars[i], &y = b.vars[i];
    std::string at = "vars[" + std::to_string(i) + "] " + quoted(x.name);
    if (x.name != y.name) return at + ": name vs " + quoted(y.name);
    if (x.type != y.type) return at + ": type " + to_string(x.type) + " vs " + to_string(y.type);
    if (!same(x.lb, y.lb)) return at + ": lower bound " + num(x.lb) + " vs " + num(y.lb);
    if (!same(x.ub, y.ub)) return at + ": upper bound " + num(x.ub) + " vs " + num(y.ub);
  }
  const Objective &oa = a.objective, &ob = b.objective;
  if (oa.sense != ob.sense) return std::string("objective sense ") + to_string(oa.sense) + " vs " + to_string(ob.sense);
  if (oa.name != ob.name) return "objective name " + quoted(oa.name) + " vs " + quoted(ob.name);
  if (auto d = diff_terms("objective terms", oa.terms, ob.terms); !d.empty()) return d;
  if (auto d = diff_quad("objective quadratic", oa.quad, ob.quad); !d.empty()) return d;
  if (!same(oa.constant, ob.constant)) return "objective constant " + num(oa.constant) + " vs " + num(ob.constant);
  if (a.rows.size() != b.rows.size())
    return "rows: " + std::to_string(a.rows.size()) + " vs " + std::to_string(b.rows.size());
  for (size_t i = 0; i < a.rows.size(); ++i) {
    const Row &r = a.rows[i], &s = b.rows[i];
    std::string at = "rows[" + std::to_string(i) + "] " + quoted(r.name);
    if (r.name != s.name) return at + ": name vs " + quoted(s.name);
    if (auto d = diff_terms("terms", r.terms, s.terms); !d.empty()) return at + ": " + d;
    if (auto d = diff_quad("quadratic", r.quad, s.quad); !d.empty()) return at + ": " + d;
    if (r.sense != s.sense) return at + ": sense " + to_string(r.sense) + " vs " + to_string(s.sense);
    if (!same(r.rhs, s.rhs)) return at + ": rhs " + num(r.rhs) + " vs " + num(s.rhs);
    if (r.sense == RowSense::Range && !same(r.range_upper, s.range_upper))
      return at + ": range upper " + num(r.range_upper) + " vs " + num(s.range_upper);
  }
  if (a.sos.size() != b.sos.size())
    return "SOS sets: " + std::to_string(a.sos.size()) + " vs " + std::to_string(b.sos.size());
  for (size_t i = 0; i < a.sos.size(); ++i) {
    const SosSet &x = a.sos[i], &y = b.sos[i];
    std::string at = "sos[" + std::to_string(i) + "] " + quoted(x.name);
    if (x.name != y.name) return at + ": name vs " + quoted(y.name);
    if (x.type != y.type) return at + ": type " + std::to_string(x.type) + " vs " + std::to_string(y.type);
    if (auto d = diff_terms("members", x.members, y.members); !d.empty()) return at + ": " + d;
  }
  return "";
}

}  // namespace trex::lp
