// Family-file interpreter: draws an Instance from a FamilySpec (family_file.hpp). Draw order, so that a
// seed gives the same instance every time: the variant (uniform over the declared variants), every active
// set's size (in declaration order), then every set's labels, then the parameters in declaration order (a
// [[group]] at its first member, element by element over the group's sets), then, after the model is built,
// the narrative (uniform over the applicable intros, when there are several), the intro, the rules and the
// goal, left to right within each text. The lp::Model, the formulas of the answers and the gurobipy body
// all come from the same templates.
#include <cmath>
#include <fmt/format.h>
#include <functional>
#include <map>

#include "ordata/domains.hpp"
#include "ordata/families.hpp"
#include "ordata/family_file.hpp"
#include "ordata/phrasing.hpp"
#include "util/error.hpp"

namespace trex::ordata {

namespace {

struct Linear {
  double constant = 0;
  std::vector<std::pair<int, double>> terms;  // variable index, coefficient (first-appearance order)
  bool has_vars() const { return !terms.empty(); }
};

class Interpreter {
 public:
  Interpreter(const FamilySpec& s, Difficulty d, const Domain& dom, Rng& rng) : s_(s), diff_(d), dom_(dom), rng_(rng) {}

  Instance run() {
    Instance in;
    if (!s_.variants.empty()) variant_ = s_.variants[size_t(rng_.uniform_int(0, int64_t(s_.variants.size()) - 1))];
    in.variant = variant_.empty() ? s_.name : variant_;
    in.name = s_.model_name;
    draw_sets(in);
    draw_params();
    for (const auto& key : s_.data_order)
      for (const auto& p : s_.params)
        if (active(p.variants) && p.exported && p.key == key) export_param(in, p);
    for (const auto& p : s_.params)
      if (active(p.variants) && p.exported && !exported_.count(p.symbol)) export_param(in, p);
    build_model(in);
    write_text(in);
    in.python_body = python(in);
    in.family_name = s_.name;
    in.family_pitfalls = s_.pitfalls;
    in.narrative = narrative_;
    in.phrasing = std::move(phrasing_);
    return in;
  }

 private:
  struct SetVal {
    const FamilySetSpec* spec;
    std::vector<std::string> elements;
  };
  struct ParamVal {
    const FamilyParamSpec* spec;
    std::vector<std::string> over;
    std::vector<double> v;
    std::vector<char> done;
  };
  struct VarVal {
    const FamilyVarSpec* spec;
    int first = 0;  // model column of the first element
  };
  using Bind = std::map<std::string, std::pair<std::string, int>>;  // index variable -> (set, element)

  [[noreturn]] void err(int line, const std::string& w) const { throw Error(s_.file + ":" + std::to_string(line) + ": " + w); }
  bool active(const std::vector<std::string>& v) const {
    if (v.empty()) return true;
    for (const auto& x : v)
      if (x == variant_) return true;
    return false;
  }
  const SetVal& set(const std::string& sym) const { return sets_.at(sym); }
  size_t offset(const std::vector<std::string>& over, const std::vector<int>& idx) const {
    size_t o = 0;
    for (size_t k = 0; k < over.size(); ++k) o = o * set(over[k]).elements.size() + size_t(idx[k]);
    return o;
  }
  // Row-major loop over the sets of `binders`, binding each index variable.
  void each(const std::vector<std::pair<std::string, std::string>>& binders, Bind& b, const std::function<void()>& f, size_t k = 0) {
    if (k == binders.size()) return f();
    const auto& [iv, sym] = binders[k];
    size_t n = set(sym).elements.size();
    for (size_t e = 0; e < n; ++e) {
      b[iv] = {sym, int(e)};
      each(binders, b, f, k + 1);
    }
    b.erase(iv);
  }

  void draw_sets(Instance& in) {
    std::vector<const FamilySetSpec*> act;
    std::vector<int> sizes;
    for (const auto& st : s_.sets)
      if (active(st.variants)) act.push_back(&st), sizes.push_back(st.sizes[size_t(diff_)] + int(rng_.uniform_int(0, st.jitter)));
    for (size_t k = 0; k < act.size(); ++k) {
      const auto& st = *act[k];
      const std::vector<std::string>* pool = &st.labels;
      const std::string& dp = st.domain_pool;
      if (dp == "products") pool = &dom_.products;
      else if (dp == "resources") pool = &dom_.resources;
      else if (dp == "jobs") pool = &dom_.jobs;
      else if (dp == "ingredients") pool = &dom_.ingredients;
      else if (dp == "attributes") pool = &dom_.attributes;
      else if (dp == "assets") pool = &dom_.assets;
      else if (dp == "cities") pool = &city_names();
      else if (dp == "people") pool = &person_names();
      sets_[st.symbol] = {&st, pick_labels(rng_, *pool, sizes[k])};
    }
    for (const auto* st : act) {
      set_pos_[st->symbol] = in.add_set(st->symbol, st->key, words(st->description, st->line), sets_[st->symbol].elements);
    }
  }

