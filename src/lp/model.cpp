// Model IR helpers: name index, counts.
#include "lp/model.hpp"

namespace trex::lp {

int Model::add_var(const std::string& var_name, VarType type, double lb, double ub) {
  int idx = int(vars.size());
  vars.push_back({var_name, type, lb, ub});
  index_.emplace(var_name, idx);
  return idx;
}

int Model::find_var(const std::string& var_name) const {
  auto it = index_.find(var_name);
  return it == index_.end() ? -1 : it->second;
}

int Model::var_or_add(const std::string& var_name) {
  int i = find_var(var_name);
  return i >= 0 ? i : add_var(var_name);
}

void Model::rebuild_index() {
  index_.clear();
  for (int i = 0; i < int(vars.size()); ++i) index_.emplace(vars[size_t(i)].name, i);
}

int64_t Model::num_nonzeros() const {
  int64_t n = 0;
  for (const auto& r : rows) n += int64_t(r.terms.size());
  return n;
}

int Model::num_integer_vars() const {
  int n = 0;
  for (const auto& v : vars)
    n += v.type == VarType::Integer || v.type == VarType::Binary || v.type == VarType::SemiInteger;
  return n;
}

bool Model::has_quadratic() const {
  if (!objective.quad.empty()) return true;
  for (const auto& r : rows)
    if (!r.quad.empty()) return true;
  return false;
}

bool Model::has_special() const {
  if (!sos.empty()) return true;
  for (const auto& v : vars)
    if (v.type == VarType::SemiContinuous || v.type == VarType::SemiInteger) return true;
  return false;
}

std::vector<double> Model::objective_dense() const {
  std::vector<double> c(vars.size(), 0.0);
  for (const auto& t : objective.terms) c[size_t(t.var)] += t.coef;
  return c;
}

const char* to_string(VarType t) {
  switch (t) {
    case VarType::Continuous: return "continuous";
    case VarType::Integer: return "integer";
    case VarType::Binary: return "binary";
    case VarType::SemiContinuous: return "semi-continuous";
    case VarType::SemiInteger: return "semi-integer";
  }
  return "?";
}
const char* to_string(RowSense s) {
  switch (s) {
    case RowSense::LE: return "<=";
    case RowSense::GE: return ">=";
    case RowSense::EQ: return "=";
    case RowSense::Range: return "range";
  }
  return "?";
}
const char* to_string(ObjSense s) { return s == ObjSense::Minimize ? "minimize" : "maximize"; }

}  // namespace trex::lp
