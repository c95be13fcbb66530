// Family-file loader: TOML (toml++) -> FamilySpec, the expression parser, and the static checks
// (names, references, sets in indices, placeholders, variants); then a few trial draws per difficulty
// so that runtime problems (a bad distribution, a value drawn before its inputs) fail at load, with the
// file and line, before a synth run writes anything.
#include "ordata/family_file.hpp"

#include <cctype>
#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <toml++/toml.h>

#include "util/error.hpp"
#include "util/hash.hpp"

namespace trex::ordata {

namespace {

[[noreturn]] void fail(const std::string& file, int line, const std::string& what) {
  throw Error(file + ":" + std::to_string(line) + ": " + what);
}

bool is_ident(const std::string& s) {
  if (s.empty() || !(std::isalpha(uint8_t(s[0])) || s[0] == '_')) return false;
  for (char ch : s)
    if (!(std::isalnum(uint8_t(ch)) || ch == '_')) return false;
  return true;
}

// ---- expression parser ----------------------------------------------------------------------------
class ExprParser {
 public:
  ExprParser(const std::string& text, const std::string& file, int line) : s_(text), file_(file), line_(line) {}
  ExprPtr parse_all() {
    ExprPtr e = parse_or();
    skip();
    if (p_ < s_.size()) error("unexpected '" + s_.substr(p_, 12) + "'");
    return e;
  }
  // "forall i in I, j in J if COND: LHS SENSE RHS" or "LHS SENSE RHS".
  void parse_constraint(FamilyConstraintSpec& c) {
    skip();
    if (peek_word("forall")) {
      take_word();
      c.forall = parse_binders();
      skip();
      if (peek_word("if")) {
        take_word();
        c.condition = parse_or();
      }
      skip();
      if (!take(":")) error("expected ':' after the forall domain");
    }
    c.lhs = parse_add();
    skip();
    if (take("<=")) c.sense = "<=";
    else if (take(">=")) c.sense = ">=";
    else if (take("==") || take("=")) c.sense = "=";
    else error("expected <=, >= or = in the constraint");
    c.rhs = parse_add();
    skip();
    if (p_ < s_.size()) error("unexpected '" + s_.substr(p_, 12) + "'");
  }

