// Transportation family: sources with supply, destinations with demand, per-unit route costs;
// variants with integer shipments or per-route limits.
#include <cmath>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

Instance make_transportation(Ctx& c) {
  static const int kS[4] = {2, 4, 6, 10}, kD[4] = {3, 5, 8, 14};
  const auto& dom = c.dom;
  Instance in;
  const char* variants[] = {"basic", "integer", "route_limits"};
  in.variant = variants[c.ri(0, 2)];
  in.name = "transportation";
  int ns = c.size(kS), nd = c.size(kD);
  auto places = pick_labels(c.rng, city_names(), ns + nd);
  std::vector<std::string> src(places.begin(), places.begin() + ns), dst(places.begin() + ns, places.end());
  int S = in.add_set("I", "sources", dom.source + "s", src);
  int D = in.add_set("J", "destinations", dom.sink + "s", dst);

  std::vector<double> demand(static_cast<size_t>(nd)), supply(static_cast<size_t>(ns));
  double total = 0;
  for (auto& d : demand) total += (d = double(c.ri(4, 40) * 5));
  std::vector<double> w(static_cast<size_t>(ns));
  double wsum = 0;
  for (auto& x : w) wsum += (x = c.ru(0.6, 1.4));
  double factor = c.ru(1.08, 1.4);
  for (int i = 0; i < ns; ++i) supply[size_t(i)] = std::ceil(total * factor * w[size_t(i)] / wsum / 5) * 5;
  auto cost = random_distances(c.rng, ns, nd, c.ru(0.1, 0.3), double(c.ri(2, 6)));
  std::string cu = dom.currency;
  in.add_param("s[i]", "supply", "supply available at each " + dom.source, dom.unit, {S}, supply);
  in.add_param("d[j]", "demand", "demand of each " + dom.sink, dom.unit, {D}, demand);
  in.add_param("c[i,j]", "cost", "shipping cost", cu + " per " + dom.unit, {S, D}, cost);
  std::vector<double> limit;
  bool limits = in.variant == "route_limits";
  if (limits) {
    limit.resize(size_t(ns) * size_t(nd));
    for (int i = 0; i < ns; ++i)
      for (int j = 0; j < nd; ++j)
        limit[size_t(i * nd + j)] = std::ceil(demand[size_t(j)] * c.ru(0.35, 0.8) / 5) * 5;
    in.add_param("u[i,j]", "route_limit", "route capacity", dom.unit, {S, D}, limit);
  }
  bool integer = in.variant == "integer";

  in.vars.push_back({"x[i,j]", dom.unit + " of " + dom.good + " shipped from " + dom.source + " i to " + dom.sink + " j",
                     integer ? "integer, >= 0" : (limits ? "continuous, 0 <= x[i,j] <= u[i,j]" : "continuous, >= 0")});
  in.sense = lp::ObjSense::Minimize;
  in.objective_formula = "minimize sum_{i in I} sum_{j in J} c[i,j] * x[i,j]";
  in.objective_description = "total shipping cost";
  in.objective_unit = cu;
  in.constraints.push_back({"supply", "sum_{j in J} x[i,j] <= s[i]   for all i in I",
                            "no " + dom.source + " ships more than its supply"});
  in.constraints.push_back({"demand", "sum_{i in I} x[i,j] >= d[j]   for all j in J",
                            "every " + dom.sink + " receives at least its demand"});

  auto& m = in.model;
  for (int i = 0; i < ns; ++i)
    for (int j = 0; j < nd; ++j) {
      int v = m.add_var("x_" + src[size_t(i)] + "_" + dst[size_t(j)], integer ? lp::VarType::Integer : lp::VarType::Continuous,
                        0.0, limits ? limit[size_t(i * nd + j)] : lp::kInf);
      m.objective.terms.push_back({v, cost[size_t(i * nd + j)]});
    }
  m.objective.sense = lp::ObjSense::Minimize;
  for (int i = 0; i < ns; ++i) {
    std::vector<lp::Term> t;
    for (int j = 0; j < nd; ++j) t.push_back({i * nd + j, 1.0});
    add_row(m, "supply_" + src[size_t(i)], t, lp::RowSense::LE, supply[size_t(i)]);
  }
  for (int j = 0; j < nd; ++j) {
    std::vector<lp::Term> t;
    for (int i = 0; i < ns; ++i) t.push_back({i * nd + j, 1.0});
    add_row(m, "demand_" + dst[size_t(j)], t, lp::RowSense::GE, demand[size_t(j)]);
  }

  in.intro = capitalize(c.org()) + c.x(" {operates|runs|manages} ") + std::to_string(ns) + " " + dom.source + "s (" +
             label_list(src) + ")" + c.x(" that {supply|serve|deliver to} ") + std::to_string(nd) + " " + dom.sink +
             "s (" + label_list(dst) + ")" + c.x(" with {|weekly |monthly }") + dom.good + ".";
  in.rules.push_back(c.x("{Each|Every} " + dom.source + " {can ship|has} at most its {available supply|supply}") +
                     c.x("{, and|, while|; in addition,} {each|every} " + dom.sink + " must receive at least its demand."));
  if (limits)
    in.rules.push_back(c.x("{Each route has a capacity: no more than|Shipments on every route are capped at} ") +
                       "the route capacity " + c.x("{can be sent along it|may use it|may be shipped}") + ".");
  if (integer)
    in.rules.push_back(c.x("{Shipments must be whole|Only whole|Quantities must be integer numbers of} ") + dom.unit + ".");
  in.goal = c.x("{Find the shipping plan that minimizes|Determine how much to ship on each route to minimize|"
                "Minimize} the total shipping cost") + " (in " + cu + ").";

  std::string vt = integer ? "GRB.INTEGER" : "GRB.CONTINUOUS";
  std::string ub = limits ? "route_limit[i][j]" : "GRB.INFINITY";
  in.python_body =
      "model = gp.Model(\"transportation\")\n"
      "x = {}\n"
      "for i in sources:\n"
      "    for j in destinations:\n"
      "        x[i, j] = model.addVar(lb=0, ub=" + ub + ", vtype=" + vt + ", name=f\"x_{i}_{j}\")\n"
      "model.setObjective(gp.quicksum(cost[i][j] * x[i, j] for i in sources for j in destinations), GRB.MINIMIZE)\n"
      "for i in sources:\n"
      "    model.addConstr(gp.quicksum(x[i, j] for j in destinations) <= supply[i], name=f\"supply_{i}\")\n"
      "for j in destinations:\n"
      "    model.addConstr(gp.quicksum(x[i, j] for i in sources) >= demand[j], name=f\"demand_{j}\")\n";
  return in;
}

}  // namespace trex::ordata::detail
