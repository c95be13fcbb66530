// Routing with single-commodity flow subtour elimination (task family: routing; Gavish-Graves).
// tsp_scf: a travelling-salesman tour; x[i,j] binary arcs, every location left and entered once; a
// flow f[i,j] >= 0 on the arcs that do not enter the depot: the depot sends n - 1 units, every other
// location keeps one, and an arc carries flow only when used, f[i,j] <= (n - 1) x[i,j]. A subtour
// without the depot would have to keep units it never receives.
// cvrp_scf: a capacitated vehicle-routing problem; every customer left and entered once, at most K
// vehicles leave the depot; the flow is the load on board: the depot sends the total demand, customer
// k unloads q[k], and a used arc carries at most the vehicle capacity, f[i,j] <= Q x[i,j].
// The fleet size is the first-fit-decreasing bin count of the demands for that capacity, so every
// draw is feasible. The MTZ versions are in the classic routing family (family_routing.cpp).
#include <algorithm>
#include <cmath>
#include <functional>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

namespace {
// Bins of capacity `cap` that first-fit decreasing needs for `sizes` (each size <= cap).
int first_fit_bins(std::vector<double> sizes, double cap) {
  std::sort(sizes.begin(), sizes.end(), std::greater<>());
  std::vector<double> load;
  for (double s : sizes) {
    auto it = std::find_if(load.begin(), load.end(), [&](double l) { return l + s <= cap; });
    if (it == load.end()) load.push_back(s);
    else *it += s;
  }
  return int(load.size());
}
}  // namespace

