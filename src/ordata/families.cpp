// Family dispatch and the helpers shared by the generators.
#include "ordata/families.hpp"

#include <cmath>

#include "util/error.hpp"

namespace trex::ordata {

namespace detail {

std::vector<double> random_distances(Rng& rng, int n, int m, double scale, double offset) {
  std::vector<double> ax(static_cast<size_t>(n)), ay(static_cast<size_t>(n)), bx(static_cast<size_t>(m)), by(static_cast<size_t>(m));
  for (int i = 0; i < n; ++i) ax[size_t(i)] = rng.uniform(0, 100), ay[size_t(i)] = rng.uniform(0, 100);
  for (int j = 0; j < m; ++j) bx[size_t(j)] = rng.uniform(0, 100), by[size_t(j)] = rng.uniform(0, 100);
  std::vector<double> d(size_t(n) * size_t(m));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j) {
      double e = std::hypot(ax[size_t(i)] - bx[size_t(j)], ay[size_t(i)] - by[size_t(j)]);
      d[size_t(i) * size_t(m) + size_t(j)] = std::max(1.0, std::round(offset + e * scale));
    }
  return d;
}

std::string python_bindings(const Instance& inst) {
  std::string s;
  for (const auto& set : inst.sets) s += set.key + " = data[\"" + set.key + "\"]\n";
  for (const auto& p : inst.params) s += p.key + " = data[\"" + p.key + "\"]\n";
  return s;
}

std::string label_list(const std::vector<std::string>& labels) {
  std::vector<std::string> r;
  r.reserve(labels.size());
  for (const auto& l : labels) r.push_back(readable(l));
  return join_list(r);
}

}  // namespace detail

Instance generate(Structure structure, Difficulty difficulty, int domain, uint64_t seed) {
  Rng rng(seed);
  const auto& doms = domains();
  if (domain < 0 || domain >= int(doms.size())) throw Error("ordata: domain index out of range");
  detail::Ctx c{rng, difficulty, doms[size_t(domain)]};
  Instance inst;
  switch (structure) {
    case Structure::Assignment: inst = detail::make_assignment(c); break;
    case Structure::Scheduling: inst = detail::make_scheduling(c); break;
    case Structure::Routing: inst = detail::make_routing(c); break;
    case Structure::Transportation: inst = detail::make_transportation(c); break;
    case Structure::Blending: inst = detail::make_blending(c); break;
    case Structure::CapacityPlanning: inst = detail::make_capacity_planning(c); break;
    case Structure::FacilityLocation: inst = detail::make_facility_location(c); break;
    case Structure::ProductionPlanning: inst = detail::make_production_planning(c); break;
    case Structure::Portfolio: inst = detail::make_portfolio(c); break;
    case Structure::GenericLpMip: inst = detail::make_generic(c); break;
  }
  inst.structure = structure;
  inst.difficulty = difficulty;
  inst.domain = domain;
  inst.seed = seed;
  inst.model.name = inst.name;
  inst.model.rebuild_index();
  return inst;
}

std::vector<std::string> family_variants(Structure structure) {
  switch (structure) {
    case Structure::Assignment: return {"one_to_one", "max_score", "generalized"};
    case Structure::Scheduling: return {"shift_cover", "shift_cover_capped", "weekly_roster"};
    case Structure::Routing: return {"tsp_mtz", "cvrp_mtz"};
    case Structure::Transportation: return {"basic", "integer", "route_limits"};
    case Structure::Blending: return {"fixed_batch", "integer_batch", "ratio"};
    case Structure::CapacityPlanning: return {"product_mix", "integer_mix", "expansion"};
    case Structure::FacilityLocation: return {"capacitated", "uncapacitated", "single_source"};
    case Structure::ProductionPlanning: return {"inventory", "setup", "ending_stock"};
    case Structure::Portfolio: return {"linear", "cardinality_milp"};
    case Structure::GenericLpMip: return {"max_le", "min_ge", "mixed_integer"};
  }
  return {};
}

}  // namespace trex::ordata
