// Network-flow family (task family: network flow): a directed network of sites with link capacities;
// min-cost flow (supplies and demands, per-unit link costs) and max flow (source to sink) variants.
// Links are given as node x node matrices, 0 meaning no link. A backbone path through all nodes keeps
// every draw feasible; cheaper shortcut links with tighter capacities make the choice non-trivial.
#include <algorithm>
#include <cmath>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

Instance make_network_flow(Ctx& c) {
  static const int kN[4] = {5, 7, 9, 12};
  const auto& dom = c.dom;
  Instance in;
  const char* variants[] = {"min_cost_flow", "max_flow"};
  in.variant = variants[c.ri(0, 1)];
  in.name = "network_flow";
  bool maxflow = in.variant == "max_flow";
  int n = c.size(kN);
  auto nodes = pick_labels(c.rng, city_names(), n);
  int N = in.add_set("N", "nodes", "sites of the network", nodes);

  // Supplies (first nodes) and demands (last nodes) for the min-cost flow.
  std::vector<double> supply(size_t(n), 0.0), demand(size_t(n), 0.0);
  double total = 0;
  int ks = maxflow ? 1 : int(c.ri(1, 2)), kd = maxflow ? 1 : int(c.ri(1, std::min(3, n - ks - 1)));
  if (!maxflow) {
    for (int k = 0; k < kd; ++k) total += (demand[size_t(n - 1 - k)] = double(c.ri(4, 20) * 5));
    double left = total;
    for (int k = 0; k < ks; ++k) {
      double s = k == ks - 1 ? left : std::round(total * c.ru(0.3, 0.7) / 5) * 5;
      supply[size_t(k)] = s, left -= s;
    }
  }
  std::vector<double> cap(size_t(n) * size_t(n), 0.0), cost(size_t(n) * size_t(n), 0.0);
  auto id = [&](int i, int j) { return size_t(i * n + j); };
  double q = c.ru(0.25, 0.45);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      bool backbone = j == i + 1, shortcut = j > i + 1 && c.rng.uniform() < q;
      bool back = j < i && i != n - 1 && j != 0 && c.rng.uniform() < 0.08;
      if (!backbone && !shortcut && !back) continue;
      if (maxflow) {
        cap[id(i, j)] = double(c.ri(2, 12) * 5);
      } else {
        cap[id(i, j)] = backbone ? std::ceil(total * c.ru(1.0, 1.3) / 5) * 5 : std::ceil(total * c.ru(0.2, 0.6) / 5) * 5;
        cost[id(i, j)] = backbone ? double(c.ri(5, 9)) : std::round(double(std::abs(j - i)) * c.ru(2.5, 5.5)) + 1;
      }
    }
  std::string cu = dom.currency, u = dom.unit;
  if (maxflow) {
    in.add_set("s", "source", "source site", {nodes[0]});
    in.add_set("t", "sink", "sink site", {nodes[size_t(n - 1)]});
  } else {
    in.add_param("s[n]", "supply", "supply available", u, {N}, supply);
    in.add_param("d[n]", "demand", "demand", u, {N}, demand);
    in.add_param("c[i,j]", "cost", "transport cost per unit on the link (0: no link)", cu + " per " + u, {N, N}, cost);
  }
  in.add_param("u[i,j]", "capacity", "link capacity (0: no link)", u, {N, N}, cap);

  in.vars.push_back({"x[i,j]", u + " of " + dom.good + " sent on the link from i to j (links with u[i,j] > 0)",
                     "continuous, 0 <= x[i,j] <= u[i,j]"});
  in.sense = maxflow ? lp::ObjSense::Maximize : lp::ObjSense::Minimize;
  in.objective_formula = maxflow ? "maximize sum_{j} x[s,j] - sum_{j} x[j,s]" : "minimize sum_{(i,j) links} c[i,j] * x[i,j]";
  in.objective_description = maxflow ? "flow leaving the source" : "total transport cost";
  in.objective_unit = maxflow ? u : cu;
  in.constraints.push_back(maxflow ? ConDef{"balance", "sum_{j} x[n,j] - sum_{j} x[j,n] = 0   for all n in N except s and t",
                                            "flow is conserved at every intermediate site"}
                                   : ConDef{"balance", "sum_{j} x[n,j] - sum_{j} x[j,n] = s[n] - d[n]   for all n in N",
                                            "outflow minus inflow equals the site's supply minus its demand"});

  auto& m = in.model;
  m.objective.sense = in.sense;
  // Variables in the order of their first appearance in the LP file (objective, then the balance rows:
  // out-links, then in-links), so the reference LP reads back as the same model. For the min-cost flow
  // every link has a cost, which is the row-major order.
  std::vector<int> var(size_t(n) * size_t(n), -1);
  auto add_link = [&](int i, int j) {
    if (cap[id(i, j)] <= 0 || var[id(i, j)] >= 0) return;
    var[id(i, j)] = m.add_var("x_" + nodes[size_t(i)] + "_" + nodes[size_t(j)], lp::VarType::Continuous, 0, cap[id(i, j)]);
    double obj = maxflow ? (i == 0 ? 1.0 : 0.0) : cost[id(i, j)];  // no link enters the source
    if (obj != 0) m.objective.terms.push_back({var[id(i, j)], obj});
  };
  for (int i = 0; i < (maxflow ? 1 : n); ++i)
    for (int j = 0; j < n; ++j) add_link(i, j);
  for (int k = 1; maxflow && k < n - 1; ++k) {
    for (int j = 0; j < n; ++j) add_link(k, j);
    for (int i = 0; i < n; ++i) add_link(i, k);
  }
  for (int k = 0; k < n; ++k) {
    if (maxflow && (k == 0 || k == n - 1)) continue;
    std::vector<lp::Term> t;
    for (int j = 0; j < n; ++j)
      if (var[id(k, j)] >= 0) t.push_back({var[id(k, j)], 1.0});
    for (int i = 0; i < n; ++i)
      if (var[id(i, k)] >= 0) t.push_back({var[id(i, k)], -1.0});
    add_row(m, "balance_" + nodes[size_t(k)], t, lp::RowSense::EQ, supply[size_t(k)] - demand[size_t(k)]);
  }

  // Narrative scenarios: a distribution network, a pipeline/cable grid, an evacuation or relief corridor.
  int scen = c.scenario(3);
  std::string sites = std::to_string(n) + " sites (" + label_list(nodes) + ")";
  if (scen == 0)
    in.intro = capitalize(c.org()) + c.x(" {moves|routes|sends} ") + dom.good + c.x(" through a {network|grid} of ") + sites +
               c.x(" connected by one-way links{| of limited capacity}.");
  else if (scen == 1)
    in.intro = c.x("{The|A} {network|system} of ") + c.org() + " links " + sites + c.x("; {each link carries|links carry} ") + dom.good +
               c.x(" in one direction only, up to its capacity.");
  else
    in.intro = capitalize(c.org()) + c.x(" {plans|must plan} the flow of ") + dom.good + c.x(" for the next " + dom.period + " over ") + sites +
               c.x(" and the {directed |one-way }links between them.");
  in.rules.push_back(c.x("{A link with capacity 0 does not exist|Only links with a positive capacity can be used}; ") +
                     c.x("{no link may carry more than its capacity|the flow on a link is limited by its capacity}."));
  if (maxflow) {
    in.rules.push_back(c.x("{Flow starts at " + readable(nodes[0]) + " and ends at " + readable(nodes[size_t(n - 1)]) + "|" +
                           readable(nodes[0]) + " is the source and " + readable(nodes[size_t(n - 1)]) + " the sink}") +
                       c.x("; {at every other site inflow equals outflow|every other site passes on all it receives}."));
    in.goal = c.x("{Maximize|Find the flow that maximizes|Determine the largest possible} total flow from the source to the sink (in " + u + ").");
  } else {
    in.rules.push_back(c.x("{At every site, outflow minus inflow must equal its supply minus its demand|Every site ships out its supply, "
                           "receives its demand and passes on the rest}."));
    in.goal = c.x("{Minimize|Find the flows that minimize|Route the " + dom.good + " at minimum} total transport cost (in " + cu + ").");
  }

  in.python_body =
      "model = gp.Model(\"network_flow\")\n"
      "links = [(i, j) for i in nodes for j in nodes if capacity[i][j] > 0]\n"
      "x = {}\n"
      "for i, j in links:\n"
      "    x[i, j] = model.addVar(lb=0, ub=capacity[i][j], vtype=GRB.CONTINUOUS, name=f\"x_{i}_{j}\")\n";
  if (maxflow)
    in.python_body +=
        "s, t = source[0], sink[0]\n"
        "model.setObjective(gp.quicksum(x[i, j] for i, j in links if i == s) - gp.quicksum(x[i, j] for i, j in links if j == s), GRB.MAXIMIZE)\n"
        "for k in nodes:\n"
        "    if k in (s, t):\n"
        "        continue\n"
        "    model.addConstr(gp.quicksum(x[i, j] for i, j in links if i == k) - gp.quicksum(x[i, j] for i, j in links if j == k) == 0, name=f\"balance_{k}\")\n";
  else
    in.python_body +=
        "model.setObjective(gp.quicksum(cost[i][j] * x[i, j] for i, j in links), GRB.MINIMIZE)\n"
        "for k in nodes:\n"
        "    model.addConstr(gp.quicksum(x[i, j] for i, j in links if i == k) - gp.quicksum(x[i, j] for i, j in links if j == k)\n"
        "                    == supply[k] - demand[k], name=f\"balance_{k}\")\n";
  return in;
}

}  // namespace trex::ordata::detail
