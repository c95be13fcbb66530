// ORGEval check, first stages: the Gurobi view of an IR model, normalisation N1-N3 and the float32
// "%.6f" value formatting used for every colour string (OR_BENCHMARKS.md §6).
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>

#include "lp/equivalence_detail.hpp"
#include "util/error.hpp"

namespace trex::lp::orgeval {

static_assert(std::numeric_limits<float>::is_iec559 && std::numeric_limits<double>::is_iec559,
              "the colour strings assume IEEE float32/float64");

static double gurobi_value(double v) {
  if (v == kInf) return kGurobiInf;
  if (v == -kInf) return -kGurobiInf;
  return v;
}

static int type_code(VarType t) {
  switch (t) {
    case VarType::Binary: return 1;
    case VarType::Integer: return 2;
    default: return 0;  // continuous, semi-continuous, semi-integer
  }
}

CheckModel gurobi_view(const Model& model) {
  CheckModel out;
  const std::vector<double> obj = model.objective_dense();
  out.vars.reserve(model.vars.size());
  for (size_t i = 0; i < model.vars.size(); ++i) {
    const Variable& v = model.vars[i];
    out.vars.push_back({gurobi_value(obj[i]), type_code(v.type), gurobi_value(v.lb), gurobi_value(v.ub)});
  }
  out.rows.reserve(model.rows.size());
  for (const Row& r : model.rows) {
    if (!r.quad.empty()) continue;  // a quadratic constraint: not among Gurobi's linear rows
    CheckRow row;
    row.terms = r.terms;
    for (const Term& t : row.terms) {
      if (t.var < 0 || t.var >= model.num_vars())
        throw Error("row '" + r.name + "' refers to variable index " + std::to_string(t.var) + " of " +
                    std::to_string(model.num_vars()));
    }
    for (Term& t : row.terms) t.coef = gurobi_value(t.coef);
    row.rhs = gurobi_value(r.rhs);
    switch (r.sense) {
      case RowSense::LE: row.sense = -1; break;
      case RowSense::GE: row.sense = +1; break;
      case RowSense::EQ: row.sense = 0; break;
      case RowSense::Range: {
        // Gurobi stores L <= expr <= U as expr - s = L with a new variable s in [0, U - L].
        const double lo = gurobi_value(r.rhs), hi = gurobi_value(r.range_upper);
        const int slack = int(out.vars.size());
        out.vars.push_back({0.0, 0, 0.0, hi - lo});
        row.terms.push_back({slack, -1.0});
        row.sense = 0;
        row.rhs = lo;
        break;
      }
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

void normalize_singletons(CheckModel& model) {
  const size_t n = model.vars.size();
  std::vector<double> lb(n), ub(n);
  std::vector<char> has_lb(n, 0), has_ub(n, 0);
  size_t kept = 0;
  for (size_t i = 0; i < model.rows.size(); ++i) {
    CheckRow& row = model.rows[i];
    if (row.terms.size() == 1 && std::fabs(row.terms[0].coef) >= 1e-12) {
      const size_t v = size_t(row.terms[0].var);
      const double b = row.rhs / row.terms[0].coef;  // no flip for a < 0 (upstream quirk)
      // max/min keep the earlier candidate on ties (so a first -0.0 survives a later 0.0).
      if (row.sense >= 0 && (!has_lb[v] || b > lb[v])) lb[v] = b, has_lb[v] = 1;
      if (row.sense <= 0 && (!has_ub[v] || b < ub[v])) ub[v] = b, has_ub[v] = 1;
      continue;  // the row is removed
    }
    if (kept != i) model.rows[kept] = std::move(row);
    ++kept;
  }
  model.rows.resize(kept);
  for (size_t v = 0; v < n; ++v) {  // overwrite, even when that loosens the declared bound
    if (has_lb[v]) model.vars[v].lb = lb[v];
    if (has_ub[v]) model.vars[v].ub = ub[v];
  }
}

void normalize_zero_rhs(CheckModel& model) {
  for (CheckRow& row : model.rows) {
    if (row.sense == -1 && std::fabs(row.rhs) < 1e-9) {  // N2
      for (Term& t : row.terms) t.coef = -t.coef;
      row.sense = +1;
      row.rhs = 0.0;
    }
  }
  for (CheckRow& row : model.rows) {
    if (row.sense == 0 && std::fabs(row.rhs) < 1e-9) {  // N3
      double s = 0.0;
      for (const Term& t : row.terms) s += t.coef;
      if (std::fabs(s) < 1e-12 || s > 0) continue;
      if (s < 0) {
        for (Term& t : row.terms) t.coef = -t.coef;
        row.rhs = 0.0;
      }
    }
  }
}

void normalize(CheckModel& model) {
  normalize_singletons(model);
  normalize_zero_rhs(model);
}

void append_fmt(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "nan";
    return;
  }
  // Round to float32 (nearest-even). A double beyond float range is handled explicitly because
  // that conversion is undefined in C++: at or past FLT_MAX + half an ulp (2^103) it rounds to inf.
  float f;
  const double overflow = double(FLT_MAX) + std::ldexp(1.0, 103);
  if (v >= overflow)
    f = std::numeric_limits<float>::infinity();
  else if (v <= -overflow)
    f = -std::numeric_limits<float>::infinity();
  else
    f = static_cast<float>(v);
  char buf[64];
  const int len = std::snprintf(buf, sizeof buf, "%.6f", static_cast<double>(f));
  out.append(buf, size_t(len));
}

std::string fmt_value(double v) {
  std::string s;
  append_fmt(s, v);
  return s;
}

std::string fmt_values(std::initializer_list<double> values) {
  std::string s;
  bool first = true;
  for (double v : values) {
    if (!first) s += ',';
    first = false;
    append_fmt(s, v);
  }
  return s;
}

}  // namespace trex::lp::orgeval
