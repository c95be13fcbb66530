// Network-design family (task family: network design): multi-commodity capacitated fixed-charge network
// design. Candidate arcs (i,j) of a directed network have a fixed opening cost g, a capacity u and a unit
// cost c; commodities k travel from an origin to a destination (net supply b[k,n]: +q[k] at the origin,
// -q[k] at the destination, 0 elsewhere). x[k,i,j] >= 0 is the flow of commodity k on the arc, y[i,j]
// binary opens it. min sum g y + sum c x; conservation out - in = b[k,n] per commodity and node;
// capacity/linking sum_k x[k,i,j] <= u[i,j] y[i,j] (capacitated_mc, the weak linking); strong_linking
// adds the valid x[k,i,j] <= q[k] y[i,j] (same optimum, a much tighter LP relaxation).
// A directed cycle through all nodes with capacity for the total demand keeps every draw feasible;
// cheaper shortcut arcs have tighter capacities.
#include <algorithm>
#include <cmath>
#include <set>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

Instance make_network_design(Ctx& c) {
  static const int kN[4] = {4, 5, 6, 7}, kK[4] = {2, 2, 3, 4};
  const auto& dom = c.dom;
  Instance in;
  const char* variants[] = {"capacitated_mc", "strong_linking"};
  in.variant = variants[c.ri(0, 1)];
  in.name = "network_design";
  bool strong = in.variant == "strong_linking";
  int n = c.size(kN), nk = c.size(kK, 0);
  auto nodes = pick_labels(c.rng, city_names(), n);
  int N = in.add_set("N", "nodes", "sites of the network", nodes);

  // Commodities: distinct origin-destination pairs, labelled "<origin>_to_<destination>".
  std::vector<int> orig, dest;
  std::vector<std::string> com;
  std::set<std::pair<int, int>> pairs;
  while (int(com.size()) < nk) {
    int o = int(c.ri(0, n - 1)), d = int(c.ri(0, n - 2));
    if (d >= o) ++d;
    if (!pairs.insert({o, d}).second) continue;
    orig.push_back(o), dest.push_back(d), com.push_back(nodes[size_t(o)] + "_to_" + nodes[size_t(d)]);
  }
  int K = in.add_set("K", "commodities", "commodities (origin to destination)", com);
  std::vector<double> q(static_cast<size_t>(nk)), b(size_t(nk) * size_t(n), 0.0);
  double total = 0;
  for (int k = 0; k < nk; ++k) {
    total += (q[size_t(k)] = double(c.ri(2, 12) * 5));
    b[size_t(k * n + orig[size_t(k)])] = q[size_t(k)];
    b[size_t(k * n + dest[size_t(k)])] = -q[size_t(k)];
  }

  std::vector<double> px(static_cast<size_t>(n)), py(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) px[size_t(i)] = c.ru(0, 100), py[size_t(i)] = c.ru(0, 100);
  std::vector<double> cap(size_t(n) * size_t(n), 0.0), cost(cap), fixed(cap);
  double pr = c.ru(0.25, 0.4);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      bool backbone = j == (i + 1) % n;
      if (!backbone && c.rng.uniform() >= pr) continue;
      double e = std::hypot(px[size_t(i)] - px[size_t(j)], py[size_t(i)] - py[size_t(j)]);
      size_t a = size_t(i * n + j);
      if (backbone) {
        cap[a] = std::ceil(total / 5) * 5;
        cost[a] = std::round(e * c.ru(0.08, 0.15)) + 3;
        fixed[a] = double(c.ri(15, 45) * 10);
      } else {
        cap[a] = std::ceil(total * c.ru(0.3, 0.8) / 5) * 5;
        cost[a] = std::round(e * c.ru(0.04, 0.1)) + 1;
        fixed[a] = double(c.ri(8, 40) * 10);
      }
    }
  std::string cu = dom.currency, u = dom.unit;
  in.add_param("b[k,n]", "net_supply", "net supply of the commodity at the site (+demand at its origin, -demand at its destination)", u, {K, N}, b);
  if (strong) in.add_param("q[k]", "demand", "demand of the commodity", u, {K}, q);
  in.add_param("u[i,j]", "capacity", "arc capacity (0: no candidate arc)", u, {N, N}, cap);
  in.add_param("c[i,j]", "unit_cost", "transport cost per unit on the arc", cu + " per " + u, {N, N}, cost);
  in.add_param("g[i,j]", "fixed_cost", "fixed cost of opening the arc", cu, {N, N}, fixed);

  in.vars.push_back({"x[k,i,j]", u + " of commodity k sent on the arc from i to j (arcs with u[i,j] > 0)", "continuous, >= 0"});
  in.vars.push_back({"y[i,j]", "1 if the arc from i to j is opened, else 0", "binary"});
  in.sense = lp::ObjSense::Minimize;
  in.objective_formula = "minimize sum_{k in K} sum_{(i,j) arcs} c[i,j] * x[k,i,j] + sum_{(i,j) arcs} g[i,j] * y[i,j]";
  in.objective_description = "transport cost plus arc opening cost";
  in.objective_unit = cu;
  in.constraints.push_back({"flow", "sum_{j} x[k,n,j] - sum_{i} x[k,i,n] = b[k,n]   for all k in K, n in N",
                            "every commodity leaves its origin, reaches its destination and is conserved elsewhere"});
  in.constraints.push_back({"cap", "sum_{k in K} x[k,i,j] - u[i,j] * y[i,j] <= 0   for all arcs (i,j)",
                            "an arc carries at most its capacity, and nothing unless opened"});
  if (strong)
    in.constraints.push_back({"link", "x[k,i,j] - q[k] * y[i,j] <= 0   for all k in K, arcs (i,j)",
                              "a commodity uses an arc only if it is opened (strong linking)"});

  // Variables in order of first appearance in the LP file: every one has a cost (objective: x, then y).
  auto& m = in.model;
  m.objective.sense = lp::ObjSense::Minimize;
  std::vector<int> arcs;
  for (int a = 0; a < n * n; ++a)
    if (cap[size_t(a)] > 0) arcs.push_back(a);
  const int na = int(arcs.size());
  auto arc_tag = [&](int a) { return nodes[size_t(a / n)] + "_" + nodes[size_t(a % n)]; };
  for (int k = 0; k < nk; ++k)
    for (int a : arcs) m.objective.terms.push_back({m.add_var("x_" + com[size_t(k)] + "_" + arc_tag(a)), cost[size_t(a)]});
  for (int a : arcs) m.objective.terms.push_back({m.add_var("y_" + arc_tag(a), lp::VarType::Binary, 0, 1), fixed[size_t(a)]});
  auto xv = [&](int k, int e) { return k * na + e; };
  auto yv = [&](int e) { return nk * na + e; };
  for (int k = 0; k < nk; ++k)
    for (int v = 0; v < n; ++v) {
      std::vector<lp::Term> t;
      for (int e = 0; e < na; ++e) {
        if (arcs[size_t(e)] / n == v) t.push_back({xv(k, e), 1.0});
        if (arcs[size_t(e)] % n == v) t.push_back({xv(k, e), -1.0});
      }
      add_row(m, "flow_" + com[size_t(k)] + "_" + nodes[size_t(v)], t, lp::RowSense::EQ, b[size_t(k * n + v)]);
    }
  for (int e = 0; e < na; ++e) {
    std::vector<lp::Term> t;
    for (int k = 0; k < nk; ++k) t.push_back({xv(k, e), 1.0});
    t.push_back({yv(e), -cap[size_t(arcs[size_t(e)])]});
    add_row(m, "cap_" + arc_tag(arcs[size_t(e)]), t, lp::RowSense::LE, 0.0);
  }
  for (int k = 0; strong && k < nk; ++k)
    for (int e = 0; e < na; ++e)
      add_row(m, "link_" + com[size_t(k)] + "_" + arc_tag(arcs[size_t(e)]), {{xv(k, e), 1.0}, {yv(e), -q[size_t(k)]}}, lp::RowSense::LE, 0.0);

  // Narrative scenarios: a carrier's service network, a regional network build-out, a multi-flow redesign.
  int scen = c.scenario(3);
  std::string sites = std::to_string(n) + " sites (" + label_list(nodes) + ")", ks = std::to_string(nk) + " commodities";
  if (scen == 0)
    in.intro = capitalize(c.org()) + c.x(" {is designing|redesigns} its {service|transport} network between ") + sites +
               c.x(": {which of the candidate one-way links should it open|it must decide which candidate one-way links to open} to move ") + ks +
               c.x(", each from its origin to its destination?");
  else if (scen == 1)
    in.intro = c.x("{To connect|For} ") + sites + ", " + c.org() + c.x(" {can build|may open} one-way links, each with a fixed cost and a capacity, and must route ") +
               ks + c.x(" of " + dom.good + " {through them|over the opened links}.");
  else
    in.intro = capitalize(c.org()) + c.x(" {plans|must plan} the next " + dom.period + "'s flows of " + dom.good + ": ") + ks +
               c.x(" {travel|move} between ") + sites + c.x(" over one-way links that have to be {opened|set up} first.");
  in.rules.push_back(c.x("{A link with capacity 0 is not a candidate|Only links with a positive capacity can be opened}; ") +
                     c.x("{opening a link costs its fixed cost, and an unopened link carries nothing|only opened links carry flow, and each opened link costs its fixed cost}."));
  in.rules.push_back(c.x("{Each commodity leaves its origin with its whole demand and must arrive at its destination|Every commodity's demand flows from its origin to its destination}") +
                     c.x("{; at every other site its inflow equals its outflow.|, passing through other sites without loss.}"));
  in.rules.push_back(c.x("{The total flow of all commodities on an opened link may not exceed its capacity|An opened link carries at most its capacity, summed over the commodities}") +
                     c.x("{, and every unit moved on a link costs the link's unit cost.|; moving one unit on a link costs its unit cost.}"));
  if (strong)
    in.rules.push_back(c.x("{Also link each commodity's flow to the opening decision, at most its demand per opened link (the strong linking rows)|"
                           "Add the strong linking rows: a commodity carries at most its demand on a link, and only if the link is opened}."));
  in.goal = c.x("{Minimize|Find the design that minimizes|Choose the links and flows that minimize} the total of opening and transport costs (in " + cu + ").");

  in.python_body =
      "model = gp.Model(\"network_design\")\n"
      "arcs = [(i, j) for i in nodes for j in nodes if capacity[i][j] > 0]\n"
      "x = {}\n"
      "for k in commodities:\n"
      "    for (i, j) in arcs:\n"
      "        x[k, i, j] = model.addVar(lb=0, vtype=GRB.CONTINUOUS, name=f\"x_{k}_{i}_{j}\")\n"
      "y = {}\n"
      "for (i, j) in arcs:\n"
      "    y[i, j] = model.addVar(vtype=GRB.BINARY, name=f\"y_{i}_{j}\")\n"
      "model.setObjective(gp.quicksum(unit_cost[i][j] * x[k, i, j] for k in commodities for (i, j) in arcs)\n"
      "                   + gp.quicksum(fixed_cost[i][j] * y[i, j] for (i, j) in arcs), GRB.MINIMIZE)\n"
      "for k in commodities:\n"
      "    for v in nodes:\n"
      "        model.addConstr(gp.quicksum(x[k, i, j] for (i, j) in arcs if i == v) - gp.quicksum(x[k, i, j] for (i, j) in arcs if j == v)\n"
      "                        == net_supply[k][v], name=f\"flow_{k}_{v}\")\n"
      "for (i, j) in arcs:\n"
      "    model.addConstr(gp.quicksum(x[k, i, j] for k in commodities) - capacity[i][j] * y[i, j] <= 0, name=f\"cap_{i}_{j}\")\n";
  if (strong)
    in.python_body +=
        "for k in commodities:\n"
        "    for (i, j) in arcs:\n"
        "        model.addConstr(x[k, i, j] - demand[k] * y[i, j] <= 0, name=f\"link_{k}_{i}_{j}\")\n";
  return in;
}

}  // namespace trex::ordata::detail
