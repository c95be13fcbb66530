// Test helpers for the ORGEval equivalence tests: building IR models by hand, renamed/shuffled
// copies, and structure-changing mutations chosen under ORGEval's own rules (see docs/lp-equiv.md).
#pragma once
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lp/equivalence_detail.hpp"
#include "lp/model.hpp"
#include "util/rng.hpp"

namespace trex::lp::testing {

inline int add_var(Model& m, const std::string& name, VarType type = VarType::Continuous, double lb = 0.0,
                   double ub = kInf, double obj = 0.0) {
  int v = m.add_var(name, type, lb, ub);
  if (obj != 0.0) m.objective.terms.push_back({v, obj});
  return v;
}

inline void add_row(Model& m, const std::string& name, std::vector<Term> terms, RowSense sense, double rhs) {
  Row r;
  r.name = name;
  r.terms = std::move(terms);
  r.sense = sense;
  r.rhs = rhs;
  m.rows.push_back(std::move(r));
}

// Same model with every variable and row renamed, variable order permuted, row order shuffled and
// the term order inside every row and the objective shuffled.
inline Model renamed_shuffled(const Model& m, Rng& rng) {
  const int n = m.num_vars();
  std::vector<int> perm(static_cast<size_t>(n));  // new position of old variable i
  std::iota(perm.begin(), perm.end(), 0);
  rng.shuffle(perm);
  std::vector<int> old_at(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) old_at[size_t(perm[size_t(i)])] = i;
  Model out;
  out.name = m.name + "_shuffled";
  for (int p = 0; p < n; ++p) {
    const Variable& v = m.vars[size_t(old_at[size_t(p)])];
    out.add_var("zz_" + std::to_string(p) + "_" + std::to_string(rng.uniform_int(0, 999)), v.type, v.lb, v.ub);
  }
  out.objective = m.objective;
  for (Term& t : out.objective.terms) t.var = perm[size_t(t.var)];
  rng.shuffle(out.objective.terms);
  std::vector<size_t> order(m.rows.size());
  std::iota(order.begin(), order.end(), size_t(0));
  rng.shuffle(order);
  for (size_t k = 0; k < order.size(); ++k) {
    Row r = m.rows[order[k]];
    r.name = "row_" + std::to_string(k) + "_renamed";
    for (Term& t : r.terms) t.var = perm[size_t(t.var)];
    for (QuadTerm& q : r.quad) q.var1 = perm[size_t(q.var1)], q.var2 = perm[size_t(q.var2)];
    rng.shuffle(r.terms);
    out.rows.push_back(std::move(r));
  }
  return out;
}

// The round-0 evidence a mutation must change: the set of initial node colours and the set of edge
// colours after normalisation. A final WL colour determines its node's initial colour and incident
// edge colours, and colours of different depths never coincide, so a change here always changes
// the final colour set (barring an MD5 collision).
struct InitialColours {
  std::set<std::string> nodes, edges;
  size_t vars = 0, rows = 0;
  bool operator==(const InitialColours&) const = default;
};
inline InitialColours initial_colours(const Model& m) {
  orgeval::CheckModel cm = orgeval::gurobi_view(m);
  orgeval::normalize(cm);
  orgeval::Graph g = orgeval::build_graph(cm);
  InitialColours ic;
  ic.nodes.insert(g.colour0.begin(), g.colour0.end());
  ic.edges.insert(g.edge_colours.begin(), g.edge_colours.end());
  ic.vars = cm.vars.size();
  ic.rows = cm.rows.size();
  return ic;
}

struct Mutation {
  std::string kind;             // coefficient, bound, type, sense, remove_row
  std::string expected_reason;  // wl_check or cons_num_check
  std::string what;             // human-readable description
  Model model;
};

// Rows that survive N1 (not a singleton with |a| >= 1e-12) and are linear.
inline bool survives_n1(const Row& r) {
  if (!r.quad.empty()) return false;
  return !(r.terms.size() == 1 && std::abs(r.terms[0].coef) >= 1e-12);
}

// Variables whose bounds N1 overwrites (target of a singleton row).
inline std::vector<char> bound_targets(const Model& m) {
  std::vector<char> t(m.vars.size(), 0);
  for (const Row& r : m.rows)
    if (r.quad.empty() && r.terms.size() == 1 && std::abs(r.terms[0].coef) >= 1e-12) t[size_t(r.terms[0].var)] = 1;
  return t;
}

// One mutation of the given kind: candidates are tried in a seeded random order, and the first
// whose result keeps the variable/row counts (except remove_row) and changes the initial colour
// sets (remove_row: changes the row count) is returned. nullopt when no candidate qualifies.
inline std::optional<Mutation> mutate(const Model& m, const std::string& kind, Rng& rng) {
  const InitialColours base = initial_colours(m);
  auto qualifies = [&](const Model& x, bool count_change) {
    InitialColours ic = initial_colours(x);
    if (count_change) return ic.vars == base.vars && ic.rows + 1 == base.rows;
    return ic.vars == base.vars && ic.rows == base.rows && (ic.nodes != base.nodes || ic.edges != base.edges);
  };
  std::vector<size_t> rows(m.rows.size()), vars(m.vars.size());
  std::iota(rows.begin(), rows.end(), size_t(0));
  std::iota(vars.begin(), vars.end(), size_t(0));
  rng.shuffle(rows);
  rng.shuffle(vars);
  const std::vector<char> targets = bound_targets(m);
  if (kind == "coefficient") {
    for (size_t r : rows) {
      if (!survives_n1(m.rows[r]) || m.rows[r].terms.size() < 2) continue;
      Model x = m;
      Term& t = x.rows[r].terms[size_t(rng.uniform_int(0, int64_t(x.rows[r].terms.size()) - 1))];
      const double old = t.coef;
      t.coef = old * 2.0 + (old >= 0 ? 0.75 : -0.75);  // float32 %.6f sees it: |change| >= 0.75
      if (qualifies(x, false))
        return Mutation{kind, "wl_check", "row " + m.rows[r].name + ": coefficient " + std::to_string(old) + " -> " +
                                              std::to_string(t.coef), std::move(x)};
    }
  } else if (kind == "bound") {
    for (size_t v : vars) {
      if (targets[v]) continue;  // N1 would overwrite the bound
      Model x = m;
      Variable& var = x.vars[v];
      const double lo = std::isfinite(var.lb) ? var.lb : 0.0;
      const double old = var.ub;
      var.ub = lo + 4321.125 + double(rng.uniform_int(0, 1000));
      if (qualifies(x, false))
        return Mutation{kind, "wl_check", "variable " + var.name + ": ub " + std::to_string(old) + " -> " +
                                              std::to_string(var.ub), std::move(x)};
    }
  } else if (kind == "type") {
    for (size_t v : vars) {
      Model x = m;
      Variable& var = x.vars[v];
      const VarType old = var.type;
      var.type = old == VarType::Continuous ? VarType::Integer
                 : old == VarType::Integer  ? VarType::Continuous
                                            : VarType::Integer;  // binary -> integer, same [0,1] bounds
      if (qualifies(x, false))
        return Mutation{kind, "wl_check", "variable " + var.name + ": type " + to_string(old) + " -> " +
                                              to_string(var.type), std::move(x)};
    }
  } else if (kind == "sense") {
    for (size_t r : rows) {
      if (!survives_n1(m.rows[r]) || m.rows[r].sense == RowSense::Range) continue;
      Model x = m;
      Row& row = x.rows[r];
      const RowSense old = row.sense;
      row.sense = old == RowSense::LE ? RowSense::GE : old == RowSense::GE ? RowSense::LE : RowSense::GE;
      if (qualifies(x, false))
        return Mutation{kind, "wl_check", "row " + row.name + ": sense " + to_string(old) + " -> " +
                                              to_string(row.sense), std::move(x)};
    }
  } else if (kind == "remove_row") {
    for (size_t r : rows) {
      if (!survives_n1(m.rows[r])) continue;  // removing a singleton row changes bounds, not the row count
      Model x = m;
      x.rows.erase(x.rows.begin() + std::ptrdiff_t(r));
      if (qualifies(x, true)) return Mutation{kind, "cons_num_check", "removed row " + m.rows[r].name, std::move(x)};
    }
  }
  return std::nullopt;
}

// A random model drawn from small value sets, so symmetric and duplicate structure is common:
// singleton rows, zero-rhs rows of every sense, empty rows, binaries and integers.
inline Model random_model(Rng& rng, int max_vars = 24, int max_rows = 24) {
  static const double coefs[] = {1.0, -1.0, 2.0, 0.5, -3.0, 1e-13};
  static const double rhss[] = {0.0, 1.0, -2.0, 5.0, 5e-10, -0.0};
  static const double bounds[] = {0.0, 1.0, 10.0, -5.0};
  Model m;
  const int nv = int(rng.uniform_int(1, max_vars)), nr = int(rng.uniform_int(0, max_rows));
  for (int i = 0; i < nv; ++i) {
    const int kind = int(rng.uniform_int(0, 3));
    VarType t = kind == 0 ? VarType::Binary : kind == 1 ? VarType::Integer : VarType::Continuous;
    double lb = t == VarType::Binary ? 0.0 : bounds[rng.uniform_int(0, 3)];
    double ub = t == VarType::Binary ? 1.0 : rng.bernoulli(0.5) ? kInf : lb + 7.0;
    if (t != VarType::Binary && rng.bernoulli(0.1)) lb = -kInf;
    add_var(m, "x" + std::to_string(i), t, lb, ub, rng.bernoulli(0.5) ? coefs[rng.uniform_int(0, 4)] : 0.0);
  }
  for (int r = 0; r < nr; ++r) {
    const int len = int(rng.uniform_int(0, std::min(nv, 5)));
    std::vector<int> vs(static_cast<size_t>(nv));
    std::iota(vs.begin(), vs.end(), 0);
    rng.shuffle(vs);
    std::vector<Term> terms;
    for (int k = 0; k < len; ++k) terms.push_back({vs[size_t(k)], coefs[rng.uniform_int(0, rng.bernoulli(0.05) ? 5 : 4)]});
    const RowSense sense = RowSense(rng.uniform_int(0, 2));
    // Singleton rows get a nonzero rhs: two singleton bounds 0.0 and -0.0 on one variable tie, and
    // N1 keeps whichever comes first, so row order would matter (tested on its own).
    const double rhs = len == 1 ? rhss[rng.uniform_int(1, 3)] : rhss[rng.uniform_int(0, 5)];
    add_row(m, "c" + std::to_string(r), std::move(terms), sense, rhs);
  }
  return m;
}

inline const std::vector<std::string>& mutation_kinds() {
  static const std::vector<std::string> k{"coefficient", "bound", "type", "sense", "remove_row"};
  return k;
}

}  // namespace trex::lp::testing