 private:
  [[noreturn]] void error(const std::string& what) {
    fail(file_, line_, "in '" + s_ + "' at column " + std::to_string(p_ + 1) + ": " + what);
  }
  void skip() {
    while (p_ < s_.size() && std::isspace(uint8_t(s_[p_]))) ++p_;
  }
  bool take(const char* tok) {
    skip();
    size_t n = std::char_traits<char>::length(tok);
    if (s_.compare(p_, n, tok) == 0) {
      p_ += n;
      return true;
    }
    return false;
  }
  std::string ident() {
    skip();
    size_t b = p_;
    while (p_ < s_.size() && (std::isalnum(uint8_t(s_[p_])) || s_[p_] == '_')) ++p_;
    if (b == p_ || std::isdigit(uint8_t(s_[b]))) error("expected a name");
    return s_.substr(b, p_ - b);
  }
  bool peek_word(const char* w) {
    skip();
    size_t n = std::char_traits<char>::length(w);
    if (s_.compare(p_, n, w) != 0) return false;
    return p_ + n >= s_.size() || !(std::isalnum(uint8_t(s_[p_ + n])) || s_[p_ + n] == '_');
  }
  void take_word() { ident(); }
  std::vector<std::pair<std::string, std::string>> parse_binders() {
    std::vector<std::pair<std::string, std::string>> b;
    do {
      std::string v = ident();
      if (!peek_word("in")) error("expected 'in' after index '" + v + "'");
      take_word();
      b.push_back({v, ident()});
    } while (take(","));
    return b;
  }
  ExprPtr node(Expr::Kind k, std::string text, std::vector<ExprPtr> args) {
    auto e = std::make_shared<Expr>();
    e->kind = k, e->text = std::move(text), e->args = std::move(args), e->line = line_;
    return e;
  }
  ExprPtr parse_or() {
    ExprPtr l = parse_and();
    while (peek_word("or")) take_word(), l = node(Expr::Binary, "or", {l, parse_and()});
    return l;
  }
  ExprPtr parse_and() {
    ExprPtr l = parse_not();
    while (peek_word("and")) take_word(), l = node(Expr::Binary, "and", {l, parse_not()});
    return l;
  }
  ExprPtr parse_not() {
    if (peek_word("not")) return take_word(), node(Expr::Unary, "not", {parse_not()});
    return parse_cmp();
  }
  ExprPtr parse_cmp() {
    ExprPtr l = parse_add();
    for (const char* op : {"<=", ">=", "==", "!=", "<", ">"})
      if (take(op)) return node(Expr::Binary, op, {l, parse_add()});
    return l;
  }
  ExprPtr parse_add() {
    ExprPtr l = parse_mul();
    for (;;) {
      skip();
      if (p_ < s_.size() && (s_[p_] == '+' || s_[p_] == '-')) {
        std::string op(1, s_[p_++]);
        l = node(Expr::Binary, op, {l, parse_mul()});
      } else {
        return l;
      }
    }
  }
  ExprPtr parse_mul() {
    ExprPtr l = parse_unary();
    for (;;) {
      skip();
      if (p_ < s_.size() && (s_[p_] == '*' || s_[p_] == '/')) {
        std::string op(1, s_[p_++]);
        l = node(Expr::Binary, op, {l, parse_unary()});
      } else {
        return l;
      }
    }
  }
  ExprPtr parse_unary() {
    if (take("-")) return node(Expr::Unary, "-", {parse_unary()});
    return parse_primary();
  }
  ExprPtr parse_primary() {
    skip();
    if (p_ >= s_.size()) error("unexpected end of expression");
    char ch = s_[p_];
    if (std::isdigit(uint8_t(ch)) || ch == '.') {
      size_t b = p_;
      while (p_ < s_.size() && (std::isdigit(uint8_t(s_[p_])) || s_[p_] == '.')) ++p_;
      if (p_ < s_.size() && (s_[p_] == 'e' || s_[p_] == 'E')) {
        ++p_;
        if (p_ < s_.size() && (s_[p_] == '+' || s_[p_] == '-')) ++p_;
        while (p_ < s_.size() && std::isdigit(uint8_t(s_[p_]))) ++p_;
      }
      std::string lit = s_.substr(b, p_ - b);
      auto e = node(Expr::Num, lit, {});
      try {
        size_t used = 0;
        e->value = std::stod(lit, &used);
        if (used != lit.size()) throw std::invalid_argument("x");
      } catch (const std::exception&) {
        error("bad number '" + lit + "'");
      }
      return e;
    }
    if (take("(")) {
      ExprPtr inner = parse_or();
      if (!take(")")) error("expected ')'");
      return node(Expr::Paren, "", {inner});
    }
    std::string name = ident();
    if ((name == "sum" || name == "max" || name == "min") && is_aggregate()) {
      take("(");
      auto e = node(Expr::Agg, name, {});
      e->binders = parse_binders();
      if (peek_word("if")) take_word(), e->filter = parse_or();
      if (!take(")")) error("expected ')' after the " + name + " domain");
      e->args.push_back(parse_mul());
      return e;
    }
    if (take("(")) {
      auto e = node(Expr::Call, name, {});
      if (!take(")")) {
        do e->args.push_back(parse_or());
        while (take(","));
        if (!take(")")) error("expected ')' or ',' in the arguments of " + name);
      }
      return e;
    }
    auto e = node(Expr::Ref, name, {});
    if (take("[")) {
      do e->index.push_back(ident());
      while (take(","));
      if (!take("]")) error("expected ']' after the indices of " + name);
    }
    return e;
  }
  // "sum(i in I ...)" rather than a call "max(a, b)": a name followed by the word "in".
  bool is_aggregate() {
    size_t save = p_;
    bool agg = false;
    if (take("(")) {
      skip();
      size_t b = p_;
      while (p_ < s_.size() && (std::isalnum(uint8_t(s_[p_])) || s_[p_] == '_')) ++p_;
      agg = p_ > b && peek_word("in");
    }
    p_ = save;
    return agg;
  }

