// Deployment family (task family: deployment): where and when to deploy units or sites.
// team_deployment (MILP): n[i] integer units (response teams, crews, server racks) stationed at base i,
// at most k[i]; each unit handles Q of workload; region j's demand d[j] is served from bases within the
// maximum response time (y[i,j] >= 0 only for pairs with t[i,j] <= Tmax); serve all demand
// (sum_i y[i,j] >= d[j]) within the deployed capacity (sum_j y[i,j] <= Q n[i]) at minimum cost sum c n.
// coverage_deployment (MILP): the same network within a budget (sum c n <= B), serving at most the demand
// (sum_i y[i,j] <= d[j]); maximize the demand served.
// phased_deployment (MILP): z[s,t] = 1 if site s is deployed (operating) in period t; once deployed it
// stays (z[s,t-1] <= z[s,t]); a site's one-off cost falls in the period it is deployed and each period
// has its own budget (sum_s c[s] (z[s,t] - z[s,t-1]) <= B[t], z[s,0] = 0); a site operates only
// when every site it requires does (z[s,t] <= z[r,t] for e[s,r] = 1); maximize the value sum v[s] z[s,t]
// earned over the horizon. Team instances plant an allocation (every region to a reachable base) and set
// the base limits around it; phased ones are feasible with nothing deployed, and a budget below the total
// cost keeps the all-deployed pattern out.
#include <algorithm>
#include <cmath>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