  const FamilyGroupSpec* group_of(const std::string& sym) const {
    for (const auto& g : s_.groups)
      for (const auto& m : g.members)
        if (m == sym) return &g;
    return nullptr;
  }

  void alloc(const FamilyParamSpec& p) {
    ParamVal& pv = params_[p.symbol];
    pv.spec = &p;
    pv.over = p.over;
    size_t n = 1;
    for (const auto& o : p.over) n *= set(o).elements.size();
    pv.v.assign(n, 0.0);
    pv.done.assign(n, 0);
  }
  void draw_element(ParamVal& pv, const std::vector<int>& idx) {
    Bind b;
    for (size_t k = 0; k < pv.over.size(); ++k) b[set(pv.over[k]).spec->index] = {pv.over[k], idx[k]};
    double x = eval(*pv.spec->value, b, pv.spec->value->line);
    if (!std::isfinite(x)) err(pv.spec->line, "parameter '" + pv.spec->symbol + "' drew a value that is not finite");
    if (pv.spec->exported && pv.spec->decimals == 0 && x != std::floor(x))
      err(pv.spec->line, fmt::format("parameter '{}' has decimals = 0 but drew {} (round it, or set decimals)", pv.spec->symbol, x));
    size_t o = offset(pv.over, idx);
    pv.v[o] = x;
    pv.done[o] = 1;
  }
  // Every element of pv whose group indices are fixed to `fixed` (set -> element), row-major.
  void draw_rest(ParamVal& pv, const std::map<std::string, int>& fixed, std::vector<int>& idx, size_t k) {
    if (k == pv.over.size()) return draw_element(pv, idx);
    auto f = fixed.find(pv.over[k]);
    if (f != fixed.end()) {
      idx[k] = f->second;
      return draw_rest(pv, fixed, idx, k + 1);
    }
    for (size_t e = 0; e < set(pv.over[k]).elements.size(); ++e) idx[k] = int(e), draw_rest(pv, fixed, idx, k + 1);
  }
  void draw_params() {
    for (const auto& p : s_.params) {
      if (!active(p.variants) || params_.count(p.symbol)) continue;
      const FamilyGroupSpec* g = group_of(p.symbol);
      std::vector<ParamVal*> members;
      if (g) {
        for (const auto& m : g->members)
          for (const auto& q : s_.params)
            if (q.symbol == m && active(q.variants)) alloc(q), members.push_back(&params_[m]);
      } else {
        alloc(p);
        members.push_back(&params_[p.symbol]);
      }
      std::vector<std::string> outer = g ? g->over : std::vector<std::string>{};
      std::map<std::string, int> fixed;
      std::function<void(size_t)> loop = [&](size_t k) {
        if (k == outer.size()) {
          for (ParamVal* m : members) {
            std::vector<int> idx(m->over.size(), 0);
            draw_rest(*m, fixed, idx, 0);
          }
          return;
        }
        for (size_t e = 0; e < set(outer[k]).elements.size(); ++e) fixed[outer[k]] = int(e), loop(k + 1);
      };
      loop(0);
    }
  }

  void export_param(Instance& in, const FamilyParamSpec& p) {
    std::vector<int> dims;
    for (const auto& o : p.over) dims.push_back(set_pos_.at(o));
    in.add_param(symbol_text(p.symbol, p.over), p.key, words(p.description, p.line), words(p.unit, p.line), dims,
                 params_.at(p.symbol).v, p.decimals);
    exported_.insert({p.symbol, 1});
  }
  std::string symbol_text(const std::string& sym, const std::vector<std::string>& over) const {
    if (over.empty()) return sym;
    std::string s = sym + "[";
    for (size_t k = 0; k < over.size(); ++k) s += (k ? "," : "") + set(over[k]).spec->index;
    return s + "]";
  }