  const std::string& s_;
  std::string file_;
  int line_;
  size_t p_ = 0;
};

// ---- TOML access with lines -----------------------------------------------------------------------
struct Reader {
  std::string file;
  int line(const toml::node& n) const { return int(n.source().begin.line); }
  std::string str(const toml::table& t, const char* key, int at, bool required, const std::string& dflt = "") const {
    const toml::node* n = t.get(key);
    if (!n) {
      if (required) fail(file, at, std::string("missing key '") + key + "'");
      return dflt;
    }
    if (!n->is_string()) fail(file, line(*n), std::string("'") + key + "' must be a string");
    return n->as_string()->get();
  }
  std::vector<std::string> strs(const toml::table& t, const char* key) const {
    std::vector<std::string> out;
    const toml::node* n = t.get(key);
    if (!n) return out;
    if (!n->is_array()) fail(file, line(*n), std::string("'") + key + "' must be a list of strings");
    for (const auto& e : *n->as_array()) {
      if (!e.is_string()) fail(file, line(e), std::string("'") + key + "' must be a list of strings");
      out.push_back(e.as_string()->get());
    }
    return out;
  }
  int64_t integer(const toml::table& t, const char* key, int64_t dflt) const {
    const toml::node* n = t.get(key);
    if (!n) return dflt;
    if (!n->is_integer()) fail(file, line(*n), std::string("'") + key + "' must be an integer");
    return n->as_integer()->get();
  }
  // The entries of an array of tables ([[key]]); each with its line.
  std::vector<const toml::table*> tables(const toml::table& t, const char* key) const {
    std::vector<const toml::table*> out;
    const toml::node* n = t.get(key);
    if (!n) return out;
    if (!n->is_array_of_tables()) fail(file, line(*n), std::string("'") + key + "' must be written as [[" + key + "]] tables");
    for (const auto& e : *n->as_array()) out.push_back(e.as_table());
    return out;
  }
  void only_keys(const toml::table& t, std::initializer_list<const char*> keys, int at, const std::string& where) const {
    for (const auto& [k, v] : t) {
      bool known = false;
      for (const char* key : keys) known = known || k.str() == key;
      if (!known) fail(file, line(v) ? line(v) : at, "unknown key '" + std::string(k.str()) + "' in " + where);
    }
  }
};

const std::set<std::string>& domain_pools() {
  static const std::set<std::string> k = {"products", "resources", "jobs", "ingredients", "attributes", "assets", "cities", "people"};
  return k;
}

const std::set<std::string>& reserved_names() {
  static const std::set<std::string> k = {"sum", "max", "min", "in", "if", "and", "or", "not", "forall", "inf", "level",
                                          "model", "data", "gp", "GRB", "json", "csv", "math", "len", "print", "for",
                                          "lambda", "def", "class", "return", "import", "from", "as", "is", "None", "True", "False"};
  return k;
}

}  // namespace

namespace {
void check_family_spec(const FamilySpec& spec);  // the static checks, below
}  // namespace

std::shared_ptr<const FamilySpec> parse_family_text(const std::string& text, const std::string& file) {
  toml::table root;
  try {
    root = toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    fail(file, int(e.source().begin.line), std::string(e.description()) + " (column " + std::to_string(e.source().begin.column) + ")");
  }
  Reader r{file};
  auto spec = std::make_shared<FamilySpec>();
  spec->file = file;
  spec->sha256 = sha256_hex(text);
  r.only_keys(root,
              {"name", "model_name", "task_family", "variants", "pitfalls", "set", "param", "group", "data_order", "variable",
               "constraint", "objective", "intro", "rule", "goal"},
              1, "the file");
  spec->name = r.str(root, "name", 1, true);
  if (const toml::node* n = root.get("name")) spec->line_of_name = r.line(*n);
  spec->model_name = r.str(root, "model_name", 1, false, spec->name);
  spec->task_family = r.str(root, "task_family", 1, true);
  spec->variants = r.strs(root, "variants");
  spec->pitfalls = r.strs(root, "pitfalls");
  spec->data_order = r.strs(root, "data_order");

  auto expr = [&](const toml::table& t, const char* key, int at, bool required) -> ExprPtr {
    const toml::node* n = t.get(key);
    if (!n) {
      if (required) fail(file, at, std::string("missing key '") + key + "'");
      return nullptr;
    }
    int line = r.line(*n);
    std::string s;
    if (n->is_string()) s = n->as_string()->get();
    else if (n->is_integer()) s = std::to_string(n->as_integer()->get());
    else if (n->is_floating_point()) {
      std::ostringstream os;
      os.precision(17);
      os << n->as_floating_point()->get();
      s = os.str();
    } else fail(file, line, std::string("'") + key + "' must be an expression (a string or a number)");
    return ExprParser(s, file, line).parse_all();
  };

  for (const toml::table* t : r.tables(root, "set")) {
    FamilySetSpec s;
    s.line = r.line(*t);
    r.only_keys(*t, {"symbol", "index", "key", "description", "sizes", "jitter", "labels", "variants"}, s.line, "a [[set]]");
    s.symbol = r.str(*t, "symbol", s.line, true);
    s.index = r.str(*t, "index", s.line, false);
    if (s.index.empty()) {
      s.index = s.symbol;
      for (auto& ch : s.index) ch = char(std::tolower(uint8_t(ch)));
    }
    s.key = r.str(*t, "key", s.line, true);
    s.description = r.str(*t, "description", s.line, true);
    s.variants = r.strs(*t, "variants");
    const toml::node* sz = t->get("sizes");
    if (!sz) fail(file, s.line, "missing key 'sizes' (four sizes: small, medium, large, industrial)");
    if (!sz->is_array() || sz->as_array()->size() != 4)
      fail(file, r.line(*sz), "'sizes' must list 4 sizes (small, medium, large, industrial)");
    for (size_t i = 0; i < 4; ++i) {
      const toml::node& e = *sz->as_array()->get(i);
      if (!e.is_integer() || e.as_integer()->get() < 1 || e.as_integer()->get() > 1000)
        fail(file, r.line(e), "'sizes' must be integers in 1..1000");
      s.sizes[i] = int(e.as_integer()->get());
    }
    int64_t j = r.integer(*t, "jitter", 1);
    if (j < 0 || j > 100) fail(file, s.line, "'jitter' must be in 0..100");
    s.jitter = int(j);
    const toml::node* lab = t->get("labels");
    if (!lab) fail(file, s.line, "missing key 'labels' (a list of labels or a domain pool name)");
    if (lab->is_string()) {
      s.domain_pool = lab->as_string()->get();
      if (!domain_pools().count(s.domain_pool))
        fail(file, r.line(*lab), "unknown label pool '" + s.domain_pool +
                                     "' (products, resources, jobs, ingredients, attributes, assets, cities, people, or a list)");
    } else {
      s.labels = r.strs(*t, "labels");
      if (s.labels.empty()) fail(file, r.line(*lab), "'labels' must not be empty");
      for (const auto& l : s.labels)
        if (!is_ident(l)) fail(file, r.line(*lab), "label '" + l + "' is not a name (letters, digits, _)");
    }
    spec->sets.push_back(std::move(s));
  }
  for (const toml::table* t : r.tables(root, "param")) {
    FamilyParamSpec p;
    p.line = r.line(*t);
    r.only_keys(*t, {"symbol", "key", "description", "unit", "over", "value", "decimals", "export", "variants"}, p.line, "a [[param]]");
    p.symbol = r.str(*t, "symbol", p.line, true);
    p.over = r.strs(*t, "over");
    p.variants = r.strs(*t, "variants");
    p.value = expr(*t, "value", p.line, true);
    int64_t d = r.integer(*t, "decimals", 0);
    if (d < 0 || d > 6) fail(file, p.line, "'decimals' must be in 0..6");
    p.decimals = int(d);
    if (const toml::node* e = t->get("export")) {
      if (!e->is_boolean()) fail(file, r.line(*e), "'export' must be true or false");
      p.exported = e->as_boolean()->get();
    }
    p.key = r.str(*t, "key", p.line, p.exported);
    p.description = r.str(*t, "description", p.line, p.exported);
    p.unit = r.str(*t, "unit", p.line, false);
    spec->params.push_back(std::move(p));
  }
  for (const toml::table* t : r.tables(root, "group")) {
    FamilyGroupSpec g;
    g.line = r.line(*t);
    r.only_keys(*t, {"over", "params"}, g.line, "a [[group]]");
    g.over = r.strs(*t, "over");
    g.members = r.strs(*t, "params");
    if (g.over.empty() || g.members.empty()) fail(file, g.line, "a [[group]] needs 'over' (sets) and 'params' (symbols)");
    spec->groups.push_back(std::move(g));
  }
  for (const toml::table* t : r.tables(root, "variable")) {
    FamilyVarSpec v;
    v.line = r.line(*t);
    r.only_keys(*t, {"symbol", "description", "type", "over", "lower", "upper", "variants"}, v.line, "a [[variable]]");
    v.symbol = r.str(*t, "symbol", v.line, true);
    v.description = r.str(*t, "description", v.line, true);
    v.type = r.str(*t, "type", v.line, false, "continuous");
    if (v.type != "continuous" && v.type != "integer" && v.type != "binary")
      fail(file, v.line, "variable type '" + v.type + "' is not continuous, integer or binary");
    v.over = r.strs(*t, "over");
    v.lower = expr(*t, "lower", v.line, false);
    v.upper = expr(*t, "upper", v.line, false);
    v.variants = r.strs(*t, "variants");
    spec->vars.push_back(std::move(v));
  }
  for (const toml::table* t : r.tables(root, "constraint")) {
    FamilyConstraintSpec c;
    c.line = r.line(*t);
    r.only_keys(*t, {"name", "description", "expr", "variants"}, c.line, "a [[constraint]]");
    c.name = r.str(*t, "name", c.line, true);
    c.description = r.str(*t, "description", c.line, true);
    c.variants = r.strs(*t, "variants");
    const toml::node* e = t->get("expr");
    if (!e || !e->is_string()) fail(file, e ? r.line(*e) : c.line, "a [[constraint]] needs 'expr' (a string)");
    ExprParser(e->as_string()->get(), file, r.line(*e)).parse_constraint(c);
    spec->constraints.push_back(std::move(c));
  }
  for (const toml::table* t : r.tables(root, "objective")) {
    FamilyObjectiveSpec o;
    o.line = r.line(*t);
    r.only_keys(*t, {"sense", "expr", "description", "unit", "variants"}, o.line, "an [[objective]]");
    o.sense = r.str(*t, "sense", o.line, true);
    if (o.sense != "minimize" && o.sense != "maximize") fail(file, o.line, "objective sense must be minimize or maximize");
    o.expr = expr(*t, "expr", o.line, true);
    o.description = r.str(*t, "description", o.line, true);
    o.unit = r.str(*t, "unit", o.line, false);
    o.variants = r.strs(*t, "variants");
    spec->objectives.push_back(std::move(o));
  }
  auto texts = [&](const char* key, std::vector<FamilyTextSpec>& out) {
    for (const toml::table* t : r.tables(root, key)) {
      FamilyTextSpec x;
      x.line = r.line(*t);
      r.only_keys(*t, {"text", "variants"}, x.line, std::string("a [[") + key + "]]");
      x.text = r.str(*t, "text", x.line, true);
      if (const toml::node* n = t->get("text")) x.line = r.line(*n);
      x.variants = r.strs(*t, "variants");
      out.push_back(std::move(x));
    }
  };
  texts("intro", spec->intros);
  texts("rule", spec->rules);
  texts("goal", spec->goals);
  check_family_spec(*spec);
  return spec;
}

std::shared_ptr<const FamilySpec> load_family_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot read the family file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_family_text(ss.str(), path);
}