namespace {
Instance make_team_deployment(Ctx& c, Instance in, bool coverage) {
  static const int kB[4] = {2, 3, 4, 5}, kR[4] = {3, 4, 6, 8};
  const auto& dom = c.dom;
  int nb = c.size(kB), nr = c.size(kR);
  auto bases = pick_labels(c.rng, city_names(), nb + nr);
  std::vector<std::string> regions(bases.begin() + nb, bases.end());
  bases.resize(static_cast<size_t>(nb));
  int I = in.add_set("I", "bases", "bases where units can be stationed", bases);
  int J = in.add_set("J", "regions", "regions with demand", regions);
  std::vector<double> tt = random_distances(c.rng, nb, nr, 0.6, 5);  // travel times in minutes
  double tmax = std::round(c.ru(25, 45));
  for (int j = 0; j < nr; ++j) {  // every region is reachable from its nearest base
    double best = 1e18;
    for (int i = 0; i < nb; ++i) best = std::min(best, tt[size_t(i * nr + j)]);
    tmax = std::max(tmax, best);
  }
  std::vector<double> demand(static_cast<size_t>(nr)), cost(static_cast<size_t>(nb)), most(static_cast<size_t>(nb)), load(size_t(nb), 0.0);
  double Q = double(c.ri(4, 10) * 5);  // workload one unit handles
  for (auto& d : demand) d = double(c.ri(10, 60));
  for (auto& v : cost) v = double(c.ri(12, 40) * 50);
  // Planted allocation: each region wholly to one reachable base; the base limits leave room above it.
  for (int j = 0; j < nr; ++j) {
    std::vector<int> ok;
    for (int i = 0; i < nb; ++i)
      if (tt[size_t(i * nr + j)] <= tmax) ok.push_back(i);
    load[size_t(c.rng.pick(ok))] += demand[size_t(j)];
  }
  double planted_cost = 0;
  for (int i = 0; i < nb; ++i) {
    double need = std::ceil(load[size_t(i)] / Q);
    most[size_t(i)] = std::max(2.0, need + double(c.ri(1, 2)));  // >= 2: a 0..1 integer would count as a binary
    planted_cost += need * cost[size_t(i)];
  }
  double B = std::max(*std::max_element(cost.begin(), cost.end()), std::round(planted_cost * c.ru(0.45, 0.75) / 50) * 50);
  std::string cu = dom.currency, wl = "jobs per " + dom.period;
  in.add_param("t[i,j]", "travel_time", "travel time", "minutes", {I, J}, tt);
  in.add_param("Tmax", "max_time", "maximum response time", "minutes", {}, {tmax});
  in.add_param("d[j]", "demand", "workload", wl, {J}, demand);
  in.add_param("c[i]", "unit_cost", "cost per unit stationed", cu, {I}, cost);
  in.add_param("k[i]", "max_units", "most units the base can hold", "units", {I}, most);
  in.add_param("Q", "unit_capacity", "workload one unit handles", wl, {}, {Q});
  if (coverage) in.add_param("B", "budget", "deployment budget", cu, {}, {B});

  in.vars.push_back({"n[i]", "units stationed at base i", "integer, 0 <= n[i] <= k[i]"});
  in.vars.push_back({"y[i,j]", "workload of region j served from base i (only pairs with t[i,j] <= Tmax)", "continuous, >= 0"});
  in.sense = coverage ? lp::ObjSense::Maximize : lp::ObjSense::Minimize;
  in.objective_formula = coverage ? "maximize sum_{i,j: t[i,j] <= Tmax} y[i,j]" : "minimize sum_{i in I} c[i] * n[i]";
  in.objective_description = coverage ? "workload served" : "deployment cost";
  in.objective_unit = coverage ? wl : cu;
  if (coverage) {
    in.constraints.push_back({"budget", "sum_{i in I} c[i] * n[i] <= B", "the deployment stays within the budget"});
    in.constraints.push_back({"demand", "sum_{i: t[i,j] <= Tmax} y[i,j] <= d[j]   for all j in J", "no region is served beyond its workload"});
  } else {
    in.constraints.push_back({"demand", "sum_{i: t[i,j] <= Tmax} y[i,j] >= d[j]   for all j in J", "every region's workload is served"});
  }
  in.constraints.push_back({"capacity", "sum_{j: t[i,j] <= Tmax} y[i,j] - Q * n[i] <= 0   for all i in I",
                            "a base serves no more than its units handle"});

  // Variables in order of first appearance in the LP file: the objective's (the units for
  // team_deployment, the reachable pairs region by region for coverage_deployment), then the others.
  auto& m = in.model;
  m.objective.sense = in.sense;
  std::vector<int> nvar(static_cast<size_t>(nb)), yvar(size_t(nb) * size_t(nr), -1);
  auto add_units = [&] {
    for (int i = 0; i < nb; ++i) {
      nvar[size_t(i)] = m.add_var("n_" + bases[size_t(i)], lp::VarType::Integer, 0, most[size_t(i)]);
      if (!coverage) m.objective.terms.push_back({nvar[size_t(i)], cost[size_t(i)]});
    }
  };
  auto add_pairs = [&] {
    for (int j = 0; j < nr; ++j)
      for (int i = 0; i < nb; ++i)
        if (tt[size_t(i * nr + j)] <= tmax) {
          yvar[size_t(i * nr + j)] = m.add_var("y_" + bases[size_t(i)] + "_" + regions[size_t(j)]);
          if (coverage) m.objective.terms.push_back({yvar[size_t(i * nr + j)], 1.0});
        }
  };
  if (coverage) add_pairs(), add_units();
  else add_units(), add_pairs();
  if (coverage) {
    std::vector<lp::Term> terms;
    for (int i = 0; i < nb; ++i) terms.push_back({nvar[size_t(i)], cost[size_t(i)]});
    add_row(m, "budget", terms, lp::RowSense::LE, B);
  }
  for (int j = 0; j < nr; ++j) {
    std::vector<lp::Term> terms;
    for (int i = 0; i < nb; ++i)
      if (yvar[size_t(i * nr + j)] >= 0) terms.push_back({yvar[size_t(i * nr + j)], 1.0});
    add_row(m, "demand_" + regions[size_t(j)], terms, coverage ? lp::RowSense::LE : lp::RowSense::GE, demand[size_t(j)]);
  }
  for (int i = 0; i < nb; ++i) {
    std::vector<lp::Term> terms;
    for (int j = 0; j < nr; ++j)
      if (yvar[size_t(i * nr + j)] >= 0) terms.push_back({yvar[size_t(i * nr + j)], 1.0});
    terms.push_back({nvar[size_t(i)], -Q});
    add_row(m, "capacity_" + bases[size_t(i)], terms, lp::RowSense::LE, 0.0);
  }

  // Narrative scenarios: emergency response teams, field service crews, edge server racks.
  int scen = c.scenario(3);
  std::string bl = std::to_string(nb) + " bases (" + label_list(bases) + ")";
  std::string rl = std::to_string(nr) + " regions (" + label_list(regions) + ")";
  if (scen == 0)
    in.intro = capitalize(c.org()) + c.x(" {deploys|stations|positions} {emergency response|rapid response} teams at ") + bl + c.x(" to {serve|cover} ") + rl + ".";
  else if (scen == 1)
    in.intro = c.x("{For the coming " + dom.period + "|This " + dom.period + "}, ") + c.org() + c.x(" {decides|must decide} how many service crews to {base|station} at each of ") +
               bl + c.x("; the crews {look after|serve} ") + rl + ".";
  else
    in.intro = capitalize(c.org()) + c.x(" {rolls out|deploys} {server racks|capacity units} at ") + bl + c.x(" that {handle|serve} the requests of ") + rl + ".";
  in.rules.push_back(c.x("{A region can only be served from a base within the maximum response time|Only bases whose travel time to a region is at most the maximum response time may serve it}") +
                     c.x("{; a region's workload may be split between several bases.|, and a region may be served by several bases.}"));
  in.rules.push_back(c.x("{Units are whole|Only whole units can be deployed}") +
                     c.x("{: each handles at most the unit capacity of workload, and a base holds at most its maximum number of units.|; "
                         "a base serves no more workload than its units handle and holds no more units than its maximum.}"));
  if (coverage) {
    in.rules.push_back(c.x("{The cost of the units deployed may not exceed the budget|Deployment spending stays within the budget}") +
                       c.x("{, and no region is served beyond its workload.|; serving more than a region's workload counts for nothing.}"));
    in.goal = c.x("{Maximize|Deploy the units to maximize|Find the deployment that maximizes} the total workload served (in " + wl + ").");
  } else {
    in.rules.push_back(c.x("{Every region's workload must be served in full|All the workload of every region must be served}."));
    in.goal = c.x("{Minimize|Find the deployment that minimizes|Deploy the units at minimum} total cost (in " + cu + ").");
  }

  in.python_body =
      "model = gp.Model(\"deployment\")\n"
      "reach = [(i, j) for j in regions for i in bases if travel_time[i][j] <= max_time]\n";
  std::string units = "n = {i: model.addVar(lb=0, ub=max_units[i], vtype=GRB.INTEGER, name=f\"n_{i}\") for i in bases}\n",
              pairs = "y = {(i, j): model.addVar(lb=0, vtype=GRB.CONTINUOUS, name=f\"y_{i}_{j}\") for i, j in reach}\n";
  in.python_body += coverage ? pairs + units : units + pairs;
  if (coverage)
    in.python_body +=
        "model.setObjective(gp.quicksum(y[i, j] for i, j in reach), GRB.MAXIMIZE)\n"
        "model.addConstr(gp.quicksum(unit_cost[i] * n[i] for i in bases) <= budget, name=\"budget\")\n"
        "for j in regions:\n"
        "    model.addConstr(gp.quicksum(y[i, k] for i, k in reach if k == j) <= demand[j], name=f\"demand_{j}\")\n";
  else
    in.python_body +=
        "model.setObjective(gp.quicksum(unit_cost[i] * n[i] for i in bases), GRB.MINIMIZE)\n"
        "for j in regions:\n"
        "    model.addConstr(gp.quicksum(y[i, k] for i, k in reach if k == j) >= demand[j], name=f\"demand_{j}\")\n";
  in.python_body +=
      "for i in bases:\n"
      "    model.addConstr(gp.quicksum(y[b, j] for b, j in reach if b == i) - unit_capacity * n[i] <= 0, name=f\"capacity_{i}\")\n";
  return in;
}

Instance make_phased_deployment(Ctx& c, Instance in) {
  static const int kS[4] = {4, 5, 5, 6}, kT[4] = {3, 3, 4, 4};  // 8 x 6 took CBC ~0.3 s (per-period knapsacks)
  const auto& dom = c.dom;
  int ns = c.size(kS), nt = c.size(kT, 0);
  auto sites = pick_labels(c.rng, city_names(), ns);
  std::vector<std::string> periods;
  std::string per = capitalize(dom.period);
  for (int t = 1; t <= nt; ++t) periods.push_back(per + std::to_string(t));
  int S = in.add_set("S", "sites", "candidate sites", sites);
  int T = in.add_set("T", "periods", dom.period + "s", periods);
  std::vector<double> cost(static_cast<size_t>(ns)), value(static_cast<size_t>(ns)), req(size_t(ns) * size_t(ns), 0.0), budget(static_cast<size_t>(nt));
  double total = 0;
  for (int s = 0; s < ns; ++s) {
    total += (cost[size_t(s)] = double(c.ri(4, 30) * 50));
    value[size_t(s)] = std::round(cost[size_t(s)] * c.ru(0.08, 0.35) / 5) * 5 + 5;
    // A later site may require an earlier one (acyclic): a spoke that needs its hub.
    if (s > 0 && c.rng.uniform() < 0.35) req[size_t(s * ns + int(c.ri(0, s - 1)))] = 1.0;
  }
  double cheapest = cost[0];  // site 0 requires nothing: some period can afford it
  for (int s = 0; s < ns; ++s)
    if (std::none_of(req.begin() + s * ns, req.begin() + (s + 1) * ns, [](double v) { return v != 0.0; })) cheapest = std::min(cheapest, cost[size_t(s)]);
  for (auto& b : budget) b = std::round(total * c.ru(0.6, 1.2) / nt / 50) * 50;
  budget[0] = std::max(budget[0], cheapest);
  std::string cu = dom.currency;
  in.add_param("c[s]", "deploy_cost", "one-off deployment cost", cu, {S}, cost);
  in.add_param("v[s]", "value", "value earned per " + dom.period + " in operation", cu, {S}, value);
  in.add_param("e[s,r]", "requires", "requirement (1: site s can only operate while site r does)", "", {S, S}, req);
  in.add_param("B[t]", "budget", "deployment budget of the " + dom.period + " (unspent budget does not carry over)", cu, {T}, budget);

  in.vars.push_back({"z[s,t]", "1 if site s is deployed (in operation) in period t, else 0", "binary"});
  in.sense = lp::ObjSense::Maximize;
  in.objective_formula = "maximize sum_{s in S} sum_{t in T} v[s] * z[s,t]";
  in.objective_description = "value earned over the horizon";
  in.objective_unit = cu;
  in.constraints.push_back({"stay", "z[s,t-1] - z[s,t] <= 0   for all s, t > 1", "a deployed site stays deployed"});
  in.constraints.push_back({"budget", "sum_{s in S} c[s] * (z[s,t] - z[s,t-1]) <= B[t]   for all t (z[s,0] = 0)",
                            "the sites deployed in a period fit its budget"});
  in.constraints.push_back({"requires", "z[s,t] - z[r,t] <= 0   for all s, r with e[s,r] = 1, all t", "a site operates only while the sites it requires do"});

  auto& m = in.model;
  m.objective.sense = lp::ObjSense::Maximize;
  auto idx = [&](int s, int t) { return s * nt + t; };
  for (int s = 0; s < ns; ++s)
    for (int t = 0; t < nt; ++t)
      m.objective.terms.push_back({m.add_var("z_" + sites[size_t(s)] + "_" + periods[size_t(t)], lp::VarType::Binary, 0, 1), value[size_t(s)]});
  for (int s = 0; s < ns; ++s)
    for (int t = 1; t < nt; ++t)
      add_row(m, "stay_" + sites[size_t(s)] + "_" + periods[size_t(t)], {{idx(s, t - 1), 1.0}, {idx(s, t), -1.0}}, lp::RowSense::LE, 0.0);
  for (int t = 0; t < nt; ++t) {
    std::vector<lp::Term> terms;
    for (int s = 0; s < ns; ++s) {
      terms.push_back({idx(s, t), cost[size_t(s)]});
      if (t > 0) terms.push_back({idx(s, t - 1), -cost[size_t(s)]});
    }
    add_row(m, "budget_" + periods[size_t(t)], terms, lp::RowSense::LE, budget[size_t(t)]);
  }
  for (int s = 0; s < ns; ++s)
    for (int r = 0; r < ns; ++r)
      if (req[size_t(s * ns + r)] != 0.0)
        for (int t = 0; t < nt; ++t)
          add_row(m, "requires_" + sites[size_t(s)] + "_" + sites[size_t(r)] + "_" + periods[size_t(t)], {{idx(s, t), 1.0}, {idx(r, t), -1.0}},
                  lp::RowSense::LE, 0.0);

  // Narrative scenarios: a network roll-out, charging stations, a clinic programme.
  int scen = c.scenario(3);
  std::string sl = std::to_string(ns) + " candidate sites (" + label_list(sites) + ")";
  std::string pl = std::to_string(nt) + " " + dom.period + "s";
  if (scen == 0)
    in.intro = capitalize(c.org()) + c.x(" {rolls out|is rolling out} {a new service network|its new network} over ") + pl + c.x(" and {can deploy|may open} ") + sl + ".";
  else if (scen == 1)
    in.intro = c.x("{Over the next|During the coming} ") + pl + ", " + c.org() + c.x(" {installs|deploys} {charging stations|service points} at ") + sl +
               c.x("; {each earns|every site earns} its value in every " + dom.period + " it operates.");
  else
    in.intro = capitalize(c.org()) + c.x(" {phases in|stages} {a programme|an expansion} across ") + sl + c.x(" over ") + pl +
               c.x(", {deciding|choosing} in which " + dom.period + " each site {goes live|is deployed}, if at all.");
  in.rules.push_back(c.x("{Once deployed, a site stays in operation until the end of the horizon|A deployed site is never withdrawn}") +
                     c.x("{; deploying it costs its one-off cost in the " + dom.period + " it is deployed.|, and its one-off cost is paid in the " + dom.period +
                         " of deployment.}"));
  in.rules.push_back(c.x("{The sites deployed in a " + dom.period + " must fit that " + dom.period + "'s budget|Each " + dom.period +
                         "'s deployment costs may not exceed its budget}") +
                     c.x("{; unspent budget does not carry over.|, and unused budget is lost.}"));
  in.rules.push_back(c.x("{A site can only operate while every site it requires operates|Sites that require another site may not operate before it does}."));
  in.goal = c.x("{Maximize|Plan the roll-out to maximize|Choose the deployment schedule that maximizes} the total value earned over the " + pl + " (in " + cu + ").");

  in.python_body =
      "model = gp.Model(\"deployment\")\n"
      "z = {}\n"
      "for s in sites:\n"
      "    for t in periods:\n"
      "        z[s, t] = model.addVar(vtype=GRB.BINARY, name=f\"z_{s}_{t}\")\n"
      "model.setObjective(gp.quicksum(value[s] * z[s, t] for s in sites for t in periods), GRB.MAXIMIZE)\n"
      "for s in sites:\n"
      "    for a, b in zip(periods, periods[1:]):\n"
      "        model.addConstr(z[s, a] - z[s, b] <= 0, name=f\"stay_{s}_{b}\")\n"
      "for k, t in enumerate(periods):\n"
      "    new = gp.quicksum(deploy_cost[s] * (z[s, t] - (z[s, periods[k - 1]] if k > 0 else 0)) for s in sites)\n"
      "    model.addConstr(new <= budget[t], name=f\"budget_{t}\")\n"
      "for s in sites:\n"
      "    for r in sites:\n"
      "        if requires[s][r] == 1:\n"
      "            for t in periods:\n"
      "                model.addConstr(z[s, t] - z[r, t] <= 0, name=f\"requires_{s}_{r}_{t}\")\n";
  return in;
}
}  // namespace

Instance make_deployment(Ctx& c) {
  Instance in;
  const char* variants[] = {"team_deployment", "coverage_deployment", "phased_deployment"};
  in.variant = variants[c.ri(0, 2)];
  in.name = "deployment";
  if (in.variant == "phased_deployment") return make_phased_deployment(c, std::move(in));
  bool coverage = in.variant == "coverage_deployment";
  return make_team_deployment(c, std::move(in), coverage);
}

}  // namespace trex::ordata::detail
