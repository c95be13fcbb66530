// global_branch_and_bound (global_qp.hpp): McCormick relaxations solved by CLP / CBC, best-bound-first
// spatial branching, root bound tightening.
#include "lp/global_qp.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <queue>
#include <utility>

#include <fmt/format.h>

#include "lp/solver.hpp"
#include "lp/solver_backends.hpp"
#include "util/timer.hpp"

namespace trex::lp {
namespace {

struct Product {
  int i, j;             // i <= j; i == j: a square
  double weight = 0.0;  // the largest |coefficient| it has anywhere (ranks violations)
};

struct Use {
  int product;
  double coef;
};

struct Node {
  double bound;  // the parent's relaxation bound (minimisation sense)
  int id;
  std::vector<double> lo, hi;
};

struct NodeOrder {  // best bound first, then creation order: deterministic
  bool operator()(const Node& a, const Node& b) const {
    return a.bound != b.bound ? a.bound > b.bound : a.id > b.id;
  }
};

class Search {
 public:
  Search(const Model& m, const GlobalOptions& o) : m_(m), o_(o), n_(m.num_vars()) {
    sign_ = m.objective.sense == ObjSense::Maximize ? -1.0 : 1.0;
    std::map<std::pair<int, int>, int> index;
    auto product = [&](const QuadTerm& q) {
      const std::pair<int, int> key{std::min(q.var1, q.var2), std::max(q.var1, q.var2)};
      auto [it, fresh] = index.emplace(key, int(products_.size()));
      if (fresh) products_.push_back({key.first, key.second});
      Product& p = products_[size_t(it->second)];
      p.weight = std::max(p.weight, std::abs(q.coef));
      return it->second;
    };
    for (const QuadTerm& q : m.objective.quad) obj_quad_.push_back({product(q), sign_ * q.coef});
    row_quad_.resize(size_t(m.num_rows()));
    for (int r = 0; r < m.num_rows(); ++r)
      for (const QuadTerm& q : m.rows[size_t(r)].quad) row_quad_[size_t(r)].push_back({product(q), q.coef});
    in_product_.assign(size_t(n_), false);
    for (const Product& p : products_) in_product_[size_t(p.i)] = in_product_[size_t(p.j)] = true;
    lo0_.resize(size_t(n_));
    hi0_.resize(size_t(n_));
    for (int j = 0; j < n_; ++j) detail::effective_bounds(m.vars[size_t(j)], lo0_[size_t(j)], hi0_[size_t(j)]);
  }