  // ---- evaluation ----
  double eval(const Expr& e, Bind& b, int line) {
    switch (e.kind) {
      case Expr::Num: return e.value;
      case Expr::Paren: return eval(*e.args[0], b, line);
      case Expr::Unary: {
        double x = eval(*e.args[0], b, line);
        return e.text == "-" ? -x : double(x == 0);
      }
      case Expr::Binary: {
        if (e.text == "and") return eval(*e.args[0], b, line) != 0 && eval(*e.args[1], b, line) != 0;
        if (e.text == "or") return eval(*e.args[0], b, line) != 0 || eval(*e.args[1], b, line) != 0;
        double l = eval(*e.args[0], b, line);
        double r = eval(*e.args[1], b, line);
        const std::string& op = e.text;
        if (op == "+") return l + r;
        if (op == "-") return l - r;
        if (op == "*") return l * r;
        if (op == "/") {
          if (r == 0) err(line, "division by zero");
          return l / r;
        }
        if (op == "<") return l < r;
        if (op == "<=") return l <= r;
        if (op == ">") return l > r;
        if (op == ">=") return l >= r;
        if (op == "==") return l == r;
        return l != r;
      }
      case Expr::Agg: {
        double acc = e.text == "sum" ? 0.0 : NAN;
        each(e.binders, b, [&] {
          if (e.filter && eval(*e.filter, b, line) == 0) return;
          double x = eval(*e.args.back(), b, line);
          if (e.text == "sum") acc += x;
          else if (std::isnan(acc)) acc = x;
          else acc = e.text == "max" ? std::max(acc, x) : std::min(acc, x);
        });
        if (std::isnan(acc)) err(line, e.text + "() over an empty domain");
        return acc;
      }
      case Expr::Call: return call(e, b, line);
      case Expr::Ref: {
        if (e.text == "inf" && e.index.empty()) return INFINITY;
        if (e.text == "level" && e.index.empty()) return double(int(diff_));
        auto p = params_.find(e.text);
        if (p == params_.end()) err(line, "parameter '" + e.text + "' is used before it is drawn");
        std::vector<int> idx;
        for (const auto& iv : e.index) idx.push_back(b.at(iv).second);
        size_t o = offset(p->second.over, idx);
        if (!p->second.done[o]) err(line, "parameter '" + e.text + "' is used before it is drawn (at this element)");
        return p->second.v[o];
      }
    }
    return 0;
  }
  double call(const Expr& e, Bind& b, int line) {
    const std::string& f = e.text;
    if (f == "if") return eval(*e.args[0], b, line) != 0 ? eval(*e.args[1], b, line) : eval(*e.args[2], b, line);
    if (f == "card") return double(set(e.args[0]->text).elements.size());
    std::vector<double> a;
    for (const auto& x : e.args) a.push_back(eval(*x, b, line));
    if (f == "uniform_int") {
      if (a[0] != std::floor(a[0]) || a[1] != std::floor(a[1]) || a[0] > a[1] || std::fabs(a[0]) > 1e15 || std::fabs(a[1]) > 1e15)
        err(line, fmt::format("uniform_int(lo, hi) needs integers lo <= hi (got {}, {})", a[0], a[1]));
      return double(rng_.uniform_int(int64_t(a[0]), int64_t(a[1])));
    }
    if (f == "uniform") {
      if (!(a[0] <= a[1]) || !std::isfinite(a[0]) || !std::isfinite(a[1])) err(line, fmt::format("uniform(lo, hi) needs lo <= hi (got {}, {})", a[0], a[1]));
      return rng_.uniform(a[0], a[1]);
    }
    if (f == "bernoulli") {
      if (!(a[0] >= 0 && a[0] <= 1)) err(line, fmt::format("bernoulli(p) needs 0 <= p <= 1 (got {})", a[0]));
      return rng_.uniform() < a[0] ? 1.0 : 0.0;
    }
    if (f == "normal") {
      if (!(a[1] >= 0)) err(line, "normal(mean, sd) needs sd >= 0");
      return a[0] + a[1] * rng_.normal();
    }
    if (f == "round") {
      if (a.size() == 1) return std::round(a[0]);
      if (a[1] != std::floor(a[1]) || a[1] < 0 || a[1] > 9) err(line, "round(x, d) needs d in 0..9");
      double p = std::pow(10.0, a[1]);
      return std::round(a[0] * p) / p;
    }
    if (f == "floor") return std::floor(a[0]);
    if (f == "ceil") return std::ceil(a[0]);
    if (f == "abs") return std::fabs(a[0]);
    double r = a[0];
    for (double x : a) r = f == "max" ? std::max(r, x) : std::min(r, x);
    return r;
  }

