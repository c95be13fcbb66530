// Capacity-planning family: a product mix under resource capacities (continuous or integer) and a
// variant that may buy extra capacity in integer blocks.
#include <cmath>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

Instance make_capacity_planning(Ctx& c) {
  static const int kP[4] = {2, 3, 5, 9}, kR[4] = {2, 3, 4, 6};
  const auto& dom = c.dom;
  Instance in;
  const char* variants[] = {"product_mix", "integer_mix", "expansion"};
  in.variant = variants[c.ri(0, 2)];
  in.name = "capacity_planning";
  bool integer = in.variant == "integer_mix", expand = in.variant == "expansion";
  int np = c.size(kP), nr = std::min(c.size(kR, 0), 6);
  auto prods = pick_labels(c.rng, dom.products, np);
  auto res = pick_labels(c.rng, dom.resources, nr);
  int P = in.add_set("P", "products", "products", prods);
  int R = in.add_set("R", "resources", "resources", res);
  std::vector<double> profit(static_cast<size_t>(np)), use(size_t(nr) * size_t(np)), cap(static_cast<size_t>(nr)), maxs(static_cast<size_t>(np));
  for (auto& v : profit) v = double(c.ri(12, 95));
  for (int r = 0; r < nr; ++r)
    for (int p = 0; p < np; ++p) use[size_t(r * np + p)] = c.rng.bernoulli(0.8) ? double(c.ri(1, 9)) : 0.0;
  for (int p = 0; p < np; ++p) use[size_t(p)] = std::max(1.0, use[size_t(p)]);  // the first resource bounds everything
  for (int p = 0; p < np; ++p) maxs[size_t(p)] = double(c.ri(10, 60) * 5);
  for (int r = 0; r < nr; ++r) {
    double full = 0;
    for (int p = 0; p < np; ++p) full += use[size_t(r * np + p)] * maxs[size_t(p)];
    cap[size_t(r)] = std::max(10.0, std::round(full * c.ru(0.3, 0.7) / 10) * 10);
  }
  std::string cu = dom.currency, pu = dom.product_unit, ru = dom.resource_unit;
  in.add_param("p[j]", "profit", "profit per unit", cu + " per " + pu, {P}, profit);
  in.add_param("a[r,j]", "usage", "resource use per unit", ru, {R, P}, use);
  in.add_param("b[r]", "capacity", "capacity per " + dom.period, ru, {R}, cap);
  in.add_param("m[j]", "max_sales", "maximum sales", pu, {P}, maxs);
  std::vector<double> block, bcost, bmax;
  if (expand) {
    block.resize(static_cast<size_t>(nr)), bcost.resize(static_cast<size_t>(nr)), bmax.resize(static_cast<size_t>(nr));
    for (int r = 0; r < nr; ++r) {
      block[size_t(r)] = std::max(5.0, std::round(cap[size_t(r)] * c.ru(0.1, 0.25) / 5) * 5);
      bcost[size_t(r)] = std::round(block[size_t(r)] * c.ru(1.0, 6.0));
      bmax[size_t(r)] = double(c.ri(1, 4));
    }
    in.add_param("g[r]", "block_size", "size of one capacity block", ru, {R}, block);
    in.add_param("f[r]", "block_cost", "cost of one capacity block", cu, {R}, bcost);
    in.add_param("e_max[r]", "max_blocks", "maximum number of blocks", "blocks", {R}, bmax);
  }

  in.vars.push_back({"x[j]", pu + " of product j to make", integer ? "integer, 0 <= x[j] <= m[j]" : "continuous, 0 <= x[j] <= m[j]"});
  if (expand) in.vars.push_back({"e[r]", "capacity blocks bought for resource r", "integer, 0 <= e[r] <= e_max[r]"});
  in.sense = lp::ObjSense::Maximize;
  in.objective_formula = expand ? "maximize sum_{j in P} p[j] * x[j] - sum_{r in R} f[r] * e[r]" : "maximize sum_{j in P} p[j] * x[j]";
  in.objective_description = expand ? "profit minus expansion cost" : "total profit";
  in.objective_unit = cu;
  in.constraints.push_back({"capacity", expand ? "sum_{j in P} a[r,j] * x[j] - g[r] * e[r] <= b[r]   for all r in R"
                                               : "sum_{j in P} a[r,j] * x[j] <= b[r]   for all r in R",
                            "resource use stays within capacity"});

  auto& m = in.model;
  m.objective.sense = lp::ObjSense::Maximize;
  for (int p = 0; p < np; ++p) {
    int v = m.add_var("x_" + prods[size_t(p)], integer ? lp::VarType::Integer : lp::VarType::Continuous, 0.0, maxs[size_t(p)]);
    m.objective.terms.push_back({v, profit[size_t(p)]});
  }
  if (expand)
    for (int r = 0; r < nr; ++r) {
      int v = m.add_var("e_" + res[size_t(r)], lp::VarType::Integer, 0.0, bmax[size_t(r)]);
      m.objective.terms.push_back({v, -bcost[size_t(r)]});
    }
  for (int r = 0; r < nr; ++r) {
    std::vector<lp::Term> t;
    for (int p = 0; p < np; ++p) t.push_back({p, use[size_t(r * np + p)]});
    if (expand) t.push_back({np + r, -block[size_t(r)]});
    add_row(m, "capacity_" + res[size_t(r)], t, lp::RowSense::LE, cap[size_t(r)]);
  }

  in.intro = capitalize(c.org()) + c.x(" {makes|produces|offers} ") + std::to_string(np) + " products (" + label_list(prods) +
             c.x(") {using|that share} ") + std::to_string(nr) + " resources (" + label_list(res) + ")" +
             c.x("{ and plans next " + dom.period + "'s output| for the coming " + dom.period + "|}.");
  in.rules.push_back(c.x("{Total resource use may not exceed|Each resource is limited to} ") +
                     c.x("{the|its} capacity per " + dom.period + "{| (in " + ru + ")}."));
  in.rules.push_back(c.x("{Sales of each product cannot exceed|No more than} its maximum sales {can be sold|}."));
  if (integer) in.rules.push_back(c.x("{Only whole " + pu + " can be produced|Production quantities must be integers}."));
  if (expand)
    in.rules.push_back(c.x("{Extra capacity can be bought|Capacity may be expanded} in whole blocks (up to the maximum number of blocks per resource)"
                           "{; each block adds the block size and costs the block cost|, each adding the block size at the block cost}."));
  in.goal = expand ? c.x("{Maximize|Find the plan that maximizes} profit minus expansion cost (in " + cu + ").")
                   : c.x("{Maximize|Find the production plan that maximizes|Determine the mix with the highest} total profit (in " + cu + ").");

  in.python_body =
      "model = gp.Model(\"capacity_planning\")\n"
      "x = {}\n"
      "for j in products:\n"
      "    x[j] = model.addVar(lb=0, ub=max_sales[j], vtype=" + std::string(integer ? "GRB.INTEGER" : "GRB.CONTINUOUS") +
      ", name=f\"x_{j}\")\n";
  if (expand)
    in.python_body +=
        "e = {}\n"
        "for r in resources:\n"
        "    e[r] = model.addVar(lb=0, ub=max_blocks[r], vtype=GRB.INTEGER, name=f\"e_{r}\")\n"
        "model.setObjective(gp.quicksum(profit[j] * x[j] for j in products) - gp.quicksum(block_cost[r] * e[r] for r in resources), GRB.MAXIMIZE)\n"
        "for r in resources:\n"
        "    model.addConstr(gp.quicksum(usage[r][j] * x[j] for j in products) - block_size[r] * e[r] <= capacity[r], name=f\"capacity_{r}\")\n";
  else
    in.python_body +=
        "model.setObjective(gp.quicksum(profit[j] * x[j] for j in products), GRB.MAXIMIZE)\n"
        "for r in resources:\n"
        "    model.addConstr(gp.quicksum(usage[r][j] * x[j] for j in products) <= capacity[r], name=f\"capacity_{r}\")\n";
  return in;
}

}  // namespace trex::ordata::detail