Instance make_routing_flow(Ctx& c) {
  // Locations, depot included. CBC time grows fast with these weak flow relaxations: 8 locations took
  // ~0.2 s per sample, so the sizes are those of the MTZ family.
  static const int kTsp[4] = {4, 5, 6, 6}, kVrp[4] = {4, 5, 5, 6};
  const auto& dom = c.dom;
  Instance in;
  const char* variants[] = {"tsp_scf", "cvrp_scf"};
  in.variant = variants[c.ri(0, 1)];
  bool vrp = in.variant == "cvrp_scf";
  in.name = vrp ? "vehicle_routing_flow" : "tsp_flow";
  int n = vrp ? c.size(kVrp, 0) : c.size(kTsp);
  auto locs = pick_labels(c.rng, city_names(), n);
  int L = in.add_set("N", "locations", "locations (the first one is the depot)", locs);
  auto dist = random_distances(c.rng, n, n, 1.0, 0.0);
  for (int i = 0; i < n; ++i)  // symmetric, zero diagonal
    for (int j = 0; j < n; ++j) {
      if (i == j) dist[size_t(i * n + j)] = 0;
      else if (j < i) dist[size_t(i * n + j)] = dist[size_t(j * n + i)];
    }
  in.add_param("d[i,j]", "distance", "travel distance", "km", {L, L}, dist);
  std::vector<std::string> cust(locs.begin() + 1, locs.end());
  std::vector<double> q;
  double cap = 0, total = 0, vehicles = 0;
  if (vrp) {
    int C = in.add_set("C", "customers", "customers", cust);
    q.resize(cust.size());
    for (auto& v : q) total += (v = double(c.ri(2, 9) * 5));
    double mx = *std::max_element(q.begin(), q.end());
    cap = std::max(mx, std::ceil(total / double(c.ri(2, 3)) * c.ru(1.1, 1.35) / 5) * 5);
    vehicles = double(first_fit_bins(q, cap));
    in.add_param("q[k]", "load", "delivery size", dom.unit, {C}, q);
    in.add_param("Q", "vehicle_capacity", "vehicle capacity", dom.unit, {}, {cap});
    in.add_param("K", "vehicles", "number of vehicles available", "vehicles", {}, {vehicles});
  }
  const std::string depot = locs[0];
  double big = vrp ? cap : double(n - 1);

  in.vars.push_back({"x[i,j]", "1 if the route travels directly from location i to location j, else 0", "binary, i != j"});
  in.vars.push_back({"f[i,j]", vrp ? dom.unit + " on board on the leg from i to j (j not the depot)"
                                   : "flow units carried from i to j (j not the depot)",
                     "continuous, >= 0"});
  in.sense = lp::ObjSense::Minimize;
  in.objective_formula = "minimize sum_{i in N} sum_{j in N, j != i} d[i,j] * x[i,j]";
  in.objective_description = "total travel distance";
  in.objective_unit = "km";
  if (vrp) {
    in.constraints.push_back({"leave", "sum_{j in N, j != k} x[k,j] = 1   for all k in C", "every customer is left once"});
    in.constraints.push_back({"visit", "sum_{i in N, i != k} x[i,k] = 1   for all k in C", "every customer is entered once"});
    in.constraints.push_back({"fleet", "sum_{k in C} x[depot,k] <= K", "at most K vehicles leave the depot"});
    in.constraints.push_back({"link", "f[i,j] - Q * x[i,j] <= 0   for all i in N, j in C, i != j", "a leg carries a load only if driven, at most Q"});
    in.constraints.push_back({"source", "sum_{k in C} f[depot,k] = sum_{k in C} q[k]", "the vehicles leave the depot with all deliveries"});
    in.constraints.push_back({"unload", "sum_{i in N, i != k} f[i,k] - sum_{j in C, j != k} f[k,j] = q[k]   for all k in C",
                              "customer k unloads its delivery"});
  } else {
    in.constraints.push_back({"out", "sum_{j in N, j != i} x[i,j] = 1   for all i in N", "the tour leaves every location once"});
    in.constraints.push_back({"in", "sum_{i in N, i != j} x[i,j] = 1   for all j in N", "the tour enters every location once"});
    in.constraints.push_back({"link", "f[i,j] - (n - 1) * x[i,j] <= 0   for all i in N, j in N \\ {depot}, i != j",
                              "flow only on arcs of the tour, at most n - 1 units"});
    in.constraints.push_back({"source", "sum_{j in N, j != depot} f[depot,j] = n - 1", "the depot sends one unit for every other location"});
    in.constraints.push_back({"consume", "sum_{i in N, i != k} f[i,k] - sum_{j in N \\ {depot}, j != k} f[k,j] = 1   for all k in N \\ {depot}",
                              "every other location keeps one unit"});
  }

  // Variables in order of first appearance in the LP file: x (objective, row-major), then f (link rows).
  auto& m = in.model;
  m.objective.sense = lp::ObjSense::Minimize;
  std::vector<int> xv(size_t(n) * size_t(n), -1), fv(size_t(n) * size_t(n), -1);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j) {
        int v = m.add_var("x_" + locs[size_t(i)] + "_" + locs[size_t(j)], lp::VarType::Binary, 0, 1);
        xv[size_t(i * n + j)] = v;
        m.objective.terms.push_back({v, dist[size_t(i * n + j)]});
      }
  for (int i = 0; i < n; ++i)
    for (int j = 1; j < n; ++j)
      if (i != j) fv[size_t(i * n + j)] = m.add_var("f_" + locs[size_t(i)] + "_" + locs[size_t(j)]);
  add_degree_rows(m, xv, locs, vrp);
  if (vrp) {
    std::vector<lp::Term> t;
    for (int j = 1; j < n; ++j) t.push_back({xv[size_t(j)], 1.0});
    add_row(m, "fleet", t, lp::RowSense::LE, vehicles);
  }
  for (int i = 0; i < n; ++i)
    for (int j = 1; j < n; ++j)
      if (i != j)
        add_row(m, "link_" + locs[size_t(i)] + "_" + locs[size_t(j)], {{fv[size_t(i * n + j)], 1.0}, {xv[size_t(i * n + j)], -big}},
                lp::RowSense::LE, 0.0);
  {
    std::vector<lp::Term> t;
    for (int j = 1; j < n; ++j) t.push_back({fv[size_t(j)], 1.0});
    add_row(m, "source", t, lp::RowSense::EQ, vrp ? total : double(n - 1));
  }
  for (int k = 1; k < n; ++k) {
    std::vector<lp::Term> t;
    for (int i = 0; i < n; ++i)
      if (i != k) t.push_back({fv[size_t(i * n + k)], 1.0});
    for (int j = 1; j < n; ++j)
      if (j != k) t.push_back({fv[size_t(k * n + j)], -1.0});
    add_row(m, (vrp ? "unload_" : "consume_") + locs[size_t(k)], t, lp::RowSense::EQ, vrp ? q[size_t(k - 1)] : 1.0);
  }

  // Narrative scenarios: a delivery round, a service / inspection round, a collection round.
  int scen = c.scenario(3);
  std::string cl = std::to_string(n - 1) + (vrp ? " customers (" : " locations (") + label_list(cust) + ")";
  if (vrp) {
    if (scen == 0)
      in.intro = capitalize(c.org()) + c.x(" {dispatches|sends out} up to ") + fmt_num(vehicles) + c.x(" {vehicles|trucks|vans} from its depot in ") +
                 depot + c.x(" to {deliver to|serve} ") + cl + ".";
    else if (scen == 1)
      in.intro = c.x("{Every|Each} " + dom.period + ", ") + c.org() + c.x(" {restocks|supplies} ") + cl + c.x(" with " + dom.good + " from ") + depot +
                 c.x(", using at most ") + fmt_num(vehicles) + c.x(" {identical vehicles|vehicles of equal size}.");
    else
      in.intro = capitalize(c.org()) + c.x(" {plans|must plan} the delivery routes of its fleet (") + fmt_num(vehicles) + c.x(" vehicles, based in ") +
                 depot + c.x(") to {the|its} ") + cl + ".";
    in.rules.push_back(c.x("{Every|Each} customer {is visited|must be served} exactly once by one vehicle, and every route starts and ends at the depot."));
    in.rules.push_back(c.x("{A vehicle leaves the depot with the deliveries of its whole route and unloads each customer's delivery there|"
                           "The load on board falls by each customer's delivery along the route}") +
                       c.x("{; on every leg the load may not exceed the vehicle capacity of |, and no leg may carry more than the capacity of }") +
                       fmt_num(cap) + " " + dom.unit + ".");
    in.rules.push_back(c.x("{Model the load on board as a single-commodity flow on the legs driven, which also rules out routes that skip the depot|"
                           "Use a load flow on the driven legs (single-commodity flow) to keep every route connected to the depot}."));
  } else {
    if (scen == 0)
      in.intro = capitalize(c.org()) + c.x(" {needs a|plans a|wants one} {round trip|closed tour} that starts in ") + depot +
                 c.x(", visits {every|each} other location (" + label_list(cust) + ") exactly once and returns to ") + depot + ".";
    else if (scen == 1)
      in.intro = c.x("{A technician|An inspector|A service engineer} of ") + c.org() + c.x(" {starts|sets out} from ") + depot + c.x(" and {must call at|has to visit} ") +
                 cl + c.x(" once each before {returning|coming back}.");
    else
      in.intro = capitalize(c.org()) + c.x(" {collects|picks up} " + dom.good + " at ") + cl + c.x(" in one {round|circuit} that begins and ends at ") + depot + ".";
    in.rules.push_back(c.x("{The tour must be a single cycle|Subtours are not allowed}: {every|each} location is entered and left exactly once."));
    in.rules.push_back(c.x("{Rule out subtours with a single-commodity flow|Use a single-commodity flow to keep the tour connected}") +
                       c.x("{: the depot sends out one unit for every other location, each of them keeps one unit, and only legs of the tour carry flow (at most " +
                           std::to_string(n - 1) + " units)."
                           "|: " + depot + " ships " + std::to_string(n - 1) + " units, every other location absorbs one, and a leg not on the tour carries none (a used one at most " +
                           std::to_string(n - 1) + ").}"));
  }
  in.rules.push_back(c.x("{Distances are symmetric and given in km|Travel distances are in km}."));
  in.goal = c.x("{Minimize|Find the routing that minimizes|Determine the " + std::string(vrp ? "routes" : "tour") + " with the smallest} total travel distance (in km).");

  in.python_body =
      "model = gp.Model(\"" + in.name + "\")\n"
      "depot = locations[0]\n"
      "others = locations[1:]\n"
      "x = {}\n"
      "for i in locations:\n"
      "    for j in locations:\n"
      "        if i != j:\n"
      "            x[i, j] = model.addVar(vtype=GRB.BINARY, name=f\"x_{i}_{j}\")\n"
      "f = {}\n"
      "for (i, j) in x:\n"
      "    if j != depot:\n"
      "        f[i, j] = model.addVar(lb=0, vtype=GRB.CONTINUOUS, name=f\"f_{i}_{j}\")\n"
      "model.setObjective(gp.quicksum(distance[i][j] * x[i, j] for (i, j) in x), GRB.MINIMIZE)\n";
  if (vrp)
    in.python_body +=
        "for k in customers:\n"
        "    model.addConstr(gp.quicksum(x[k, j] for j in locations if j != k) == 1, name=f\"leave_{k}\")\n"
        "for k in customers:\n"
        "    model.addConstr(gp.quicksum(x[i, k] for i in locations if i != k) == 1, name=f\"visit_{k}\")\n"
        "model.addConstr(gp.quicksum(x[depot, k] for k in customers) <= vehicles, name=\"fleet\")\n"
        "for (i, j) in f:\n"
        "    model.addConstr(f[i, j] - vehicle_capacity * x[i, j] <= 0, name=f\"link_{i}_{j}\")\n"
        "model.addConstr(gp.quicksum(f[depot, k] for k in customers) == sum(load[k] for k in customers), name=\"source\")\n"
        "for k in customers:\n"
        "    model.addConstr(gp.quicksum(f[i, k] for i in locations if i != k) - gp.quicksum(f[k, j] for j in customers if j != k) == load[k],\n"
        "                    name=f\"unload_{k}\")\n";
  else
    in.python_body +=
        "n = len(locations)\n"
        "for i in locations:\n"
        "    model.addConstr(gp.quicksum(x[i, j] for j in locations if j != i) == 1, name=f\"out_{i}\")\n"
        "for j in locations:\n"
        "    model.addConstr(gp.quicksum(x[i, j] for i in locations if i != j) == 1, name=f\"in_{j}\")\n"
        "for (i, j) in f:\n"
        "    model.addConstr(f[i, j] - (n - 1) * x[i, j] <= 0, name=f\"link_{i}_{j}\")\n"
        "model.addConstr(gp.quicksum(f[depot, j] for j in others) == n - 1, name=\"source\")\n"
        "for k in others:\n"
        "    model.addConstr(gp.quicksum(f[i, k] for i in locations if i != k) - gp.quicksum(f[k, j] for j in others if j != k) == 1,\n"
        "                    name=f\"consume_{k}\")\n";
  return in;
}

}  // namespace trex::ordata::detail