// ---- static checks --------------------------------------------------------------------------------
namespace {

struct Checker {
  const FamilySpec& s;
  std::string variant;  // "" when the family has none
  [[noreturn]] void err(int line, const std::string& w) const { fail(s.file, line, w); }
  bool active(const std::vector<std::string>& v) const {
    if (v.empty()) return true;
    for (const auto& x : v)
      if (x == variant) return true;
    return false;
  }
  std::map<std::string, const FamilySetSpec*> sets;
  std::map<std::string, const FamilyParamSpec*> params;
  std::map<std::string, const FamilyVarSpec*> vars;
  std::map<std::string, size_t> param_pos;
  std::set<std::string> keys;
  // Index variables must not shadow a name of the model or of the generated Python (data keys).
  bool taken(const std::string& v) const { return sets.count(v) || params.count(v) || vars.count(v) || keys.count(v) || reserved_names().count(v); }
  // The largest element count of a family indexed over `over` (industrial size plus jitter per set).
  double max_elements(const std::vector<std::string>& over) const {
    double n = 1;
    for (const auto& o : over) n *= double(sets.at(o)->sizes[3] + sets.at(o)->jitter);
    return n;
  }

  // Checks an expression; `scope` maps index variables to set symbols; `model`: a model template
  // (variables allowed, random draws not); `draw_pos`: position of the param being defined (refs must precede).
  void expr(const Expr& e, std::map<std::string, std::string> scope, bool model, int line, size_t draw_pos) const {
    switch (e.kind) {
      case Expr::Num: return;
      case Expr::Paren:
      case Expr::Unary:
      case Expr::Binary:
        for (const auto& a : e.args) expr(*a, scope, model, line, draw_pos);
        return;
      case Expr::Agg:
        for (const auto& [v, set] : e.binders) {
          if (!sets.count(set)) err(line, "unknown set '" + set + "' in " + e.text + "(" + v + " in " + set + ")");
          if (taken(v)) err(line, "index '" + v + "' is also a declared name or data key");
          if (scope.count(v)) err(line, "index '" + v + "' is already bound");
          scope[v] = set;
        }
        if (e.filter) expr(*e.filter, scope, model, line, draw_pos);
        expr(*e.args.back(), scope, model, line, draw_pos);
        return;
      case Expr::Call: {
        static const std::map<std::string, std::pair<int, int>> kFns = {
            {"uniform_int", {2, 2}}, {"uniform", {2, 2}}, {"bernoulli", {1, 1}}, {"normal", {2, 2}}, {"round", {1, 2}},
            {"floor", {1, 1}}, {"ceil", {1, 1}}, {"abs", {1, 1}}, {"min", {2, 99}}, {"max", {2, 99}}, {"if", {3, 3}}, {"card", {1, 1}}};
        auto it = kFns.find(e.text);
        if (it == kFns.end()) err(line, "unknown function '" + e.text + "'");
        int n = int(e.args.size());
        if (n < it->second.first || n > it->second.second) err(line, "wrong number of arguments to " + e.text + "()");
        bool random = e.text == "uniform_int" || e.text == "uniform" || e.text == "bernoulli" || e.text == "normal";
        if (model && (random || e.text == "round"))
          err(line, e.text + "() is allowed in parameter values, not in variable bounds, constraints or objectives");
        if (e.text == "card") {
          if (e.args[0]->kind != Expr::Ref || !e.args[0]->index.empty() || !sets.count(e.args[0]->text))
            err(line, "card() takes a set symbol");
          return;
        }
        for (const auto& a : e.args) expr(*a, scope, model, line, draw_pos);
        return;
      }
      case Expr::Ref: {
        if (e.index.empty() && scope.count(e.text)) err(line, "index '" + e.text + "' stands for a label, not a number");
        if (e.text == "inf" && e.index.empty()) return;
        if (e.text == "level" && e.index.empty()) {
          if (model) err(line, "'level' is allowed in parameter values only");
          return;
        }
        std::vector<std::string> over;
        if (auto p = params.find(e.text); p != params.end()) {
          over = p->second->over;
          if (model && !p->second->exported)
            err(line, "parameter '" + e.text + "' has export = false: it is not in the data, so a model template cannot use it");
          if (!model && param_pos.at(e.text) > draw_pos)
            err(line, "parameter '" + e.text + "' is used before it is drawn (declare it earlier)");
        } else if (auto v = vars.find(e.text); v != vars.end()) {
          if (!model) err(line, "variable '" + e.text + "' in a parameter value");
          over = v->second->over;
        } else if (sets.count(e.text)) {
          err(line, "set '" + e.text + "' used as a value (card(" + e.text + ") is its size)");
        } else {
          err(line, "undefined name '" + e.text + "'" + (variant.empty() ? "" : " (variant " + variant + ")"));
        }
        if (e.index.size() != over.size())
          err(line, "'" + e.text + "' has " + std::to_string(over.size()) + " indices, not " + std::to_string(e.index.size()));
        for (size_t k = 0; k < over.size(); ++k) {
          auto b = scope.find(e.index[k]);
          if (b == scope.end()) err(line, "index '" + e.index[k] + "' of " + e.text + " is not bound (forall/sum)");
          if (b->second != over[k])
            err(line, "index '" + e.index[k] + "' runs over " + b->second + ", but position " + std::to_string(k + 1) + " of " +
                          e.text + " is over " + over[k]);
        }
        return;
      }
    }
  }
};

const std::set<std::string>& static_placeholders() {
  static const std::set<std::string> k = {"currency", "source", "sink", "good", "unit", "period", "worker", "job",
                                          "product_unit", "resource_unit", "blend", "blend_unit", "staff", "domain"};
  return k;
}

}  // namespace

