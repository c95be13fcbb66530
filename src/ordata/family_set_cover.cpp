// Set-cover family (task family: covering): choose candidate options, each covering some of the
// demand sites, at minimum cost; cover (>= 1), multi-cover (>= r[j]) and set-partitioning (= 1)
// variants. Partitioning instances contain a planted partition, so they are feasible.
#include <algorithm>
#include <cmath>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

Instance make_set_cover(Ctx& c) {
  static const int kN[4] = {5, 8, 12, 18}, kM[4] = {4, 6, 9, 14};
  const auto& dom = c.dom;
  Instance in;
  const char* variants[] = {"cover", "multi_cover", "partition"};
  in.variant = variants[c.ri(0, 2)];
  in.name = "set_cover";
  bool multi = in.variant == "multi_cover", part = in.variant == "partition";
  int n = c.size(kN, 2), m = c.size(kM, 2);
  auto places = pick_labels(c.rng, city_names(), m);
  auto opts = pick_labels(c.rng, dom.jobs, n);
  int O = in.add_set("O", "options", "candidate " + dom.job + "s", opts);
  int E = in.add_set("E", "sites", dom.sink + "s to cover", places);

  // a[i,j] = 1 when option i covers site j (row-major over options x sites).
  std::vector<double> a(size_t(n) * size_t(m), 0.0);
  auto at = [&](int i, int j) -> double& { return a[size_t(i * m + j)]; };
  int first_random = 0;
  if (part) {
    // A planted partition of the sites into blocks of 1..3 consecutive (shuffled) sites.
    std::vector<int> order(static_cast<size_t>(m));
    for (int j = 0; j < m; ++j) order[size_t(j)] = j;
    c.rng.shuffle(order);
    int o = 0;
    for (int j = 0; j < m && o < n;) {
      int len = std::min(m - j, int(c.ri(1, 3)));
      if (o == n - 1) len = m - j;
      for (int k = 0; k < len; ++k) at(o, order[size_t(j + k)]) = 1;
      j += len, ++o;
    }
    first_random = o;
  }
  double p = c.ru(0.25, 0.45);
  for (int i = first_random; i < n; ++i) {
    if (part) {  // small random blocks (1..3 sites), so that other partitions than the planted one exist
      for (int k = int(c.ri(1, 3)); k > 0; --k) at(i, int(c.ri(0, m - 1))) = 1;
      continue;
    }
    int count = 0;
    for (int j = 0; j < m; ++j) count += int(at(i, j) = c.rng.uniform() < p ? 1.0 : 0.0);
    if (count == 0) at(i, int(c.ri(0, m - 1))) = 1;
  }
  std::vector<double> req(size_t(m), 1.0);
  for (int j = 0; j < m; ++j) {
    int covered = 0;
    for (int i = 0; i < n; ++i) covered += int(at(i, j));
    while (!part && covered < 2) {  // every site coverable at least twice (cover, multi_cover)
      int i = int(c.ri(0, n - 1));
      if (at(i, j) == 0) at(i, j) = 1, ++covered;
    }
    if (multi) req[size_t(j)] = double(std::min(covered - 1, int(c.ri(1, 2))));
  }
  std::vector<double> cost(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    double size = 0;
    for (int j = 0; j < m; ++j) size += at(i, j);
    cost[size_t(i)] = double(c.ri(8, 30)) + std::round(size * c.ru(4, 12));
  }
  std::string cu = dom.currency;
  in.add_param("c[i]", "cost", "cost of an option", cu, {O}, cost);
  in.add_param("a[i,j]", "covers", "coverage (1 if the option covers the site)", "", {O, E}, a);
  if (multi) in.add_param("r[j]", "required", "number of covering options required", "options", {E}, req);

  in.vars.push_back({"x[i]", "1 if option i is chosen, else 0", "binary"});
  in.sense = lp::ObjSense::Minimize;
  in.objective_formula = "minimize sum_{i in O} c[i] * x[i]";
  in.objective_description = "total cost of the chosen options";
  in.objective_unit = cu;
  in.constraints.push_back({"cover", part ? "sum_{i in O} a[i,j] * x[i] = 1   for all j in E"
                                          : (multi ? "sum_{i in O} a[i,j] * x[i] >= r[j]   for all j in E"
                                                   : "sum_{i in O} a[i,j] * x[i] >= 1   for all j in E"),
                            part ? "every site is covered by exactly one chosen option"
                                 : (multi ? "every site is covered by at least its required number of options"
                                          : "every site is covered by at least one chosen option")});

  auto& md = in.model;
  md.objective.sense = lp::ObjSense::Minimize;
  for (int i = 0; i < n; ++i) md.objective.terms.push_back({md.add_var("x_" + opts[size_t(i)], lp::VarType::Binary, 0, 1), cost[size_t(i)]});
  for (int j = 0; j < m; ++j) {
    std::vector<lp::Term> t;
    for (int i = 0; i < n; ++i) t.push_back({i, at(i, j)});
    add_row(md, "cover_" + places[size_t(j)], t, part ? lp::RowSense::EQ : lp::RowSense::GE, req[size_t(j)]);
  }

  // Narrative scenarios: service teams reaching sites, inspection rounds, subscription packages.
  int scen = c.scenario(3);
  std::string n_opts = std::to_string(n) + " candidate " + dom.job + "s (" + label_list(opts) + ")";
  std::string n_sites = std::to_string(m) + " " + dom.sink + "s (" + label_list(places) + ")";
  if (scen == 0)
    in.intro = capitalize(c.org()) + c.x(" {must serve|has to reach|is responsible for} ") + n_sites + c.x(" and {can contract|may fund|can schedule} any of ") +
               n_opts + c.x("; each of them {reaches|serves|takes care of} a known group of these " + dom.sink + "s.");
  else if (scen == 1)
    in.intro = c.x("{To look after|To serve|For} ") + n_sites + ", " + c.org() + c.x(" {compares|reviews|is choosing among} ") + n_opts +
               c.x(", each {covering|handling|visiting} several of them at a fixed cost.");
  else
    in.intro = capitalize(c.org()) + c.x(" {plans its coverage|is drawing up its service plan} for the " + dom.period + ": ") + n_opts +
               c.x(" {are on offer|are available}, and each one {serves|covers} a subset of ") + n_sites + ".";
  if (part)
    in.rules.push_back(c.x("{Every " + dom.sink + " must be covered by exactly one chosen option|No " + dom.sink +
                           " may be covered twice, and none may be left out}; an option is chosen whole or not at all."));
  else if (multi)
    in.rules.push_back(c.x("{Each " + dom.sink + " needs at least the required number of chosen options covering it|Every " + dom.sink +
                           " must be covered by at least as many chosen options as it requires}; options are chosen whole."));
  else
    in.rules.push_back(c.x("{Every " + dom.sink + " must be covered by at least one chosen option|No " + dom.sink +
                           " may be left uncovered}; an option is either chosen or not."));
  in.goal = c.x("{Minimize|Choose the options that minimize|Find the cheapest selection, minimizing} the total cost (in " + cu + ").");

  std::string rhs = part ? " == 1" : (multi ? " >= required[j]" : " >= 1");
  in.python_body =
      "model = gp.Model(\"set_cover\")\n"
      "x = {}\n"
      "for i in options:\n"
      "    x[i] = model.addVar(vtype=GRB.BINARY, name=f\"x_{i}\")\n"
      "model.setObjective(gp.quicksum(cost[i] * x[i] for i in options), GRB.MINIMIZE)\n"
      "for j in sites:\n"
      "    model.addConstr(gp.quicksum(covers[i][j] * x[i] for i in options if covers[i][j] != 0)" + rhs + ", name=f\"cover_{j}\")\n";
  return in;
}

}  // namespace trex::ordata::detail
