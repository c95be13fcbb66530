// Revenue-management family (task family: revenue management): products (fare classes, bundles,
// packages) each use one or two shared capacity resources; decide how many of each to sell, up to its
// forecast demand, to maximize revenue (the deterministic booking-limit LP), with integer bookings or
// with contracted minimum sales (contract allocation: sales of some products must reach a committed
// minimum, set below what the capacity allows so the draw stays feasible).
#include <algorithm>
#include <cmath>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

Instance make_revenue(Ctx& c) {
  static const int kJ[4] = {4, 6, 9, 14}, kL[4] = {2, 3, 4, 6};
  const auto& dom = c.dom;
  Instance in;
  const char* variants[] = {"booking_limits", "integer_bookings", "contract_minimums"};
  in.variant = variants[c.ri(0, 2)];
  in.name = "revenue_management";
  bool integer = in.variant == "integer_bookings", contracts = in.variant == "contract_minimums";
  int nj = c.size(kJ, 2), nl = c.size(kL);
  auto prods = pick_labels(c.rng, dom.products, nj);
  auto res = pick_labels(c.rng, dom.resources, nl);
  int J = in.add_set("J", "products", "products on sale", prods);
  int L = in.add_set("L", "resources", "shared capacity resources", res);

  std::vector<double> a(size_t(nl) * size_t(nj), 0.0), price(static_cast<size_t>(nj)), dem(static_cast<size_t>(nj)),
      cap(static_cast<size_t>(nl)), minimum(size_t(nj), 0.0);
  for (int j = 0; j < nj; ++j) {
    int l1 = int(c.ri(0, nl - 1));
    a[size_t(l1 * nj + j)] = 1;
    if (c.rng.uniform() < 0.5) a[size_t(int(c.ri(0, nl - 1)) * nj + j)] = 1;  // a two-resource product (may repeat l1)
    int uses = 0;
    for (int l = 0; l < nl; ++l) uses += int(a[size_t(l * nj + j)]);
    dem[size_t(j)] = double(c.ri(4, 30) * 5);
    price[size_t(j)] = double(c.ri(40, 120) * uses + c.ri(0, 60));
  }
  for (int l = 0; l < nl; ++l) {
    double use = 0;
    for (int j = 0; j < nj; ++j) use += a[size_t(l * nj + j)] * dem[size_t(j)];
    cap[size_t(l)] = std::max(10.0, std::round(use * c.ru(0.35, 0.75) / 5) * 5);
  }
  if (contracts) {
    // Minimums on about a third of the products, scaled so that together they use at most half of
    // every resource's capacity.
    for (int j = 0; j < nj; ++j)
      if (c.rng.uniform() < 0.35) minimum[size_t(j)] = std::round(dem[size_t(j)] * c.ru(0.2, 0.5));
    for (int l = 0; l < nl; ++l) {
      double use = 0;
      for (int j = 0; j < nj; ++j) use += a[size_t(l * nj + j)] * minimum[size_t(j)];
      if (use > cap[size_t(l)] / 2)
        for (int j = 0; j < nj; ++j)
          if (a[size_t(l * nj + j)] > 0) minimum[size_t(j)] = std::floor(minimum[size_t(j)] * cap[size_t(l)] / 2 / use);
    }
  }
  std::string cu = dom.currency, u = dom.product_unit;
  in.add_param("r[j]", "price", "price", cu + " per unit", {J}, price);
  in.add_param("D[j]", "demand", "forecast demand", u, {J}, dem);
  in.add_param("a[l,j]", "uses", "resource use (1 if the product needs the resource)", "", {L, J}, a);
  in.add_param("C[l]", "capacity", "capacity", u, {L}, cap);
  if (contracts) in.add_param("m[j]", "committed", "contracted minimum sales (0: none)", u, {J}, minimum);

  in.vars.push_back({"x[j]", u + " of product j sold", integer ? "integer, 0 <= x[j] <= D[j]"
                                                                : (contracts ? "continuous, m[j] <= x[j] <= D[j]" : "continuous, 0 <= x[j] <= D[j]")});
  in.sense = lp::ObjSense::Maximize;
  in.objective_formula = "maximize sum_{j in J} r[j] * x[j]";
  in.objective_description = "total revenue";
  in.objective_unit = cu;
  in.constraints.push_back({"capacity", "sum_{j in J} a[l,j] * x[j] <= C[l]   for all l in L", "no resource is sold beyond its capacity"});

  auto& m = in.model;
  m.objective.sense = lp::ObjSense::Maximize;
  for (int j = 0; j < nj; ++j)
    m.objective.terms.push_back({m.add_var("x_" + prods[size_t(j)], integer ? lp::VarType::Integer : lp::VarType::Continuous,
                                           minimum[size_t(j)], dem[size_t(j)]),
                                 price[size_t(j)]});
  for (int l = 0; l < nl; ++l) {
    std::vector<lp::Term> t;
    for (int j = 0; j < nj; ++j)
      if (a[size_t(l * nj + j)] != 0) t.push_back({j, a[size_t(l * nj + j)]});
    if (!t.empty()) add_row(m, "capacity_" + res[size_t(l)], t, lp::RowSense::LE, cap[size_t(l)]);  // unused resources: no row
  }

  // Narrative scenarios: seats/rooms sold in classes, service packages, capacity sold in bundles.
  int scen = c.scenario(3);
  std::string pl = std::to_string(nj) + " products (" + label_list(prods) + ")";
  std::string rl = std::to_string(nl) + " resources (" + label_list(res) + ")";
  if (scen == 0)
    in.intro = capitalize(c.org()) + c.x(" {sells|offers|markets} ") + pl + c.x(" that {draw on|share|consume} the limited capacity of ") + rl +
               c.x(" {for the coming|in the next} " + dom.period + ".");
  else if (scen == 1)
    in.intro = c.x("{Capacity is scarce|Not every request can be served}: ") + c.org() + c.x(" has ") + rl + c.x(" and {forecasts|expects} demand for ") + pl +
               c.x(", each {using|needing} one or two of the resources.");
  else
    in.intro = capitalize(c.org()) + c.x(" {must set booking limits|decides how many units to accept} for ") + pl +
               c.x(" this " + dom.period + "; each unit sold {takes one unit|uses one unit} of capacity on every resource it needs among ") + rl + ".";
  in.rules.push_back(c.x("{Sales of a product cannot exceed its forecast demand|No product sells more than its demand}") +
                     c.x("{, and|;} {no resource may be used beyond its capacity|every resource's capacity is a hard limit}."));
  if (integer) in.rules.push_back(c.x("{Only whole units are sold|Bookings are whole numbers}."));
  if (contracts)
    in.rules.push_back(c.x("{Some products are under contract: their sales must reach the committed minimum (0 means no commitment)|"
                           "Contracts commit minimum sales for some products (a minimum of 0 means none), which must be honoured}."));
  in.goal = c.x("{Maximize|Choose the sales that maximize|Find the booking limits that maximize} total revenue (in " + cu + ").");

  std::string lb = contracts ? "committed[j]" : "0";
  in.python_body =
      "model = gp.Model(\"revenue_management\")\n"
      "x = {}\n"
      "for j in products:\n"
      "    x[j] = model.addVar(lb=" + lb + ", ub=demand[j], vtype=" + std::string(integer ? "GRB.INTEGER" : "GRB.CONTINUOUS") +
      ", name=f\"x_{j}\")\n"
      "model.setObjective(gp.quicksum(price[j] * x[j] for j in products), GRB.MAXIMIZE)\n"
      "for l in resources:\n"
      "    if any(uses[l][j] != 0 for j in products):\n"
      "        model.addConstr(gp.quicksum(uses[l][j] * x[j] for j in products if uses[l][j] != 0) <= capacity[l], name=f\"capacity_{l}\")\n";
  return in;
}

}  // namespace trex::ordata::detail
