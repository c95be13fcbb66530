// Instance helpers: declaration of sets/parameters, data.json view, row building.
#include "ordata/instance.hpp"

#include "util/error.hpp"

namespace trex::ordata {

int Instance::add_set(std::string symbol, std::string key, std::string description, std::vector<std::string> elements) {
  sets.push_back({std::move(symbol), std::move(key), std::move(description), std::move(elements)});
  return int(sets.size()) - 1;
}

int Instance::add_param(std::string symbol, std::string key, std::string description, std::string unit,
                        std::vector<int> dims, std::vector<double> values, int decimals) {
  size_t expected = 1;
  for (int d : dims) expected *= sets.at(size_t(d)).elements.size();
  if (values.size() != expected) throw Error("ordata: parameter '" + key + "' has a wrong number of values");
  params.push_back({std::move(symbol), std::move(key), std::move(description), std::move(unit), std::move(dims),
                    std::move(values), decimals});
  return int(params.size()) - 1;
}

const ParamDef& Instance::param(const std::string& key) const {
  for (const auto& p : params)
    if (p.key == key) return p;
  throw Error("ordata: instance has no parameter '" + key + "'");
}

Json data_json(const Instance& inst) {
  Json d = Json::object();
  for (const auto& s : inst.sets) d[s.key] = s.elements;
  for (const auto& p : inst.params) {
    auto num = [&](double v) -> Json {
      if (p.decimals == 0) return Json(int64_t(v));
      return Json(v);
    };
    if (p.dims.empty()) {
      d[p.key] = num(p.values[0]);
    } else if (p.dims.size() == 1) {
      Json o = Json::object();
      const auto& el = inst.sets[size_t(p.dims[0])].elements;
      for (size_t i = 0; i < el.size(); ++i) o[el[i]] = num(p.values[i]);
      d[p.key] = std::move(o);
    } else {
      Json o = Json::object();
      const auto& r = inst.sets[size_t(p.dims[0])].elements;
      const auto& c = inst.sets[size_t(p.dims[1])].elements;
      for (size_t i = 0; i < r.size(); ++i) {
        Json row = Json::object();
        for (size_t j = 0; j < c.size(); ++j) row[c[j]] = num(p.values[i * c.size() + j]);
        o[r[i]] = std::move(row);
      }
      d[p.key] = std::move(o);
    }
  }
  return d;
}

void add_row(lp::Model& m, std::string name, std::vector<lp::Term> terms, lp::RowSense sense, double rhs) {
  lp::Row row;
  row.name = std::move(name);
  row.terms.reserve(terms.size());
  for (const auto& t : terms)
    if (t.coef != 0.0) row.terms.push_back(t);
  row.sense = sense;
  row.rhs = rhs;
  m.rows.push_back(std::move(row));
}

}  // namespace trex::ordata