  // Linear evaluation of model templates (variables allowed; products need a constant side).
  Linear lin(const Expr& e, Bind& b, int line) {
    auto constant = [](double c) {
      Linear l;
      l.constant = c;
      return l;
    };
    switch (e.kind) {
      case Expr::Paren: return lin(*e.args[0], b, line);
      case Expr::Unary: {
        if (e.text != "-") break;
        Linear l = lin(*e.args[0], b, line);
        l.constant = -l.constant;
        for (auto& t : l.terms) t.second = -t.second;
        return l;
      }
      case Expr::Binary: {
        if (e.text != "+" && e.text != "-" && e.text != "*" && e.text != "/") break;
        Linear l = lin(*e.args[0], b, line), r = lin(*e.args[1], b, line);
        if (e.text == "+" || e.text == "-") {
          double sg = e.text == "+" ? 1.0 : -1.0;
          l.constant += sg * r.constant;
          for (auto& t : r.terms) add_term(l, t.first, sg * t.second);
          return l;
        }
        if (e.text == "/") {
          if (r.has_vars()) err(line, "division by an expression with variables is not linear");
          if (r.constant == 0) err(line, "division by zero");
          l.constant /= r.constant;
          for (auto& t : l.terms) t.second /= r.constant;
          return l;
        }
        if (l.has_vars() && r.has_vars()) err(line, "a product of two variable expressions is not linear");
        const Linear& v = l.has_vars() ? l : r;
        double c = l.has_vars() ? r.constant : l.constant;
        Linear out;
        out.constant = l.has_vars() ? l.constant * c : c * r.constant;
        for (const auto& t : v.terms) out.terms.push_back({t.first, l.has_vars() ? t.second * c : c * t.second});
        return out;
      }
      case Expr::Agg: {
        if (e.text != "sum") break;
        Linear acc;
        each(e.binders, b, [&] {
          if (e.filter && eval(*e.filter, b, line) == 0) return;
          Linear x = lin(*e.args.back(), b, line);
          acc.constant += x.constant;
          for (auto& t : x.terms) add_term(acc, t.first, t.second);
        });
        return acc;
      }
      case Expr::Ref: {
        auto v = vars_.find(e.text);
        if (v == vars_.end()) break;
        std::vector<int> idx;
        for (const auto& iv : e.index) idx.push_back(b.at(iv).second);
        Linear l;
        l.terms.push_back({v->second.first + int(offset(v->second.spec->over, idx)), 1.0});
        return l;
      }
      default: break;
    }
    if (mentions_var(e)) err(line, "'" + math(e) + "' is not linear in the variables");
    return constant(eval(e, b, line));
  }
  static void add_term(Linear& l, int var, double c) {
    for (auto& t : l.terms)
      if (t.first == var) {
        t.second += c;
        return;
      }
    l.terms.push_back({var, c});
  }
  bool mentions_var(const Expr& e) const {
    if (e.kind == Expr::Ref && vars_.count(e.text)) return true;
    for (const auto& a : e.args)
      if (mentions_var(*a)) return true;
    return false;
  }
  std::vector<lp::Term> row_terms(const Linear& l) const {
    std::vector<lp::Term> t;
    for (const auto& [v, c] : l.terms)
      if (c != 0.0) t.push_back({v, c});
    return t;
  }