namespace {

// Placeholder check (the interpreter's expansion follows the same rules): "${name}" or "${count(S)}"/"${list(S)}";
// "${org}"/"${Org}" (a drawn organisation) only where `drawing` and not inside an {a|b} group.
void check_placeholders(const FamilySpec& s, const std::string& text, int line, bool drawing,
                        const std::map<std::string, const FamilySetSpec*>* sets) {
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '{') {
      size_t close = text.find('}', i);
      if (close == std::string::npos) fail(s.file, line, "unclosed placeholder '${' in '" + text + "'");
      std::string name = text.substr(i + 2, close - i - 2);
      std::string low = name;
      if (!low.empty()) low[0] = char(std::tolower(uint8_t(low[0])));
      bool ok = static_placeholders().count(low) > 0;
      if (low == "org") {
        if (!drawing) fail(s.file, line, "placeholder ${" + name + "} (a drawn organisation) is allowed in intro, rule and goal texts only");
        if (depth > 0) fail(s.file, line, "placeholder ${" + name + "} cannot stand inside an {a|b} group");
        ok = true;
      }
      for (const char* fn : {"count(", "list("}) {
        std::string f = fn;
        if (low.rfind(f, 0) == 0 && low.back() == ')') {
          std::string set = name.substr(f.size(), name.size() - f.size() - 1);
          if (!sets || !sets->count(set)) fail(s.file, line, "placeholder ${" + name + "} names an unknown set '" + set + "'");
          ok = true;
        }
      }
      if (!ok) fail(s.file, line, "unknown placeholder ${" + name + "} in '" + text + "'");
      i = close;
      continue;
    }
    if (text[i] == '{') {
      if (depth > 0) fail(s.file, line, "{a|b} groups do not nest: '" + text + "'");
      ++depth;
    } else if (text[i] == '}') {
      if (depth == 0) fail(s.file, line, "unbalanced '}' in '" + text + "'");
      --depth;
    }
  }
  if (depth != 0) fail(s.file, line, "unbalanced '{' in '" + text + "'");
}