  GlobalResult run(const std::vector<double>* start) {
    GlobalResult out;
    if (start != nullptr && int(start->size()) == n_ && feasible(*start)) offer(*start);
    if (!finite_boxes(out)) return finish(out, false);
    tighten_root();
    std::priority_queue<Node, std::vector<Node>, NodeOrder> open;
    open.push({-kInf, next_id_++, lo0_, hi0_});
    bool stopped = false, unresolved = false;
    int failed_nodes = 0;
    std::string first_failure;
    double open_bound = kInf;
    while (!open.empty()) {
      if (have_inc_ && open.top().bound >= inc_f_ - gap()) break;  // every open node is pruned
      if (out.nodes >= o_.node_limit || (o_.time_limit > 0.0 && timer_.seconds() > o_.time_limit)) {
        stopped = true;
        open_bound = open.top().bound;
        break;
      }
      Node node = open.top();
      open.pop();
      ++out.nodes;
      std::vector<double> xw;
      double z = 0.0;
      // (no cutoff row in the nodes: near the optimum it makes the LP degenerate; the bound prunes instead)
      const SolveStatus st = solve_relaxation(node.lo, node.hi, nullptr, xw, z, nullptr, /*cutoff=*/false);
      if (st == SolveStatus::Infeasible) continue;
      if (st != SolveStatus::Optimal) {  // CLP's numerical trouble on a tiny box: this node stays open
        if (failed_nodes++ == 0) first_failure = fmt::format("a relaxation ended {} at node {}", to_string(st), out.nodes);
        unresolved = true;
        continue;
      }
      const double bound = std::max(z, node.bound);
      std::vector<double> x(xw.begin(), xw.begin() + n_);
      if (feasible(x)) offer(x);
      if (have_inc_ && bound >= inc_f_ - gap()) continue;
      // branch on the most violated product's wider variable
      int best = -1;
      double worst = 0.0;
      for (size_t p = 0; p < products_.size(); ++p) {
        const Product& pr = products_[p];
        const double exact = x[size_t(pr.i)] * x[size_t(pr.j)];
        const double viol = pr.weight * std::abs(xw[size_t(n_) + p] - exact);
        if (viol > worst) {
          worst = viol;
          best = int(p);
        }
      }
      int k = -1;
      if (best >= 0) {
        const Product& pr = products_[size_t(best)];
        auto rel_width = [&](int v) {
          const double w0 = hi0_[size_t(v)] - lo0_[size_t(v)];
          return w0 > 0.0 ? (node.hi[size_t(v)] - node.lo[size_t(v)]) / w0 : 0.0;
        };
        k = rel_width(pr.i) >= rel_width(pr.j) ? pr.i : pr.j;
        if (rel_width(k) <= 1e-12) k = -1;
      }
      if (k < 0) {  // the relaxation is exact here yet its point missed a tolerance: nothing left to split
        unresolved = true;
        continue;
      }
      const double l = node.lo[size_t(k)], u = node.hi[size_t(k)], v = x[size_t(k)];
      double at = (v - l > 1e-3 * (u - l) && u - v > 1e-3 * (u - l)) ? v : 0.5 * (l + u);
      Node left{bound, next_id_++, node.lo, node.hi}, right{bound, next_id_++, node.lo, node.hi};
      if (detail::is_integral_type(m_.vars[size_t(k)].type)) {
        at = std::min(std::floor(at), u - 1.0);
        left.hi[size_t(k)] = at;
        right.lo[size_t(k)] = at + 1.0;
      } else {
        left.hi[size_t(k)] = at;
        right.lo[size_t(k)] = at;
      }
      open.push(std::move(left));
      open.push(std::move(right));
    }
    if (!stopped && !unresolved) return finish(out, true);
    out.message = stopped ? fmt::format("stopped at {} {} with the bound {:.12g}", out.nodes,
                                        out.nodes >= o_.node_limit ? "nodes (the node limit)" : "nodes (the time limit)",
                                        sign_ * open_bound)
                          : failed_nodes > 0
                                ? fmt::format("{} node relaxation(s) failed ({}): not proven", failed_nodes, first_failure)
                                : "a node's relaxation was exact but its point missed the feasibility tolerance";
    out.bound = sign_ * (stopped ? open_bound : -kInf);
    return finish(out, false);
  }

 private:
  double gap() const { return std::max(o_.abs_gap, o_.rel_gap * std::abs(inc_f_)); }

  // the model's objective in the minimisation sense
  double f(const std::vector<double>& x) const {
    double z = m_.objective.constant;
    for (const Term& t : m_.objective.terms) z += t.coef * x[size_t(t.var)];
    for (const QuadTerm& q : m_.objective.quad) z += q.coef * x[size_t(q.var1)] * x[size_t(q.var2)];
    return sign_ * z;
  }

  bool feasible(const std::vector<double>& x) const {
    for (int j = 0; j < n_; ++j) {
      const double tol = o_.feasibility_tol * std::max(1.0, std::abs(x[size_t(j)]));
      if (x[size_t(j)] < lo0_[size_t(j)] - tol || x[size_t(j)] > hi0_[size_t(j)] + tol) return false;
      if (detail::is_integral_type(m_.vars[size_t(j)].type) && std::abs(x[size_t(j)] - std::round(x[size_t(j)])) > 1e-6)
        return false;
    }
    for (const Row& r : m_.rows) {
      double s = 0.0;
      for (const Term& t : r.terms) s += t.coef * x[size_t(t.var)];
      for (const QuadTerm& q : r.quad) s += q.coef * x[size_t(q.var1)] * x[size_t(q.var2)];
      double lo, hi;
      detail::row_bounds(r, lo, hi);
      if (s < lo - o_.feasibility_tol * std::max(1.0, std::abs(lo))) return false;
      if (s > hi + o_.feasibility_tol * std::max(1.0, std::abs(hi))) return false;
    }
    return true;
  }