  void build_model(Instance& in) {
    auto& m = in.model;
    for (const auto& v : s_.vars) {
      if (!active(v.variants)) continue;
      VarVal vv{&v, int(m.vars.size())};
      std::vector<std::pair<std::string, std::string>> binders;
      for (const auto& o : v.over) binders.push_back({set(o).spec->index, o});
      Bind b;
      lp::VarType type = v.type == "binary" ? lp::VarType::Binary : v.type == "integer" ? lp::VarType::Integer : lp::VarType::Continuous;
      each(binders, b, [&] {
        std::string name = v.symbol;
        for (const auto& [iv, sym] : binders) name += "_" + set(sym).elements[size_t(b.at(iv).second)];
        double lo = v.lower ? eval(*v.lower, b, v.lower->line) : 0.0;
        double hi = v.upper ? eval(*v.upper, b, v.upper->line) : (v.type == "binary" ? 1.0 : lp::kInf);
        if (std::isnan(lo) || std::isnan(hi) || lo > hi) err(v.line, "variable " + name + " has bounds " + fmt::format("{} > {}", lo, hi));
        m.add_var(name, type, lo, hi);
      });
      vars_[v.symbol] = vv;
      in.vars.push_back({symbol_text(v.symbol, v.over), words(v.description, v.line), domain_text(v)});
    }
    for (const auto& o : s_.objectives) {
      if (!active(o.variants)) continue;
      Bind b;
      Linear l = lin(*o.expr, b, o.expr->line);
      in.sense = o.sense == "minimize" ? lp::ObjSense::Minimize : lp::ObjSense::Maximize;
      m.objective.sense = in.sense;
      m.objective.terms = row_terms(l);
      m.objective.constant = l.constant;
      in.objective_formula = o.sense + " " + math(*o.expr);
      in.objective_description = words(o.description, o.line);
      in.objective_unit = words(o.unit, o.line);
    }
    for (const auto& c : s_.constraints) {
      if (!active(c.variants)) continue;
      Bind b;
      each(c.forall, b, [&] {
        if (c.condition && eval(*c.condition, b, c.lhs->line) == 0) return;
        Linear l = lin(*c.lhs, b, c.lhs->line), r = lin(*c.rhs, b, c.lhs->line);
        for (auto& t : r.terms) add_term(l, t.first, -t.second);
        std::string name = c.name;
        for (const auto& [iv, sym] : c.forall) name += "_" + set(sym).elements[size_t(b.at(iv).second)];
        lp::RowSense sense = c.sense == "<=" ? lp::RowSense::LE : c.sense == ">=" ? lp::RowSense::GE : lp::RowSense::EQ;
        add_row(m, name, row_terms(l), sense, r.constant - l.constant);
      });
      std::string f = math(*c.lhs) + " " + c.sense + " " + math(*c.rhs);
      if (!c.forall.empty()) {
        f += "   for all ";
        for (size_t k = 0; k < c.forall.size(); ++k) f += (k ? ", " : "") + c.forall[k].first + " in " + c.forall[k].second;
        if (c.condition) f += " with " + math(*c.condition);
      }
      in.constraints.push_back({c.name, f, words(c.description, c.line)});
    }
  }
  std::string domain_text(const FamilyVarSpec& v) const {
    if (v.type == "binary") return "binary";
    std::string sym = symbol_text(v.symbol, v.over), lo = v.lower ? math(*v.lower) : "0";
    if (!v.upper) return v.type + ", >= " + lo;
    return v.type + ", " + lo + " <= " + sym + " <= " + math(*v.upper);
  }