void check_family_spec(const FamilySpec& s) {
  if (!is_ident(s.name)) fail(s.file, s.line_of_name, "family name '" + s.name + "' is not a name (letters, digits, _)");
  Structure st;
  if (parse(s.name, st) || s.name == "all" || s.name == "classic")
    fail(s.file, s.line_of_name, "family name '" + s.name + "' is taken by a built-in structure (or all/classic)");
  if (!is_ident(s.model_name)) fail(s.file, s.line_of_name, "model_name '" + s.model_name + "' is not a name");
  std::set<std::string> vs(s.variants.begin(), s.variants.end());
  if (vs.size() != s.variants.size()) fail(s.file, 1, "duplicate variant names");
  for (const auto& v : s.variants)
    if (!is_ident(v)) fail(s.file, 1, "variant '" + v + "' is not a name");
  auto check_variants = [&](const std::vector<std::string>& v, int line) {
    if (!v.empty() && s.variants.empty()) fail(s.file, line, "'variants' given, but the family declares no variants");
    for (const auto& x : v)
      if (!vs.count(x)) fail(s.file, line, "unknown variant '" + x + "'");
  };
  for (const auto& x : s.sets) check_variants(x.variants, x.line);
  for (const auto& x : s.params) check_variants(x.variants, x.line);
  for (const auto& x : s.vars) check_variants(x.variants, x.line);
  for (const auto& x : s.constraints) check_variants(x.variants, x.line);
  for (const auto& x : s.objectives) check_variants(x.variants, x.line);
  for (const auto* list : {&s.intros, &s.rules, &s.goals})
    for (const auto& x : *list) check_variants(x.variants, x.line);

  std::vector<std::string> variants = s.variants.empty() ? std::vector<std::string>{""} : s.variants;
  for (const auto& variant : variants) {
    Checker c{s, variant, {}, {}, {}, {}, {}};
    std::string in_variant = variant.empty() ? "" : " in variant " + variant;
    std::set<std::string> keys;
    auto claim = [&](const std::string& name, int line) {
      if (!is_ident(name)) fail(s.file, line, "'" + name + "' is not a name (letters, digits, _)");
      if (reserved_names().count(name)) fail(s.file, line, "'" + name + "' is a reserved word");
      if (c.sets.count(name) || c.params.count(name) || c.vars.count(name)) fail(s.file, line, "'" + name + "' is declared twice" + in_variant);
    };
    auto claim_key = [&](const std::string& key, int line) {
      if (!is_ident(key) || reserved_names().count(key)) fail(s.file, line, "key '" + key + "' is not a usable name");
      if (!keys.insert(key).second) fail(s.file, line, "key '" + key + "' is used twice" + in_variant);
      c.keys.insert(key);
    };
    for (const auto& set : s.sets)
      if (c.active(set.variants)) {
        claim(set.symbol, set.line);
        claim_key(set.key, set.line);
        if (!is_ident(set.index)) fail(s.file, set.line, "index '" + set.index + "' is not a name");
        c.sets[set.symbol] = &set;
        check_placeholders(s, set.description, set.line, false, nullptr);
      }
    size_t pos = 0;
    for (const auto& p : s.params)
      if (c.active(p.variants)) {
        claim(p.symbol, p.line);
        if (p.exported) claim_key(p.key, p.line);
        for (const auto& o : p.over)
          if (!c.sets.count(o)) fail(s.file, p.line, "unknown set '" + o + "' in 'over' of " + p.symbol + in_variant);
        if (p.exported && p.over.size() > 2) fail(s.file, p.line, "an exported parameter has at most 2 indices");
        if (c.max_elements(p.over) > 1e5) fail(s.file, p.line, "parameter '" + p.symbol + "' can have more than 100,000 elements");
        c.params[p.symbol] = &p;
        c.param_pos[p.symbol] = pos++;
        check_placeholders(s, p.description + p.unit, p.line, false, nullptr);
      }
    // Groups: a member is drawn at the group's first member; its position is that member's.
    for (const auto& g : s.groups) {
      size_t first = SIZE_MAX;
      for (const auto& o : g.over)
        if (!c.sets.count(o)) fail(s.file, g.line, "unknown set '" + o + "' in the group's 'over'");
      for (const auto& m : g.members) {
        bool known = false;
        for (const auto& p : s.params) known = known || p.symbol == m;
        if (!known) fail(s.file, g.line, "group member '" + m + "' is not a parameter");
        auto it = c.params.find(m);
        if (it == c.params.end()) continue;  // not in this variant
        for (const auto& o : g.over)
          if (std::find(it->second->over.begin(), it->second->over.end(), o) == it->second->over.end())
            fail(s.file, g.line, "group member '" + m + "' is not indexed over " + o);
        first = std::min(first, c.param_pos[m]);
      }
      for (const auto& m : g.members)
        if (c.params.count(m)) c.param_pos[m] = first;
    }
    std::map<std::string, int> in_group;
    for (const auto& g : s.groups)
      for (const auto& m : g.members)
        if (++in_group[m] > 1) fail(s.file, g.line, "parameter '" + m + "' is in two groups");
    for (const auto& p : s.params)
      if (c.active(p.variants)) {
        // Values may use their own indices: bind them with the set's index letter as written in 'over'.
        std::map<std::string, std::string> sc;
        for (const auto& o : p.over) sc[c.sets[o]->index] = o;
        if (sc.size() != p.over.size()) fail(s.file, p.line, "parameter '" + p.symbol + "' repeats an index letter");
        c.expr(*p.value, sc, false, p.value->line, c.param_pos[p.symbol]);
      }
    for (const auto& v : s.vars)
      if (c.active(v.variants)) {
        claim(v.symbol, v.line);
        std::map<std::string, std::string> sc;
        for (const auto& o : v.over) {
          if (!c.sets.count(o)) fail(s.file, v.line, "unknown set '" + o + "' in 'over' of variable " + v.symbol + in_variant);
          sc[c.sets[o]->index] = o;
        }
        if (c.max_elements(v.over) > 1e5) fail(s.file, v.line, "variable '" + v.symbol + "' can have more than 100,000 columns");
        if (c.keys.count(v.symbol)) fail(s.file, v.line, "variable '" + v.symbol + "' has the name of a data key");
        c.vars[v.symbol] = &v;
        if (v.lower) c.expr(*v.lower, sc, true, v.lower->line, 0);
        if (v.upper) c.expr(*v.upper, sc, true, v.upper->line, 0);
      }
    if (c.vars.empty()) fail(s.file, 1, "no [[variable]]" + in_variant);
    for (const auto& [sym, set] : c.sets)
      if (c.keys.count(set->index) || c.params.count(set->index) || c.vars.count(set->index) || reserved_names().count(set->index))
        fail(s.file, set->line, "index '" + set->index + "' of set " + sym + " is also a declared name, data key or reserved word");
    // Bounds may not use variables.
    std::function<bool(const Expr&)> has_var = [&](const Expr& e) {
      if (e.kind == Expr::Ref && c.vars.count(e.text)) return true;
      for (const auto& a : e.args)
        if (has_var(*a)) return true;
      return e.filter && has_var(*e.filter);
    };
    for (const auto& v : s.vars)
      if (c.active(v.variants) && ((v.lower && has_var(*v.lower)) || (v.upper && has_var(*v.upper))))
        fail(s.file, v.line, "a variable bound uses a variable");
    std::set<std::string> con_names;
    int ncons = 0;
    for (const auto& k : s.constraints)
      if (c.active(k.variants)) {
        ++ncons;
        if (!is_ident(k.name)) fail(s.file, k.line, "constraint name '" + k.name + "' is not a name");
        if (!con_names.insert(k.name).second) fail(s.file, k.line, "constraint name '" + k.name + "' is used twice" + in_variant);
        std::map<std::string, std::string> sc;
        for (const auto& [iv, set] : k.forall) {
          if (!c.sets.count(set)) fail(s.file, k.line, "unknown set '" + set + "' in forall" + in_variant);
          if (sc.count(iv)) fail(s.file, k.line, "index '" + iv + "' is bound twice");
          if (c.taken(iv)) fail(s.file, k.line, "index '" + iv + "' is also a declared name or data key");
          sc[iv] = set;
        }
        if (k.condition) {
          if (has_var(*k.condition)) fail(s.file, k.line, "the forall condition uses a variable");
          c.expr(*k.condition, sc, true, k.lhs->line, 0);
        }
        c.expr(*k.lhs, sc, true, k.lhs->line, 0);
        c.expr(*k.rhs, sc, true, k.lhs->line, 0);
        if (!has_var(*k.lhs) && !has_var(*k.rhs)) fail(s.file, k.line, "constraint '" + k.name + "' has no variable");
        check_placeholders(s, k.description, k.line, false, nullptr);
      }
    if (ncons == 0) fail(s.file, 1, "no [[constraint]]" + in_variant);
    int nobj = 0;
    for (const auto& o : s.objectives)
      if (c.active(o.variants)) {
        ++nobj;
        c.expr(*o.expr, {}, true, o.expr->line, 0);
        if (!has_var(*o.expr)) fail(s.file, o.line, "the objective has no variable");
        check_placeholders(s, o.description + o.unit, o.line, false, nullptr);
      }
    if (nobj != 1) fail(s.file, 1, "exactly one [[objective]] must apply" + in_variant + " (found " + std::to_string(nobj) + ")");
    int nintro = 0, ngoal = 0;
    for (const auto& t : s.intros)
      if (c.active(t.variants)) ++nintro, check_placeholders(s, t.text, t.line, true, &c.sets);
    for (const auto& t : s.rules)
      if (c.active(t.variants)) check_placeholders(s, t.text, t.line, true, &c.sets);
    for (const auto& t : s.goals)
      if (c.active(t.variants)) ++ngoal, check_placeholders(s, t.text, t.line, true, &c.sets);
    if (nintro == 0) fail(s.file, 1, "no [[intro]] text applies" + in_variant);
    if (ngoal != 1) fail(s.file, 1, "exactly one [[goal]] text must apply" + in_variant + " (found " + std::to_string(ngoal) + ")");
    for (const auto& key : s.data_order)
      if (!keys.count(key)) {
        bool elsewhere = false;
        for (const auto& p : s.params) elsewhere = elsewhere || p.key == key;
        if (!elsewhere) fail(s.file, 1, "data_order names an unknown key '" + key + "'");
      }
  }
  // Trial draws: every difficulty, a few seeds (runtime errors name their line).
  for (int d = 0; d < kNumDifficulties; ++d)
    for (uint64_t seed = 1; seed <= 3; ++seed) generate_from_file(s, Difficulty(d), int(seed % 10), seed * 7919 + uint64_t(d));
}

}  // namespace

}  // namespace trex::ordata
