// Location-allocation family (task family: facility location): open exactly p of the candidate sites
// and allocate every customer to open sites; no fixed costs (the classic facility_location has them).
// p_median: min sum w[j] d[i,j] x[i,j]; sum_i y[i] = p; sum_i x[i,j] = 1; x[i,j] <= y[i]; x, y binary.
// p_center: min D; the same open/assign/link rows plus D >= sum_i d[i,j] x[i,j] for every customer
// (the largest customer-to-site distance); x, y binary.
// capacitated_allocation: the capacitated p-median with split allocation: x[i,j] in [0,1] is the share
// of customer j's demand served by site i; sum_i x[i,j] = 1; sum_j w[j] x[i,j] <= k[i] y[i]; y binary.
// Every capacity is at least 1.05 x the total demand / p, so any p open sites can serve everyone.
#include <algorithm>
#include <cmath>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

Instance make_location_allocation(Ctx& c) {
  static const int kS[4] = {4, 5, 6, 8}, kC[4] = {5, 7, 9, 11};
  const auto& dom = c.dom;
  Instance in;
  const char* variants[] = {"p_median", "p_center", "capacitated_allocation"};
  in.variant = variants[c.ri(0, 2)];
  in.name = "location_allocation";
  bool center = in.variant == "p_center", capac = in.variant == "capacitated_allocation";
  int ns = c.size(kS), nc = c.size(kC);
  int p = std::clamp(int(std::round(ns * c.ru(0.3, 0.5))), 2, ns - 1);
  auto places = pick_labels(c.rng, city_names(), ns + nc);
  std::vector<std::string> sl(places.begin(), places.begin() + ns), cl(places.begin() + ns, places.end());
  int S = in.add_set("I", "sites", "candidate " + dom.source + " sites", sl);
  int C = in.add_set("J", "customers", dom.sink + "s", cl);
  std::vector<double> w(static_cast<size_t>(nc)), k(static_cast<size_t>(ns));
  double total = 0;
  for (auto& v : w) total += (v = double(c.ri(1, 12) * 5));
  for (auto& v : k) v = std::ceil(total * c.ru(1.05, 1.5) / p / 5) * 5;
  auto d = random_distances(c.rng, ns, nc, 1.0, 0.0);
  std::string u = dom.unit;
  in.add_param("p", "open_count", "number of sites to open", "sites", {}, {double(p)});
  if (!center) in.add_param("w[j]", "demand", "demand", u, {C}, w);
  if (capac) in.add_param("k[i]", "capacity", "site capacity", u, {S}, k);
  in.add_param("d[i,j]", "distance", "distance from site to customer", "km", {S, C}, d);

  if (center) in.vars.push_back({"D", "largest distance between a customer and its site", "continuous, >= 0"});
  in.vars.push_back({"y[i]", "1 if site i is opened, else 0", "binary"});
  if (capac)
    in.vars.push_back({"x[i,j]", "share of customer j's demand served by site i", "continuous, 0 <= x[i,j] <= 1"});
  else
    in.vars.push_back({"x[i,j]", "1 if customer j is allocated to site i, else 0", "binary"});
  in.sense = lp::ObjSense::Minimize;
  in.objective_formula = center ? "minimize D" : "minimize sum_{i in I} sum_{j in J} w[j] * d[i,j] * x[i,j]";
  in.objective_description = center ? "largest customer-to-site distance" : "demand-weighted distance";
  in.objective_unit = center ? "km" : u + " x km";
  in.constraints.push_back({"open", "sum_{i in I} y[i] = p", "exactly p sites are opened"});
  in.constraints.push_back({"assign", "sum_{i in I} x[i,j] = 1   for all j in J",
                            capac ? "every customer's demand is fully served" : "every customer is allocated to one site"});
  if (capac)
    in.constraints.push_back({"capacity", "sum_{j in J} w[j] * x[i,j] - k[i] * y[i] <= 0   for all i in I",
                              "an open site serves at most its capacity, a closed one nothing"});
  else
    in.constraints.push_back({"link", "x[i,j] - y[i] <= 0   for all i in I, j in J", "customers are allocated to open sites only"});
  if (center)
    in.constraints.push_back({"radius", "sum_{i in I} d[i,j] * x[i,j] - D <= 0   for all j in J", "D is at least every customer's distance"});

  // Variables in order of first appearance in the LP file: p_center D (objective), y (open row), x (assign
  // rows); the others x (objective), then y (open row).
  auto& m = in.model;
  m.objective.sense = lp::ObjSense::Minimize;
  int dv = -1, y0 = 0, x0 = 0;
  auto add_x = [&] {
    x0 = m.num_vars();
    for (int i = 0; i < ns; ++i)
      for (int j = 0; j < nc; ++j) {
        int v = m.add_var("x_" + sl[size_t(i)] + "_" + cl[size_t(j)], capac ? lp::VarType::Continuous : lp::VarType::Binary, 0, 1);
        if (!center) m.objective.terms.push_back({v, w[size_t(j)] * d[size_t(i * nc + j)]});
      }
  };
  // p_center: x first appears in the assign rows, customer by customer.
  auto add_x_by_customer = [&] {
    x0 = m.num_vars();
    for (int j = 0; j < nc; ++j)
      for (int i = 0; i < ns; ++i) m.add_var("x_" + sl[size_t(i)] + "_" + cl[size_t(j)], lp::VarType::Binary, 0, 1);
  };
  auto add_y = [&] {
    y0 = m.num_vars();
    for (int i = 0; i < ns; ++i) m.add_var("y_" + sl[size_t(i)], lp::VarType::Binary, 0, 1);
  };
  if (center) {
    m.objective.terms.push_back({dv = m.add_var("D"), 1.0});
    add_y(), add_x_by_customer();
  } else {
    add_x(), add_y();
  }
  auto xv = [&](int i, int j) { return center ? x0 + j * ns + i : x0 + i * nc + j; };
  {
    std::vector<lp::Term> t;
    for (int i = 0; i < ns; ++i) t.push_back({y0 + i, 1.0});
    add_row(m, "open", t, lp::RowSense::EQ, double(p));
  }
  for (int j = 0; j < nc; ++j) {
    std::vector<lp::Term> t;
    for (int i = 0; i < ns; ++i) t.push_back({xv(i, j), 1.0});
    add_row(m, "assign_" + cl[size_t(j)], t, lp::RowSense::EQ, 1.0);
  }
  if (capac) {
    for (int i = 0; i < ns; ++i) {
      std::vector<lp::Term> t;
      for (int j = 0; j < nc; ++j) t.push_back({xv(i, j), w[size_t(j)]});
      t.push_back({y0 + i, -k[size_t(i)]});
      add_row(m, "capacity_" + sl[size_t(i)], t, lp::RowSense::LE, 0.0);
    }
  } else {
    for (int i = 0; i < ns; ++i)
      for (int j = 0; j < nc; ++j)
        add_row(m, "link_" + sl[size_t(i)] + "_" + cl[size_t(j)], {{xv(i, j), 1.0}, {y0 + i, -1.0}}, lp::RowSense::LE, 0.0);
  }
  for (int j = 0; center && j < nc; ++j) {
    std::vector<lp::Term> t;
    for (int i = 0; i < ns; ++i) t.push_back({xv(i, j), d[size_t(i * nc + j)]});
    t.push_back({dv, -1.0});
    add_row(m, "radius_" + cl[size_t(j)], t, lp::RowSense::LE, 0.0);
  }

  // Narrative scenarios: siting depots for a customer base, placing public service points, consolidating.
  int scen = c.scenario(3);
  std::string ps = std::to_string(p), sites = std::to_string(ns) + " candidate sites (" + label_list(sl) + ")",
              cs = std::to_string(nc) + " " + dom.sink + "s (" + label_list(cl) + ")";
  if (scen == 0)
    in.intro = capitalize(c.org()) + c.x(" {will open|plans to open} exactly ") + ps + " " + dom.source + c.x("s among ") + sites +
               c.x(" to {serve|supply} ") + cs + ".";
  else if (scen == 1)
    in.intro = c.x("{To serve|For} ") + cs + ", " + c.org() + c.x(" {places|must place} ") + ps + c.x(" service points at ") + sites +
               c.x("{; distances from every site to every " + dom.sink + " are known.|.}");
  else
    in.intro = capitalize(c.org()) + c.x(" {consolidates|reorganises} its network: of ") + sites + c.x(", exactly ") + ps +
               c.x(" {remain|will stay} open and {take over|serve} ") + cs + ".";
  in.rules.push_back(c.x("{Exactly " + ps + " sites must be opened|The number of open sites is exactly " + ps + "}") +
                     c.x("{, and customers can only be served from open sites.|; a closed site serves nobody.}"));
  if (capac) {
    in.rules.push_back(c.x("{A " + dom.sink + "'s demand may be split between several open sites|Demand can be divided among open sites}") +
                       c.x("{, but every " + dom.sink + " must be served in full.|; all of it must be served.}"));
    in.rules.push_back(c.x("{An open site serves at most its capacity|The demand served by a site is limited by its capacity}."));
  } else {
    in.rules.push_back(c.x("{Every " + dom.sink + " is allocated to exactly one open site|Each " + dom.sink + " is served entirely by a single open site}."));
  }
  if (center)
    in.goal = c.x("{Minimize the largest distance between a " + dom.sink + " and its site|Choose the sites so that the farthest " + dom.sink +
                  " is as close as possible to its site} (in km).");
  else
    in.goal = c.x("{Minimize|Find the plan that minimizes|Choose the sites and allocation that minimize} the total demand-weighted distance "
                  "(demand times km).");

  in.python_body = "model = gp.Model(\"location_allocation\")\n";
  std::string xtype = capac ? "lb=0, ub=1, vtype=GRB.CONTINUOUS" : "vtype=GRB.BINARY";
  std::string xdef = "x = {(i, j): model.addVar(" + xtype + ", name=f\"x_{i}_{j}\") " +
                     (center ? "for j in customers for i in sites}\n" : "for i in sites for j in customers}\n");
  std::string ydef = "y = {i: model.addVar(vtype=GRB.BINARY, name=f\"y_{i}\") for i in sites}\n";
  if (center)
    in.python_body += "D = model.addVar(lb=0, vtype=GRB.CONTINUOUS, name=\"D\")\n" + ydef + xdef + "model.setObjective(D, GRB.MINIMIZE)\n";
  else
    in.python_body += xdef + ydef +
                      "model.setObjective(gp.quicksum(demand[j] * distance[i][j] * x[i, j] for i in sites for j in customers), GRB.MINIMIZE)\n";
  in.python_body +=
      "model.addConstr(gp.quicksum(y[i] for i in sites) == open_count, name=\"open\")\n"
      "for j in customers:\n"
      "    model.addConstr(gp.quicksum(x[i, j] for i in sites) == 1, name=f\"assign_{j}\")\n";
  if (capac)
    in.python_body +=
        "for i in sites:\n"
        "    model.addConstr(gp.quicksum(demand[j] * x[i, j] for j in customers) - capacity[i] * y[i] <= 0, name=f\"capacity_{i}\")\n";
  else
    in.python_body +=
        "for i in sites:\n"
        "    for j in customers:\n"
        "        model.addConstr(x[i, j] - y[i] <= 0, name=f\"link_{i}_{j}\")\n";
  if (center)
    in.python_body +=
        "for j in customers:\n"
        "    model.addConstr(gp.quicksum(distance[i][j] * x[i, j] for i in sites) - D <= 0, name=f\"radius_{j}\")\n";
  return in;
}

}  // namespace trex::ordata::detail