  // ---- printing: math (answers' formulas) and Python (the gurobipy body) ----
  std::string math(const Expr& e) const {
    switch (e.kind) {
      case Expr::Num: return e.text;
      case Expr::Paren: return "(" + math(*e.args[0]) + ")";
      case Expr::Unary: return e.text == "-" ? "-" + math(*e.args[0]) : "not " + math(*e.args[0]);
      case Expr::Binary: return math(*e.args[0]) + " " + e.text + " " + math(*e.args[1]);
      case Expr::Call: {
        std::string s = e.text + "(";
        for (size_t k = 0; k < e.args.size(); ++k) s += (k ? ", " : "") + math(*e.args[k]);
        return s + ")";
      }
      case Expr::Agg: {
        std::string s = e.text + "_{";
        for (size_t k = 0; k < e.binders.size(); ++k) s += (k ? ", " : "") + e.binders[k].first + " in " + e.binders[k].second;
        if (e.filter) s += ": " + math(*e.filter);
        return s + "} " + math(*e.args.back());
      }
      case Expr::Ref: {
        if (e.index.empty()) return e.text;
        std::string s = e.text + "[";
        for (size_t k = 0; k < e.index.size(); ++k) s += (k ? "," : "") + e.index[k];
        return s + "]";
      }
    }
    return "";
  }
  std::string py(const Expr& e) const {
    switch (e.kind) {
      case Expr::Num: return e.text;
      case Expr::Paren: return "(" + py(*e.args[0]) + ")";
      case Expr::Unary: return e.text == "-" ? "-" + py(*e.args[0]) : "not " + py(*e.args[0]);
      case Expr::Binary: return py(*e.args[0]) + " " + e.text + " " + py(*e.args[1]);
      case Expr::Call: {
        if (e.text == "card") return "len(" + set(e.args[0]->text).spec->key + ")";
        if (e.text == "if") return "(" + py(*e.args[1]) + " if " + py(*e.args[0]) + " else " + py(*e.args[2]) + ")";
        std::string f = e.text == "floor" || e.text == "ceil" ? "math." + e.text : e.text;
        std::string s = f + "(";
        for (size_t k = 0; k < e.args.size(); ++k) s += (k ? ", " : "") + py(*e.args[k]);
        return s + ")";
      }
      case Expr::Agg: {
        std::string s = (e.text == "sum" ? (mentions_var(*e.args.back()) ? "gp.quicksum(" : "sum(") : e.text + "(") + py(*e.args.back());
        for (const auto& [iv, sym] : e.binders) s += " for " + iv + " in " + set(sym).spec->key;
        if (e.filter) s += " if " + py(*e.filter);
        return s + ")";
      }
      case Expr::Ref: {
        if (e.text == "inf") return "float(\"inf\")";
        if (vars_.count(e.text)) {
          if (e.index.empty()) return e.text;
          std::string s = e.text + "[";
          for (size_t k = 0; k < e.index.size(); ++k) s += (k ? ", " : "") + e.index[k];
          return s + "]";
        }
        std::string s = params_.at(e.text).spec->key;
        for (const auto& iv : e.index) s += "[" + iv + "]";
        return s;
      }
    }
    return "";
  }
  std::string python(const Instance& in) const {
    std::string s = "import math\nmodel = gp.Model(\"" + in.name + "\")\n";
    for (const auto& v : s_.vars) {
      if (!active(v.variants)) continue;
      std::string args;
      if (v.type == "binary") args = "vtype=GRB.BINARY";
      else {
        args = "lb=" + (v.lower ? py(*v.lower) : std::string("0"));
        if (v.upper) args += ", ub=" + py(*v.upper);
        args += v.type == "integer" ? ", vtype=GRB.INTEGER" : ", vtype=GRB.CONTINUOUS";
      }
      std::string name = "\"" + v.symbol + "\"", key, loops;
      if (!v.over.empty()) {
        name = "f\"" + v.symbol;
        for (size_t k = 0; k < v.over.size(); ++k) {
          const auto& st = *set(v.over[k]).spec;
          name += "_{" + st.index + "}";
          key += (k ? ", " : "") + st.index;
          loops += " for " + st.index + " in " + st.key;
        }
        name += "\"";
        if (v.over.size() > 1) key = "(" + key + ")";
      }
      std::string add = "model.addVar(" + args + ", name=" + name + ")";
      s += v.over.empty() ? v.symbol + " = " + add + "\n" : v.symbol + " = {" + key + ": " + add + loops + "}\n";
    }
    for (const auto& o : s_.objectives)
      if (active(o.variants))
        s += "model.setObjective(" + py(*o.expr) + ", GRB." + (o.sense == "minimize" ? "MINIMIZE" : "MAXIMIZE") + ")\n";
    for (const auto& c : s_.constraints) {
      if (!active(c.variants)) continue;
      std::string ind, name = "\"" + c.name + "\"";
      if (!c.forall.empty()) name = "f\"" + c.name;
      for (const auto& [iv, sym] : c.forall) {
        s += ind + "for " + iv + " in " + set(sym).spec->key + ":\n";
        ind += "    ";
        name += "_{" + iv + "}";
      }
      if (!c.forall.empty()) name += "\"";
      if (c.condition) s += ind + "if " + py(*c.condition) + ":\n", ind += "    ";
      std::string op = c.sense == "=" ? "==" : c.sense;
      s += ind + "model.addConstr(" + py(*c.lhs) + " " + op + " " + py(*c.rhs) + ", name=" + name + ")\n";
    }
    return s;
  }