  void offer(const std::vector<double>& x) {
    const double v = f(x);
    if (!have_inc_ || v < inc_f_) {
      have_inc_ = true;
      inc_f_ = v;
      inc_x_ = x;
    }
  }

  // Every product variable needs finite bounds: the declared ones, else the linear rows' (an LP per side), else
  // what interval arithmetic on the rows and on the incumbent's cutoff gives (fbbt below).
  bool finite_boxes(GlobalResult& out) {
    bool open = false;
    for (int k = 0; k < n_; ++k) {
      if (!in_product_[size_t(k)]) continue;
      for (int side : {-1, +1}) {
        double& b = side < 0 ? lo0_[size_t(k)] : hi0_[size_t(k)];
        if (std::isfinite(b)) continue;
        Model lin;
        lin.vars = m_.vars;
        lin.rebuild_index();
        for (const Row& r : m_.rows)
          if (r.quad.empty()) lin.rows.push_back(r);
        lin.objective.sense = side < 0 ? ObjSense::Minimize : ObjSense::Maximize;
        lin.objective.terms = {{k, 1.0}};
        const SolveResult r = detail::solve_coin(lin, lp_options());
        if (r.status == SolveStatus::Optimal)
          b = r.x[size_t(k)] + side * 1e-7 * std::max(1.0, std::abs(r.x[size_t(k)]));  // a little slack outward
        else
          open = true;
      }
    }
    if (open) fbbt();
    for (int k = 0; k < n_; ++k) {
      if (!in_product_[size_t(k)]) continue;
      for (int side : {-1, +1})
        if (!std::isfinite(side < 0 ? lo0_[size_t(k)] : hi0_[size_t(k)])) {
          out.message = fmt::format("variable '{}' has no finite {} bound (neither declared nor implied by the rows): no "
                                    "global certificate", m_.vars[size_t(k)].name, side < 0 ? "lower" : "upper");
          return false;
        }
    }
    return true;
  }

