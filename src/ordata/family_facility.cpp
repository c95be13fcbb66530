// Facility-location family: open facilities (binary, fixed cost) and serve customer demand at
// per-unit cost; capacitated, uncapacitated (x <= d*y linking) and single-source variants.
#include <cmath>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

Instance make_facility_location(Ctx& c) {
  static const int kF[4] = {2, 3, 4, 5}, kC[4] = {3, 4, 6, 8};
  const auto& dom = c.dom;
  Instance in;
  const char* variants[] = {"capacitated", "uncapacitated", "single_source"};
  in.variant = variants[c.ri(0, 2)];
  in.name = "facility_location";
  bool uncap = in.variant == "uncapacitated", single = in.variant == "single_source";
  int nf = c.size(kF), nc = c.size(kC);
  auto places = pick_labels(c.rng, city_names(), nf + nc);
  std::vector<std::string> fac(places.begin(), places.begin() + nf), cus(places.begin() + nf, places.end());
  int F = in.add_set("F", "facilities", "candidate " + dom.source + "s", fac);
  int C = in.add_set("C", "customers", dom.sink + "s", cus);
  std::vector<double> fixed(static_cast<size_t>(nf)), cap(static_cast<size_t>(nf)), dem(static_cast<size_t>(nc));
  double total = 0;
  for (auto& d : dem) total += (d = double(c.ri(2, 20) * 5));
  for (auto& f : fixed) f = double(c.ri(20, 90) * 50);
  for (auto& k : cap) k = std::ceil(total * c.ru(0.35, 0.75) / 10) * 10;
  auto cost = random_distances(c.rng, nf, nc, c.ru(0.05, 0.2), 1.0);
  std::string cu = dom.currency, u = dom.unit;
  in.add_param("f[i]", "fixed_cost", "fixed opening cost", cu, {F}, fixed);
  if (!uncap) in.add_param("k[i]", "capacity", "capacity", u, {F}, cap);
  in.add_param("d[j]", "demand", "demand", u, {C}, dem);
  in.add_param("c[i,j]", "unit_cost", "delivery cost", cu + " per " + u, {F, C}, cost);

  in.vars.push_back({"y[i]", "1 if facility i is opened, else 0", "binary"});
  if (single)
    in.vars.push_back({"z[i,j]", "1 if customer j is served entirely by facility i, else 0", "binary"});
  else
    in.vars.push_back({"x[i,j]", u + " delivered from facility i to customer j", "continuous, >= 0"});
  in.sense = lp::ObjSense::Minimize;
  in.objective_formula = single ? "minimize sum_{i in F} f[i] * y[i] + sum_{i in F} sum_{j in C} c[i,j] * d[j] * z[i,j]"
                                : "minimize sum_{i in F} f[i] * y[i] + sum_{i in F} sum_{j in C} c[i,j] * x[i,j]";
  in.objective_description = "fixed opening cost plus delivery cost";
  in.objective_unit = cu;
  if (single) {
    in.constraints.push_back({"assign", "sum_{i in F} z[i,j] = 1   for all j in C", "every customer has exactly one facility"});
    in.constraints.push_back({"capacity", "sum_{j in C} d[j] * z[i,j] - k[i] * y[i] <= 0   for all i in F", "capacity only if open"});
  } else {
    in.constraints.push_back({"demand", "sum_{i in F} x[i,j] >= d[j]   for all j in C", "every customer's demand is met"});
    if (uncap)
      in.constraints.push_back({"link", "x[i,j] - d[j] * y[i] <= 0   for all i in F, j in C", "deliveries only from open facilities"});
    else
      in.constraints.push_back({"capacity", "sum_{j in C} x[i,j] - k[i] * y[i] <= 0   for all i in F", "capacity only if open"});
  }

  auto& m = in.model;
  m.objective.sense = lp::ObjSense::Minimize;
  for (int i = 0; i < nf; ++i) {
    int v = m.add_var("y_" + fac[size_t(i)], lp::VarType::Binary, 0, 1);
    m.objective.terms.push_back({v, fixed[size_t(i)]});
  }
  for (int i = 0; i < nf; ++i)
    for (int j = 0; j < nc; ++j) {
      double cij = cost[size_t(i * nc + j)];
      int v = m.add_var((single ? "z_" : "x_") + fac[size_t(i)] + "_" + cus[size_t(j)],
                        single ? lp::VarType::Binary : lp::VarType::Continuous, 0, single ? 1.0 : lp::kInf);
      m.objective.terms.push_back({v, single ? cij * dem[size_t(j)] : cij});
    }
  auto xv = [&](int i, int j) { return nf + i * nc + j; };
  for (int j = 0; j < nc; ++j) {
    std::vector<lp::Term> t;
    for (int i = 0; i < nf; ++i) t.push_back({xv(i, j), 1.0});
    if (single) add_row(m, "assign_" + cus[size_t(j)], t, lp::RowSense::EQ, 1.0);
    else add_row(m, "demand_" + cus[size_t(j)], t, lp::RowSense::GE, dem[size_t(j)]);
  }
  if (uncap) {
    for (int i = 0; i < nf; ++i)
      for (int j = 0; j < nc; ++j)
        add_row(m, "link_" + fac[size_t(i)] + "_" + cus[size_t(j)], {{xv(i, j), 1.0}, {i, -dem[size_t(j)]}}, lp::RowSense::LE, 0.0);
  } else {
    for (int i = 0; i < nf; ++i) {
      std::vector<lp::Term> t;
      for (int j = 0; j < nc; ++j) t.push_back({xv(i, j), single ? dem[size_t(j)] : 1.0});
      t.push_back({i, -cap[size_t(i)]});
      add_row(m, "capacity_" + fac[size_t(i)], t, lp::RowSense::LE, 0.0);
    }
  }

  in.intro = capitalize(c.org()) + c.x(" {is deciding which|must choose which|considers which} ") + dom.source +
             c.x("s to open among ") + std::to_string(nf) + " candidate sites (" + label_list(fac) + c.x(") to {serve|supply} ") +
             std::to_string(nc) + " " + dom.sink + "s (" + label_list(cus) + ").";
  in.rules.push_back(c.x("{Opening a site incurs its fixed opening cost|Each opened site costs its fixed opening cost}, and only open sites can deliver."));
  if (single) in.rules.push_back(c.x("{Each|Every} " + dom.sink + c.x(" must be served {entirely|completely} by a single site.")));
  else in.rules.push_back(c.x("{The demand of every " + dom.sink + " must be met|Every " + dom.sink + " must receive its full demand}."));
  if (!uncap) in.rules.push_back(c.x("{An open site cannot deliver more than its capacity|Deliveries from a site are limited by its capacity}."));
  else in.rules.push_back(c.x("{Sites have no capacity limit|Capacity is not a concern}."));
  in.goal = c.x("{Minimize|Find the plan that minimizes|Choose the sites and deliveries that minimize} the total of opening and delivery costs (in " + cu + ").");

  in.python_body =
      "model = gp.Model(\"facility_location\")\n"
      "y = {}\n"
      "for i in facilities:\n"
      "    y[i] = model.addVar(vtype=GRB.BINARY, name=f\"y_{i}\")\n";
  if (single)
    in.python_body +=
        "z = {}\n"
        "for i in facilities:\n"
        "    for j in customers:\n"
        "        z[i, j] = model.addVar(vtype=GRB.BINARY, name=f\"z_{i}_{j}\")\n"
        "model.setObjective(gp.quicksum(fixed_cost[i] * y[i] for i in facilities)\n"
        "                   + gp.quicksum(unit_cost[i][j] * demand[j] * z[i, j] for i in facilities for j in customers), GRB.MINIMIZE)\n"
        "for j in customers:\n"
        "    model.addConstr(gp.quicksum(z[i, j] for i in facilities) == 1, name=f\"assign_{j}\")\n"
        "for i in facilities:\n"
        "    model.addConstr(gp.quicksum(demand[j] * z[i, j] for j in customers) - capacity[i] * y[i] <= 0, name=f\"capacity_{i}\")\n";
  else {
    in.python_body +=
        "x = {}\n"
        "for i in facilities:\n"
        "    for j in customers:\n"
        "        x[i, j] = model.addVar(lb=0, vtype=GRB.CONTINUOUS, name=f\"x_{i}_{j}\")\n"
        "model.setObjective(gp.quicksum(fixed_cost[i] * y[i] for i in facilities)\n"
        "                   + gp.quicksum(unit_cost[i][j] * x[i, j] for i in facilities for j in customers), GRB.MINIMIZE)\n"
        "for j in customers:\n"
        "    model.addConstr(gp.quicksum(x[i, j] for i in facilities) >= demand[j], name=f\"demand_{j}\")\n";
    if (uncap)
      in.python_body +=
          "for i in facilities:\n"
          "    for j in customers:\n"
          "        model.addConstr(x[i, j] - demand[j] * y[i] <= 0, name=f\"link_{i}_{j}\")\n";
    else
      in.python_body +=
          "for i in facilities:\n"
          "    model.addConstr(gp.quicksum(x[i, j] for j in customers) - capacity[i] * y[i] <= 0, name=f\"capacity_{i}\")\n";
  }
  return in;
}

}  // namespace trex::ordata::detail