  // ---- text ----
  // Static placeholders (domain words, set sizes and label lists); ${org} is left for expand_text.
  std::string words(const std::string& t, int line) const {
    std::string out;
    size_t i = 0;
    while (i < t.size()) {
      size_t p = t.find("${", i);
      if (p == std::string::npos) return out + t.substr(i);
      size_t close = t.find('}', p);
      if (close == std::string::npos) err(line, "unclosed placeholder");
      out += t.substr(i, p - i);
      std::string name = t.substr(p + 2, close - p - 2), low = name;
      low[0] = char(std::tolower(uint8_t(low[0])));
      bool cap = name[0] != low[0];
      std::string v;
      if (low == "org") v = t.substr(p, close + 1 - p);
      else if (low.rfind("count(", 0) == 0) v = std::to_string(set(name.substr(6, name.size() - 7)).elements.size());
      else if (low.rfind("list(", 0) == 0) v = detail::label_list(set(name.substr(5, name.size() - 6)).elements);
      else if (low == "currency") v = dom_.currency;
      else if (low == "source") v = dom_.source;
      else if (low == "sink") v = dom_.sink;
      else if (low == "good") v = dom_.good;
      else if (low == "unit") v = dom_.unit;
      else if (low == "period") v = dom_.period;
      else if (low == "worker") v = dom_.worker;
      else if (low == "job") v = dom_.job;
      else if (low == "product_unit") v = dom_.product_unit;
      else if (low == "resource_unit") v = dom_.resource_unit;
      else if (low == "blend") v = dom_.blend;
      else if (low == "blend_unit") v = dom_.blend_unit;
      else if (low == "staff") v = dom_.staff;
      else if (low == "domain") v = dom_.name;
      else err(line, "unknown placeholder ${" + name + "}");
      out += cap && low != "org" ? capitalize(v) : v;
      i = close + 1;
    }
    return out;
  }
  // Alternatives and drawn organisations, left to right.
  std::string expand_text(const FamilyTextSpec& t) {
    std::string s = words(t.text, t.line), out;
    size_t i = 0;
    while (i <= s.size()) {
      size_t p = s.find("${", i);
      std::string piece = s.substr(i, p == std::string::npos ? std::string::npos : p - i);
      if (!piece.empty()) {
        PhraseUse use;
        out += expand(rng_, piece, use);
        if (use.groups) phrasing_.push_back(use);
      }
      if (p == std::string::npos) break;
      size_t close = s.find('}', p);
      std::string org = rng_.pick(dom_.organisations);
      out += s[p + 2] == 'O' ? capitalize(org) : org;
      i = close + 1;
    }
    return out;
  }
  void write_text(Instance& in) {
    std::vector<const FamilyTextSpec*> intros;
    for (const auto& t : s_.intros)
      if (active(t.variants)) intros.push_back(&t);
    size_t pick = 0;
    if (intros.size() > 1) narrative_ = int(rng_.uniform_int(0, int64_t(intros.size()) - 1)), pick = size_t(narrative_);
    in.intro = expand_text(*intros[pick]);
    for (const auto& t : s_.rules)
      if (active(t.variants)) in.rules.push_back(expand_text(t));
    for (const auto& t : s_.goals)
      if (active(t.variants)) in.goal = expand_text(t);
  }

  const FamilySpec& s_;
  Difficulty diff_;
  const Domain& dom_;
  Rng& rng_;
  std::string variant_;
  std::map<std::string, SetVal> sets_;
  std::map<std::string, int> set_pos_;
  std::map<std::string, ParamVal> params_;
  std::map<std::string, int> exported_;
  std::map<std::string, VarVal> vars_;
  int narrative_ = -1;
  std::vector<PhraseUse> phrasing_;
};

}  // namespace

Instance generate_from_file(const FamilySpec& spec, Difficulty difficulty, int domain, uint64_t seed) {
  Rng rng(seed);
  const auto& doms = domains();
  if (domain < 0 || domain >= int(doms.size())) throw Error("ordata: domain index out of range");
  Instance inst = Interpreter(spec, difficulty, doms[size_t(domain)], rng).run();
  detail::finish_instance(inst, difficulty, domain, seed);
  return inst;
}

std::vector<std::string> file_family_formulations(const FamilySpec& spec) {
  std::vector<std::string> out;
  std::vector<std::string> variants = spec.variants.empty() ? std::vector<std::string>{""} : spec.variants;
  for (const auto& v : variants) {
    // One draw of the variant's model text (small difficulty; the formulas do not depend on the numbers).
    for (uint64_t seed = 1;; ++seed) {
      Instance in = generate_from_file(spec, Difficulty::Small, 0, seed);
      if (!v.empty() && in.variant != v) {
        if (seed > 200) break;
        continue;
      }
      std::string f = in.objective_formula;
      for (const auto& c : in.constraints) f += "; " + c.formula;
      out.push_back(f);
      break;
    }
  }
  return out;
}

}  // namespace trex::ordata
