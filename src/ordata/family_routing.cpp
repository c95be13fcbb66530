// Routing family: a small travelling-salesman tour and a capacitated vehicle-routing problem, both
// with Miller-Tucker-Zemlin (MTZ) subtour-elimination constraints (order / load variables u).
#include <cmath>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

Instance make_routing(Ctx& c) {
  static const int kTsp[4] = {4, 5, 6, 6}, kVrp[4] = {4, 5, 5, 6};
  const auto& dom = c.dom;
  Instance in;
  in.variant = c.rng.bernoulli(0.5) ? "tsp_mtz" : "cvrp_mtz";
  bool vrp = in.variant == "cvrp_mtz";
  in.name = vrp ? "vehicle_routing" : "tsp";
  int n = vrp ? c.size(kVrp, 0) : c.size(kTsp);  // CBC time grows fast with MTZ models: keep them small
  auto locs = pick_labels(c.rng, city_names(), n);
  int L = in.add_set("N", "locations", "locations (the first one is the depot)", locs);
  auto dist = random_distances(c.rng, n, n, 1.0, 0.0);
  // Symmetric with a zero diagonal (upper triangle mirrored).
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (i == j) dist[size_t(i * n + j)] = 0;
      else if (j < i) dist[size_t(i * n + j)] = dist[size_t(j * n + i)];
    }
  in.add_param("d[i,j]", "distance", "travel distance", "km", {L, L}, dist);
  std::vector<std::string> cust(locs.begin() + 1, locs.end());
  std::vector<double> q;
  double cap = 0, vehicles = 0;
  if (vrp) {
    int C = in.add_set("C", "customers", "customers", cust);
    q.resize(cust.size());
    double total = 0;
    for (auto& v : q) total += (v = double(c.ri(2, 9) * 5));
    vehicles = double(c.ri(2, 3));
    double mx = 0;
    for (double v : q) mx = std::max(mx, v);
    cap = std::max(mx, std::ceil(total / vehicles * c.ru(1.1, 1.35) / 5) * 5);
    in.add_param("q[i]", "load", "delivery size", dom.unit, {C}, q);
    in.add_param("Q", "vehicle_capacity", "vehicle capacity", dom.unit, {}, {cap});
    in.add_param("K", "vehicles", "number of vehicles available", "vehicles", {}, {vehicles});
  }

  in.vars.push_back({"x[i,j]", "1 if the route travels directly from location i to location j, else 0", "binary, i != j"});
  if (vrp)
    in.vars.push_back({"u[i]", "load delivered on the route up to and including customer i (MTZ)", "continuous, q[i] <= u[i] <= Q"});
  else
    in.vars.push_back({"u[i]", "position of location i in the tour (MTZ order variable)", "continuous, 1 <= u[i] <= n - 1"});
  in.sense = lp::ObjSense::Minimize;
  in.objective_formula = "minimize sum_{i in N} sum_{j in N, j != i} d[i,j] * x[i,j]";
  in.objective_description = "total travel distance";
  in.objective_unit = "km";
  std::string depot = locs[0];
  if (vrp) {
    in.constraints.push_back({"visit", "sum_{i in N, i != j} x[i,j] = 1   for all j in C", "every customer is entered once"});
    in.constraints.push_back({"leave", "sum_{j in N, j != i} x[i,j] = 1   for all i in C", "every customer is left once"});
    in.constraints.push_back({"fleet", "sum_{j in C} x[depot,j] <= K", "at most K vehicles leave the depot"});
    in.constraints.push_back({"balance", "sum_{i in C} x[i,depot] - sum_{j in C} x[depot,j] = 0", "every vehicle returns to the depot"});
    in.constraints.push_back({"mtz", "u[i] - u[j] + Q * x[i,j] <= Q - q[j]   for all i, j in C, i != j",
                              "load-based subtour elimination (MTZ) and capacity"});
  } else {
    in.constraints.push_back({"out", "sum_{j in N, j != i} x[i,j] = 1   for all i in N", "the tour leaves every location once"});
    in.constraints.push_back({"in", "sum_{i in N, i != j} x[i,j] = 1   for all j in N", "the tour enters every location once"});
    in.constraints.push_back({"mtz", "u[i] - u[j] + (n - 1) * x[i,j] <= n - 2   for all i, j in N \\ {depot}, i != j",
                              "Miller-Tucker-Zemlin subtour elimination"});
  }

  auto& m = in.model;
  m.objective.sense = lp::ObjSense::Minimize;
  std::vector<int> xv(size_t(n) * size_t(n), -1), uv(size_t(n), -1);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j) {
        int v = m.add_var("x_" + locs[size_t(i)] + "_" + locs[size_t(j)], lp::VarType::Binary, 0, 1);
        xv[size_t(i * n + j)] = v;
        m.objective.terms.push_back({v, dist[size_t(i * n + j)]});
      }
  for (int i = 1; i < n; ++i)
    uv[size_t(i)] = vrp ? m.add_var("u_" + locs[size_t(i)], lp::VarType::Continuous, q[size_t(i - 1)], cap)
                        : m.add_var("u_" + locs[size_t(i)], lp::VarType::Continuous, 1.0, double(n - 1));
  add_degree_rows(m, xv, locs, vrp);
  if (vrp) {
    std::vector<lp::Term> out, bal;
    for (int j = 1; j < n; ++j) out.push_back({xv[size_t(j)], 1.0});
    add_row(m, "fleet", out, lp::RowSense::LE, vehicles);
    for (int i = 1; i < n; ++i) bal.push_back({xv[size_t(i * n)], 1.0});
    for (int j = 1; j < n; ++j) bal.push_back({xv[size_t(j)], -1.0});
    add_row(m, "balance", bal, lp::RowSense::EQ, 0.0);
  }
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < n; ++j)
      if (i != j) {
        double big = vrp ? cap : double(n - 1);
        double rhs = vrp ? cap - q[size_t(j - 1)] : double(n - 2);
        add_row(m, "mtz_" + locs[size_t(i)] + "_" + locs[size_t(j)],
                {{uv[size_t(i)], 1.0}, {uv[size_t(j)], -1.0}, {xv[size_t(i * n + j)], big}}, lp::RowSense::LE, rhs);
      }

  if (vrp) {
    in.intro = capitalize(c.org()) + c.x(" {dispatches|sends out} up to ") + fmt_num(vehicles) + c.x(" {vehicles|trucks|vans} from its depot in ") +
               depot + c.x(" to {serve|deliver to|visit} ") + std::to_string(n - 1) + " customers (" + label_list(cust) + ").";
    in.rules.push_back(c.x("{Every|Each} customer {is visited|must be served} exactly once by one vehicle, and every route starts and ends at the depot."));
    in.rules.push_back(c.x("{The deliveries on one route may not exceed|A vehicle carries at most} the vehicle capacity of ") + fmt_num(cap) + " " + dom.unit + ".");
    in.rules.push_back(c.x("{Routes must not contain subtours|No route may form a cycle that skips the depot}."));
  } else {
    in.intro = capitalize(c.org()) + c.x(" {needs a|plans a|wants one} {round trip|closed tour} that starts in ") + depot +
               c.x(", visits {every|each} other location (" + label_list(cust) + ") exactly once and returns to ") + depot + ".";
    in.rules.push_back(c.x("{The tour must be a single cycle|Subtours are not allowed}: {every|each} location is entered and left exactly once."));
  }
  in.rules.push_back(c.x("{Distances are symmetric and given in km|Travel distances are in km}."));
  in.goal = c.x("{Minimize|Find the routing that minimizes|Determine the routes with the smallest} total travel distance (in km).");

  in.python_body =
      "model = gp.Model(\"" + in.name + "\")\n"
      "depot = locations[0]\n"
      "others = locations[1:]\n"
      "x = {}\n"
      "for i in locations:\n"
      "    for j in locations:\n"
      "        if i != j:\n"
      "            x[i, j] = model.addVar(vtype=GRB.BINARY, name=f\"x_{i}_{j}\")\n";
  if (vrp)
    in.python_body +=
        "u = {}\n"
        "for i in customers:\n"
        "    u[i] = model.addVar(lb=load[i], ub=vehicle_capacity, vtype=GRB.CONTINUOUS, name=f\"u_{i}\")\n"
        "model.setObjective(gp.quicksum(distance[i][j] * x[i, j] for (i, j) in x), GRB.MINIMIZE)\n"
        "for i in customers:\n"
        "    model.addConstr(gp.quicksum(x[i, j] for j in locations if j != i) == 1, name=f\"leave_{i}\")\n"
        "for j in customers:\n"
        "    model.addConstr(gp.quicksum(x[i, j] for i in locations if i != j) == 1, name=f\"visit_{j}\")\n"
        "model.addConstr(gp.quicksum(x[depot, j] for j in customers) <= vehicles, name=\"fleet\")\n"
        "model.addConstr(gp.quicksum(x[i, depot] for i in customers) - gp.quicksum(x[depot, j] for j in customers) == 0, name=\"balance\")\n"
        "for i in customers:\n"
        "    for j in customers:\n"
        "        if i != j:\n"
        "            model.addConstr(u[i] - u[j] + vehicle_capacity * x[i, j] <= vehicle_capacity - load[j], name=f\"mtz_{i}_{j}\")\n";
  else
    in.python_body +=
        "n = len(locations)\n"
        "u = {}\n"
        "for i in others:\n"
        "    u[i] = model.addVar(lb=1, ub=n - 1, vtype=GRB.CONTINUOUS, name=f\"u_{i}\")\n"
        "model.setObjective(gp.quicksum(distance[i][j] * x[i, j] for (i, j) in x), GRB.MINIMIZE)\n"
        "for i in locations:\n"
        "    model.addConstr(gp.quicksum(x[i, j] for j in locations if j != i) == 1, name=f\"out_{i}\")\n"
        "for j in locations:\n"
        "    model.addConstr(gp.quicksum(x[i, j] for i in locations if i != j) == 1, name=f\"in_{j}\")\n"
        "for i in others:\n"
        "    for j in others:\n"
        "        if i != j:\n"
        "            model.addConstr(u[i] - u[j] + (n - 1) * x[i, j] <= n - 2, name=f\"mtz_{i}_{j}\")\n";
  return in;
}

}  // namespace trex::ordata::detail