  // Feasibility-based bound tightening by interval arithmetic: each row (and the cutoff f(x) <= incumbent) read as
  // sum of terms <= U; a term is at most U less the other terms' lower bounds, which bounds a linear term's
  // variable, a square's (|x| <= sqrt(R / a)) and a product's factor when the other factor has a positive lower
  // bound. A few rounds; every new bound gets 1e-7 relative slack outward.
  void fbbt() {
    struct T {
      int i, j;  // j < 0: linear in i; i == j: a square
      double a;
    };
    std::vector<std::pair<std::vector<T>, double>> rows;  // sum of terms <= U
    auto add_row = [&](const std::vector<Term>& lin, const std::vector<QuadTerm>& quad, double scale, double u) {
      std::vector<T> t;
      for (const Term& x : lin) t.push_back({x.var, -1, scale * x.coef});
      for (const QuadTerm& q : quad) t.push_back({q.var1, q.var2, scale * q.coef});
      rows.push_back({std::move(t), u});
    };
    for (const Row& r : m_.rows) {
      double lo, hi;
      detail::row_bounds(r, lo, hi);
      if (std::isfinite(hi)) add_row(r.terms, r.quad, 1.0, hi);
      if (std::isfinite(lo)) add_row(r.terms, r.quad, -1.0, -lo);
    }
    if (have_inc_) add_row(m_.objective.terms, m_.objective.quad, sign_, inc_f_ - sign_ * m_.objective.constant);
    auto mul = [](double a, double b) { return a == 0.0 || b == 0.0 ? 0.0 : a * b; };
    auto low = [&](const T& t) {  // the term's lower bound over the box
      const double li = lo0_[size_t(t.i)], ui = hi0_[size_t(t.i)];
      if (t.j < 0) return t.a > 0 ? mul(t.a, li) : mul(t.a, ui);
      double pl, pu;  // the range of x_i * x_j
      if (t.i == t.j) {
        const double m = std::max(std::abs(li), std::abs(ui));
        pl = (li <= 0.0 && ui >= 0.0) ? 0.0 : std::min(li * li, ui * ui);
        pu = m * m;
      } else {
        const double lj = lo0_[size_t(t.j)], uj = hi0_[size_t(t.j)];
        const double c[4] = {mul(li, lj), mul(li, uj), mul(ui, lj), mul(ui, uj)};
        pl = *std::min_element(c, c + 4);
        pu = *std::max_element(c, c + 4);
      }
      return t.a > 0 ? mul(t.a, pl) : mul(t.a, pu);
    };
    auto tighten = [&](double& b, double v, int side) {  // side -1: v is a lower bound, +1 an upper one
      if (!std::isfinite(v)) return;
      v += side * 1e-7 * std::max(1.0, std::abs(v));
      if (side < 0 ? v > b : v < b) b = v;
    };
    for (int round = 0; round < 5; ++round) {
      for (const auto& [terms, u] : rows) {
        double total = 0.0;
        int infinite = 0, which = -1;
        for (size_t k = 0; k < terms.size(); ++k) {
          const double l = low(terms[k]);
          if (std::isfinite(l)) total += l;
          else ++infinite, which = int(k);
        }
        if (infinite > 1) continue;
        for (size_t k = 0; k < terms.size(); ++k) {
          if (infinite == 1 && int(k) != which) continue;
          const T& t = terms[k];
          const double rest = infinite == 1 ? total : total - low(t);
          const double r = u - rest;  // t <= r
          double& li = lo0_[size_t(t.i)];
          double& ui = hi0_[size_t(t.i)];
          if (t.j < 0) {
            tighten(t.a > 0 ? ui : li, r / t.a, t.a > 0 ? +1 : -1);
          } else if (t.i == t.j) {
            if (t.a > 0 && r >= 0.0) {
              const double m = std::sqrt(r / t.a);
              tighten(ui, m, +1);
              tighten(li, -m, -1);
            }
          } else if (t.a > 0 && r >= 0.0) {
            for (int side = 0; side < 2; ++side) {  // x_i <= r / (a * lo_j) when x_i >= 0 and lo_j > 0
              const int a = side == 0 ? t.i : t.j, b = side == 0 ? t.j : t.i;
              if (lo0_[size_t(a)] >= 0.0 && lo0_[size_t(b)] > 0.0)
                tighten(hi0_[size_t(a)], r / (t.a * lo0_[size_t(b)]), +1);
            }
          }
        }
      }
    }
  }

  // One round of LP bound tightening on the product variables over the root relaxation (with the cutoff).
  void tighten_root() {
    for (int k = 0; k < n_; ++k) {
      if (!in_product_[size_t(k)]) continue;
      for (int side : {-1, +1}) {
        std::vector<double> xw;
        double z = 0.0;
        const std::pair<int, double> objective{k, double(side)};
        const SolveStatus st = solve_relaxation(lo0_, hi0_, &objective, xw, z);
        if (st != SolveStatus::Optimal) continue;
        // side +1 minimised x_k (a lower bound), side -1 maximised it (an upper bound); a little slack outward
        const double v = xw[size_t(k)], slack = 1e-7 * std::max(1.0, std::abs(v));
        if (side > 0) lo0_[size_t(k)] = std::max(lo0_[size_t(k)], std::min(v - slack, hi0_[size_t(k)]));
        else hi0_[size_t(k)] = std::min(hi0_[size_t(k)], std::max(v + slack, lo0_[size_t(k)]));
      }
    }
  }

  SolveOptions lp_options() const {
    SolveOptions s;
    s.confirm_verdicts = false;
    if (o_.time_limit > 0.0) s.time_limit = std::max(0.001, o_.time_limit - timer_.seconds());
    return s;
  }

