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

// The local evidence a mutation must change: the sets of initial node colours, of edge colours and
// of round-1 MD5 inputs (own colour | sorted neighbour colour|edge strings), after normalisation.
// A final WL colour (round >= 2, or round 1 of a one-node graph) determines its node's round-1
// input and so its initial colour and incident edge colours, and colours of different depths never
// coincide; so a change here always changes the final colour set (barring an MD5 collision).
struct LocalColours {
  std::set<std::string> nodes, edges, round1;
  size_t vars = 0, rows = 0;
  bool same_sets(const LocalColours& o) const { return nodes == o.nodes && edges == o.edges && round1 == o.round1; }
};
inline LocalColours local_colours(const Model& m) {
  orgeval::CheckModel cm = orgeval::gurobi_view(m);
  orgeval::normalize(cm);
  const orgeval::Graph g = orgeval::build_graph(cm);
  LocalColours lc;
  lc.nodes.insert(g.colour0.begin(), g.colour0.end());
  lc.edges.insert(g.edge_colours.begin(), g.edge_colours.end());
  for (int v = 0; v < g.num_nodes(); ++v) {
    std::vector<std::string> parts;
    for (int j = g.offsets[size_t(v)]; j < g.offsets[size_t(v) + 1]; ++j)
      parts.push_back(g.colour0[size_t(g.nbr[size_t(j)])] + "|" + g.edge_colours[size_t(g.edge[size_t(j)])]);
    std::sort(parts.begin(), parts.end());
    std::string input = g.colour0[size_t(v)] + "|";
    for (size_t i = 0; i < parts.size(); ++i) input += (i ? "|" : "") + parts[i];
    lc.round1.insert(std::move(input));
  }
  lc.vars = cm.vars.size();
  lc.rows = cm.rows.size();
  return lc;
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

// Per variable, whether N1 overwrites its LB (a >= or = singleton row) and its UB (<= or =).
struct BoundTargets {
  std::vector<char> lb, ub;
};
inline BoundTargets bound_targets(const Model& m) {
  BoundTargets t{std::vector<char>(m.vars.size(), 0), std::vector<char>(m.vars.size(), 0)};
  for (const Row& r : m.rows) {
    if (survives_n1(r) || !r.quad.empty()) continue;
    const size_t v = size_t(r.terms[0].var);
    if (r.sense == RowSense::GE || r.sense == RowSense::EQ) t.lb[v] = 1;
    if (r.sense == RowSense::LE || r.sense == RowSense::EQ) t.ub[v] = 1;
  }
  return t;
}

// One mutation of the given kind, or nullopt when no candidate qualifies. Candidates are tried in a
// seeded random order (rows that survive N1 before singleton rows). A candidate qualifies when the
// variable and row counts after normalisation stay and the local colour sets change (expected
// reason wl_check), or, for remove_row, when the row count drops by one (cons_num_check).
//  coefficient: a row term a -> 2a ± 0.75 (a change float32 "%.6f" always sees);
//  bound: a declared bound N1 does not overwrite -> a fresh value (binaries: ub 1 -> 0 or lb 0 -> 1);
//         else (every variable bounded by
//         singleton rows on both sides) the rhs of a singleton <= / >= row -> a fresh bound value;
//  type: continuous <-> integer, binary -> integer (same [0,1] bounds);
//  sense: <= -> >=, >= -> <=, = -> >=;  remove_row: erase one row.
inline std::optional<Mutation> mutate(const Model& m, const std::string& kind, Rng& rng) {
  const LocalColours base = local_colours(m);
  auto verdict = [&](const Model& x) -> std::string {
    const LocalColours lc = local_colours(x);
    if (lc.vars != base.vars) return "";
    if (lc.rows + 1 == base.rows && kind == "remove_row") return "cons_num_check";
    if (lc.rows == base.rows && !lc.same_sets(base)) return "wl_check";
    return "";
  };
  std::vector<size_t> rows(m.rows.size()), vars(m.vars.size());
  std::iota(rows.begin(), rows.end(), size_t(0));
  std::iota(vars.begin(), vars.end(), size_t(0));
  rng.shuffle(rows);
  rng.shuffle(vars);
  std::stable_partition(rows.begin(), rows.end(), [&](size_t r) { return survives_n1(m.rows[r]); });
  auto done = [&](Model&& x, const std::string& what) -> std::optional<Mutation> {
    const std::string reason = verdict(x);
    if (reason.empty()) return std::nullopt;
    return Mutation{kind, reason, what, std::move(x)};
  };
  if (kind == "coefficient") {
    for (size_t r : rows) {
      if (m.rows[r].terms.empty() || !m.rows[r].quad.empty()) continue;
      Model x = m;
      Term& t = x.rows[r].terms[size_t(rng.uniform_int(0, int64_t(x.rows[r].terms.size()) - 1))];
      const double old = t.coef;
      t.coef = old * 2.0 + (old >= 0 ? 0.75 : -0.75);
      const std::string what = "row " + m.rows[r].name + ": coefficient " + std::to_string(old) + " -> " +
                               std::to_string(t.coef);
      if (auto mut = done(std::move(x), what)) return mut;
    }
  } else if (kind == "bound") {
    const BoundTargets targets = bound_targets(m);
    for (size_t v : vars) {
      if (targets.lb[v] && targets.ub[v]) continue;
      Model x = m;
      Variable& var = x.vars[v];
      const double fresh = 4321.125 + double(rng.uniform_int(0, 1000));
      std::string what = "variable " + var.name + ": ";
      if (var.type == VarType::Binary) {  // stay inside [0, 1] (an LP file cannot say otherwise)
        if (!targets.ub[v]) {
          what += "ub " + std::to_string(var.ub) + " -> 0";
          var.ub = 0.0;
        } else {
          what += "lb " + std::to_string(var.lb) + " -> 1";
          var.lb = 1.0;
        }
      } else if (!targets.ub[v]) {
        const double lo = std::isfinite(var.lb) ? var.lb : 0.0;
        what += "ub " + std::to_string(var.ub) + " -> ";
        var.ub = lo + fresh;
        what += std::to_string(var.ub);
      } else {
        const double hi = std::isfinite(var.ub) ? var.ub : 0.0;
        what += "lb " + std::to_string(var.lb) + " -> ";
        var.lb = hi - fresh;
        what += std::to_string(var.lb);
      }
      if (auto mut = done(std::move(x), what)) return mut;
    }
    for (size_t r : rows) {
      const Row& row = m.rows[r];
      if (survives_n1(row) || !row.quad.empty() || row.sense == RowSense::EQ || row.sense == RowSense::Range) continue;
      Model x = m;
      // New bound b' = rhs'/a: far below every other UB candidate (<=) or above every LB candidate (>=).
      const double fresh = 4321.125e3 + double(rng.uniform_int(0, 1000));
      const double b = row.sense == RowSense::LE ? -fresh : fresh;
      x.rows[r].rhs = b * row.terms[0].coef;
      if (auto mut = done(std::move(x), "singleton row " + row.name + ": rhs " + std::to_string(row.rhs) + " -> " +
                                            std::to_string(b * row.terms[0].coef)))
        return mut;
    }
  } else if (kind == "type") {
    for (size_t v : vars) {
      Model x = m;
      Variable& var = x.vars[v];
      const VarType old = var.type;
      const VarType now = old == VarType::Continuous ? VarType::Integer
                          : old == VarType::Integer  ? VarType::Continuous
                                                     : VarType::Integer;
      var.type = now;
      if (auto mut = done(std::move(x), "variable " + m.vars[v].name + ": type " + to_string(old) + " -> " +
                                            to_string(now)))
        return mut;
    }
  } else if (kind == "sense") {
    for (size_t r : rows) {
      if (m.rows[r].sense == RowSense::Range || !m.rows[r].quad.empty()) continue;
      Model x = m;
      Row& row = x.rows[r];
      const RowSense old = row.sense;
      row.sense = old == RowSense::LE ? RowSense::GE : old == RowSense::GE ? RowSense::LE : RowSense::GE;
      const std::string what = "row " + row.name + ": sense " + to_string(old) + " -> " + to_string(row.sense);
      if (auto mut = done(std::move(x), what)) return mut;
    }
  } else if (kind == "remove_row") {
    for (size_t r : rows) {
      Model x = m;
      x.rows.erase(x.rows.begin() + std::ptrdiff_t(r));
      if (auto mut = done(std::move(x), "removed row " + m.rows[r].name)) return mut;
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
