// Dispersion family (task family: dispersion): choose exactly p of n candidate sites so that they are
// spread out: max-min (maximize the smallest distance between two chosen sites, big-M rows
// D + M y[i] + M y[j] <= d[i,j] + 2M) or max-sum (maximize the total pairwise distance, pair
// variables z[i,j] <= y[i], z[i,j] <= y[j], tightened by the valid degree rows
// sum_{j != i} z[i,j] = (p - 1) y[i]). Distances are rounded Euclidean distances on a grid.
#include <algorithm>
#include <cmath>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

Instance make_dispersion(Ctx& c) {
  static const int kN[4] = {5, 6, 7, 9};
  const auto& dom = c.dom;
  Instance in;
  const char* variants[] = {"max_min", "max_sum"};
  in.variant = variants[c.ri(0, 1)];
  in.name = "dispersion";
  bool maxsum = in.variant == "max_sum";
  int n = c.size(kN);
  int p = std::max(2, int(std::round(n * c.ru(0.3, 0.5))));
  auto sites = pick_labels(c.rng, city_names(), n);
  int S = in.add_set("S", "sites", "candidate sites", sites);
  std::vector<double> px(static_cast<size_t>(n)), py(static_cast<size_t>(n)), d(size_t(n) * size_t(n), 0.0);
  for (int i = 0; i < n; ++i) px[size_t(i)] = c.ru(0, 100), py[size_t(i)] = c.ru(0, 100);
  double dmax = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j) dmax = std::max(dmax, d[size_t(i * n + j)] = std::max(1.0, std::round(std::hypot(px[size_t(i)] - px[size_t(j)], py[size_t(i)] - py[size_t(j)]))));
  in.add_param("d[i,j]", "distance", "distance between sites", "km", {S, S}, d);
  in.add_param("p", "count", "number of sites to choose", "sites", {}, {double(p)});
  if (!maxsum) in.add_param("M", "big_m", "big-M (the largest distance)", "km", {}, {dmax});

  in.vars.push_back({"y[i]", "1 if site i is chosen, else 0", "binary"});
  if (maxsum) in.vars.push_back({"z[i,j]", "1 if both sites i and j are chosen (i < j)", "continuous, 0 <= z <= 1"});
  else in.vars.push_back({"D", "smallest distance between two chosen sites", "continuous, >= 0"});
  in.sense = lp::ObjSense::Maximize;
  in.objective_formula = maxsum ? "maximize sum_{i < j} d[i,j] * z[i,j]" : "maximize D";
  in.objective_description = maxsum ? "total distance between the chosen sites" : "smallest distance between two chosen sites";
  in.objective_unit = "km";
  in.constraints.push_back({"count", "sum_{i in S} y[i] = p", "exactly p sites are chosen"});
  if (maxsum) {
    in.constraints.push_back({"pair_i", "z[i,j] - y[i] <= 0   for i < j", "a pair counts only if i is chosen"});
    in.constraints.push_back({"pair_j", "z[i,j] - y[j] <= 0   for i < j", "a pair counts only if j is chosen"});
    in.constraints.push_back({"degree", "sum_{j != i} z[i,j] - (p - 1) * y[i] = 0   for all i (z[i,j] = z[j,i])",
                              "a chosen site pairs with the p - 1 other chosen sites, an unchosen one with none"});
  } else {
    in.constraints.push_back({"spread", "D + M * y[i] + M * y[j] <= d[i,j] + 2 * M   for i < j", "D is at most the distance of every chosen pair"});
  }

  auto& m = in.model;
  m.objective.sense = lp::ObjSense::Maximize;
  // Variables in order of first appearance in the LP file (objective first, then the count row).
  std::vector<int> z(size_t(n) * size_t(n), -1);
  int dvar = -1;
  if (maxsum) {
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j)
        m.objective.terms.push_back({z[size_t(i * n + j)] = m.add_var("z_" + sites[size_t(i)] + "_" + sites[size_t(j)], lp::VarType::Continuous, 0, 1),
                                     d[size_t(i * n + j)]});
  } else {
    m.objective.terms.push_back({dvar = m.add_var("D"), 1.0});
  }
  std::vector<int> y(static_cast<size_t>(n));
  std::vector<lp::Term> count;
  for (int i = 0; i < n; ++i) count.push_back({y[size_t(i)] = m.add_var("y_" + sites[size_t(i)], lp::VarType::Binary, 0, 1), 1.0});
  add_row(m, "count", count, lp::RowSense::EQ, double(p));
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      std::string tag = sites[size_t(i)] + "_" + sites[size_t(j)];
      if (maxsum) {
        add_row(m, "pair_i_" + tag, {{z[size_t(i * n + j)], 1.0}, {y[size_t(i)], -1.0}}, lp::RowSense::LE, 0.0);
        add_row(m, "pair_j_" + tag, {{z[size_t(i * n + j)], 1.0}, {y[size_t(j)], -1.0}}, lp::RowSense::LE, 0.0);
      } else {
        add_row(m, "spread_" + tag, {{dvar, 1.0}, {y[size_t(i)], dmax}, {y[size_t(j)], dmax}}, lp::RowSense::LE, d[size_t(i * n + j)] + 2 * dmax);
      }
    }

  for (int i = 0; maxsum && i < n; ++i) {
    std::vector<lp::Term> t;
    for (int j = 0; j < n; ++j)
      if (j != i) t.push_back({z[size_t(std::min(i, j) * n + std::max(i, j))], 1.0});
    t.push_back({y[size_t(i)], -double(p - 1)});
    add_row(m, "degree_" + sites[size_t(i)], t, lp::RowSense::EQ, 0.0);
  }

  // Narrative scenarios: spreading facilities (risk), placing competing outlets, siting monitors.
  int scen = c.scenario(3);
  std::string sl = std::to_string(n) + " candidate sites (" + label_list(sites) + ")";
  std::string ps = std::to_string(p);
  if (scen == 0)
    in.intro = capitalize(c.org()) + c.x(" {will open|plans to open|must place} exactly ") + ps + " new " + dom.source +
               c.x("s among ") + sl + c.x(" and wants them {far apart|well spread out} {to limit shared risks|so that they do not compete}.");
  else if (scen == 1)
    in.intro = c.x("{To cover a wide area|For resilience}, ") + c.org() + c.x(" {selects|chooses} ") + ps + " of " + sl +
               c.x(" so that the chosen sites are {as dispersed|as far from each other} as possible.");
  else
    in.intro = capitalize(c.org()) + c.x(" {is siting|positions} ") + ps + c.x(" {monitoring stations|service points|units} at ") + sl +
               c.x("; {distances between the sites are known|the pairwise distances are given}.");
  in.rules.push_back(c.x("{Exactly " + ps + " sites must be chosen|The number of chosen sites is exactly " + ps + "}."));
  if (!maxsum)
    in.rules.push_back(c.x("{The big-M value M (the largest distance) may be used to switch off pairs that are not both chosen|"
                           "Pairs that are not both chosen can be relaxed with the given big-M value M}."));
  in.goal = maxsum ? c.x("{Maximize the total distance over all pairs of chosen sites|Choose the sites that maximize the sum of pairwise distances} (in km).")
                   : c.x("{Maximize the smallest distance between any two chosen sites|Choose the sites so that the closest pair is as far apart as possible} (in km).");

  in.python_body = "model = gp.Model(\"dispersion\")\n";
  if (maxsum)
    in.python_body +=
        "pairs = [(a, b) for n, a in enumerate(sites) for b in sites[n + 1:]]\n"
        "z = {(a, b): model.addVar(lb=0, ub=1, name=f\"z_{a}_{b}\") for a, b in pairs}\n"
        "y = {i: model.addVar(vtype=GRB.BINARY, name=f\"y_{i}\") for i in sites}\n"
        "model.setObjective(gp.quicksum(distance[a][b] * z[a, b] for a, b in pairs), GRB.MAXIMIZE)\n"
        "model.addConstr(gp.quicksum(y[i] for i in sites) == count, name=\"count\")\n"
        "for a, b in pairs:\n"
        "    model.addConstr(z[a, b] - y[a] <= 0, name=f\"pair_i_{a}_{b}\")\n"
        "    model.addConstr(z[a, b] - y[b] <= 0, name=f\"pair_j_{a}_{b}\")\n"
        "for i in sites:\n"
        "    model.addConstr(gp.quicksum(z[a, b] for a, b in pairs if i in (a, b)) - (count - 1) * y[i] == 0, name=f\"degree_{i}\")\n";
  else
    in.python_body +=
        "D = model.addVar(lb=0, name=\"D\")\n"
        "y = {i: model.addVar(vtype=GRB.BINARY, name=f\"y_{i}\") for i in sites}\n"
        "model.setObjective(D, GRB.MAXIMIZE)\n"
        "model.addConstr(gp.quicksum(y[i] for i in sites) == count, name=\"count\")\n"
        "for n, a in enumerate(sites):\n"
        "    for b in sites[n + 1:]:\n"
        "        model.addConstr(D + big_m * y[a] + big_m * y[b] <= distance[a][b] + 2 * big_m, name=f\"spread_{a}_{b}\")\n";
  return in;
}

}  // namespace trex::ordata::detail