  // The McCormick relaxation over [lo, hi] (minimisation sense; with the incumbent's cutoff when there is one),
  // or, with `bound_var`, the same rows minimising side * x_k. xw: x then one w per product; z its objective.
  SolveStatus solve_relaxation(const std::vector<double>& lo, const std::vector<double>& hi,
                               const std::pair<int, double>* bound_var, std::vector<double>& xw, double& z,
                               const std::vector<bool>* drop_rows = nullptr, bool cutoff = true) const {
    Model r;
    for (int j = 0; j < n_; ++j) r.add_var(fmt::format("x{}", j), m_.vars[size_t(j)].type, lo[size_t(j)], hi[size_t(j)]);
    const int P = int(products_.size());
    for (int p = 0; p < P; ++p) {
      const Product& pr = products_[size_t(p)];
      const bool square = pr.i == pr.j;
      r.add_var(fmt::format("w{}", p), VarType::Continuous, square ? 0.0 : -kInf, kInf);
    }
    auto w = [&](int p) { return n_ + p; };
    // objective (minimisation sense)
    Objective obj;
    obj.constant = sign_ * m_.objective.constant;
    for (const Term& t : m_.objective.terms) obj.terms.push_back({t.var, sign_ * t.coef});
    for (const Use& u : obj_quad_) obj.terms.push_back({w(u.product), u.coef});
    for (const Row& row : m_.rows) {
      const size_t ri = size_t(&row - m_.rows.data());
      if (drop_rows != nullptr && (*drop_rows)[ri]) continue;
      Row lin{row.name, row.terms, {}, row.sense, row.rhs, row.range_upper};
      for (const Use& u : row_quad_[ri]) lin.terms.push_back({w(u.product), u.coef});
      r.rows.push_back(std::move(lin));
    }
    for (int p = 0; p < P; ++p) {
      const Product& pr = products_[size_t(p)];
      const double li = lo[size_t(pr.i)], ui = hi[size_t(pr.i)], lj = lo[size_t(pr.j)], uj = hi[size_t(pr.j)];
      auto add = [&](std::vector<Term> terms, RowSense s, double rhs) {
        r.rows.push_back(Row{fmt::format("mc{}_{}", p, r.rows.size()), std::move(terms), {}, s, rhs, 0.0});
      };
      if (pr.i == pr.j) {  // w = x^2: secant above, tangents at both ends and the middle below
        add({{w(p), 1.0}, {pr.i, -(li + ui)}}, RowSense::LE, -li * ui);
        for (double a : {li, ui, 0.5 * (li + ui)}) add({{w(p), 1.0}, {pr.i, -2.0 * a}}, RowSense::GE, -a * a);
      } else {
        add({{w(p), 1.0}, {pr.i, -lj}, {pr.j, -li}}, RowSense::GE, -li * lj);
        add({{w(p), 1.0}, {pr.i, -uj}, {pr.j, -ui}}, RowSense::GE, -ui * uj);
        add({{w(p), 1.0}, {pr.i, -lj}, {pr.j, -ui}}, RowSense::LE, -ui * lj);
        add({{w(p), 1.0}, {pr.i, -uj}, {pr.j, -li}}, RowSense::LE, -li * uj);
      }
    }
    if (have_inc_ && cutoff) {  // nothing worse than the incumbent (less the gap) is of interest
      Row cut{"cutoff", obj.terms, {}, RowSense::LE, inc_f_ - obj.constant, 0.0};
      if (bound_var == nullptr) cut.rhs -= gap();
      r.rows.push_back(std::move(cut));
    }
    if (bound_var != nullptr) {
      r.objective.terms = {{bound_var->first, bound_var->second}};
    } else {
      r.objective = obj;
    }
    r.objective.sense = ObjSense::Minimize;
    const SolveResult res = detail::solve_coin(r, lp_options());
    if (res.status != SolveStatus::Optimal) return res.status;
    xw = res.x;
    z = r.objective.constant;
    for (const Term& t : r.objective.terms) z += t.coef * xw[size_t(t.var)];
    return SolveStatus::Optimal;
  }

  // The incumbent's face solved exactly: variables within 1e-6 of a bound are fixed there, and when then every
  // product of the objective and of the active rows has a fixed factor, the model restricted to that face is an
  // LP (inactive quadratic rows left out and checked after). Its vertex replaces an interior-point answer's
  // near-vertex when it is feasible and no worse than the gap: exact values where the optimum is a vertex.
  void polish() {
    if (!have_inc_) return;
    std::vector<double> lo = lo0_, hi = hi0_;
    std::vector<bool> fixed(size_t(n_), false);
    for (int j = 0; j < n_; ++j) {
      const Variable& v = m_.vars[size_t(j)];
      double l, u;
      detail::effective_bounds(v, l, u);
      const double x = inc_x_[size_t(j)];
      for (double b : {l, u})
        if (std::isfinite(b) && std::abs(x - b) <= 1e-6 * std::max(1.0, std::abs(b))) {
          lo[size_t(j)] = hi[size_t(j)] = b;
          fixed[size_t(j)] = true;
        }
    }
    auto linear_product = [&](int p) { return fixed[size_t(products_[size_t(p)].i)] || fixed[size_t(products_[size_t(p)].j)]; };
    for (const Use& u : obj_quad_)
      if (!linear_product(u.product)) return;
    std::vector<bool> drop(size_t(m_.num_rows()), false);
    for (int r = 0; r < m_.num_rows(); ++r) {
      bool linear = true;
      for (const Use& u : row_quad_[size_t(r)]) linear = linear && linear_product(u.product);
      if (linear) continue;
      const Row& row = m_.rows[size_t(r)];
      double s = 0.0, l, h;
      for (const Term& t : row.terms) s += t.coef * inc_x_[size_t(t.var)];
      for (const QuadTerm& q : row.quad) s += q.coef * inc_x_[size_t(q.var1)] * inc_x_[size_t(q.var2)];
      detail::row_bounds(row, l, h);
      const double slack = std::min(s - l, h - s);
      if (slack <= 1e-6 * std::max({1.0, std::abs(l == -kInf ? 0.0 : l), std::abs(h == kInf ? 0.0 : h)})) return;
      drop[size_t(r)] = true;  // inactive: left out, checked after
    }
    // On the face every kept product is linear: the McCormick rows over the fixed factor are exact.
    std::vector<double> xw;
    double z = 0.0;
    if (solve_relaxation(lo, hi, nullptr, xw, z, &drop, /*cutoff=*/false) != SolveStatus::Optimal) return;
    std::vector<double> x(xw.begin(), xw.begin() + n_);
    if (feasible(x) && f(x) <= inc_f_ + gap()) {
      inc_x_ = x;
      inc_f_ = f(x);
    }
  }

  GlobalResult finish(GlobalResult& out, bool proven) {
    polish();
    out.proven = proven;
    if (have_inc_) {
      out.x = inc_x_;
      out.objective = sign_ * inc_f_;
      if (proven) out.bound = sign_ * inc_f_;
    } else if (proven) {
      out.infeasible = true;
    }
    if (proven)
      out.message = have_inc_ ? fmt::format("global optimum within {:.3g} proven by spatial branch and bound ({} nodes)",
                                            gap(), out.nodes)
                              : fmt::format("infeasible: proven by spatial branch and bound ({} nodes)", out.nodes);
    return out;
  }

  const Model& m_;
  const GlobalOptions& o_;
  const int n_;
  double sign_ = 1.0;
  std::vector<Product> products_;
  std::vector<Use> obj_quad_;
  std::vector<std::vector<Use>> row_quad_;
  std::vector<bool> in_product_;
  std::vector<double> lo0_, hi0_;
  bool have_inc_ = false;
  double inc_f_ = kInf;
  std::vector<double> inc_x_;
  int next_id_ = 0;
  Timer timer_;
};

}  // namespace

GlobalResult global_branch_and_bound(const Model& model, const std::vector<double>* start,
                                     const GlobalOptions& options) {
  return Search(model, options).run(start);
}

}  // namespace trex::lp
