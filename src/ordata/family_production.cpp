// Production-planning family: multi-period lot sizing with inventory balance
// (s[p,t-1] + x[p,t] - s[p,t] = d[p,t]), period capacity, and setup (binary) or ending-stock variants.
#include <algorithm>
#include <cmath>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

Instance make_production_planning(Ctx& c) {
  static const int kP[4] = {1, 2, 2, 3}, kT[4] = {3, 4, 6, 8};
  const auto& dom = c.dom;
  Instance in;
  const char* variants[] = {"inventory", "setup", "ending_stock"};
  in.variant = variants[c.ri(0, 2)];
  in.name = "production_planning";
  bool setup = in.variant == "setup", ending = in.variant == "ending_stock";
  int np = c.size(kP), nt = c.size(kT);
  if (setup) np = std::min(np, 2), nt = std::min(nt, 6);  // setup MILPs grow expensive for CBC quickly
  auto prods = pick_labels(c.rng, dom.products, np);
  std::vector<std::string> periods;
  std::string pw = dom.period;
  std::string pfx = capitalize(pw).substr(0, 1);
  for (int t = 0; t < nt; ++t) periods.push_back(pfx + std::to_string(t + 1));
  int P = in.add_set("P", "products", "products", prods);
  int T = in.add_set("T", "periods", pw + "s", periods);
  std::vector<double> dem(size_t(np) * size_t(nt)), pc(size_t(np) * size_t(nt)), hold(static_cast<size_t>(np)), hrs(static_cast<size_t>(np)),
      init(static_cast<size_t>(np)), capt(static_cast<size_t>(nt)), setc(static_cast<size_t>(np)), endst(static_cast<size_t>(np));
  for (int p = 0; p < np; ++p) {
    double base = double(c.ri(4, 30) * 5);
    for (int t = 0; t < nt; ++t) dem[size_t(p * nt + t)] = std::max(0.0, std::round(base * c.ru(0.4, 1.6) / 5) * 5);
    double cost = double(c.ri(10, 40));
    for (int t = 0; t < nt; ++t) pc[size_t(p * nt + t)] = cost + double(c.ri(-4, 8));
    hold[size_t(p)] = double(c.ri(1, 5));
    hrs[size_t(p)] = double(c.ri(1, 4));
    init[size_t(p)] = std::round(dem[size_t(p * nt)] * c.ru(0.0, 0.6) / 5) * 5;
    setc[size_t(p)] = double(c.ri(10, 60) * 10);
    endst[size_t(p)] = std::round(base * c.ru(0.2, 0.6) / 5) * 5;
  }
  double peak = 0, avg = 0;
  for (int t = 0; t < nt; ++t) {
    double h = 0;
    for (int p = 0; p < np; ++p) h += hrs[size_t(p)] * dem[size_t(p * nt + t)];
    peak = std::max(peak, h);
    avg += h / nt;
  }
  for (auto& v : capt) v = std::ceil(std::max(avg * 1.15, peak * c.ru(0.75, 1.05)) / 10) * 10;
  std::string cu = dom.currency, pu = dom.product_unit;
  in.add_param("d[p,t]", "demand", "demand", pu, {P, T}, dem);
  in.add_param("c[p,t]", "prod_cost", "production cost", cu + " per " + pu, {P, T}, pc);
  in.add_param("h[p]", "holding_cost", "holding cost per " + pw, cu + " per " + pu, {P}, hold);
  in.add_param("r[p]", "hours_per_unit", "production time", "hours per " + pu, {P}, hrs);
  in.add_param("s0[p]", "initial_stock", "initial inventory", pu, {P}, init);
  in.add_param("C[t]", "capacity", "production capacity", "hours", {T}, capt);
  if (setup) in.add_param("f[p]", "setup_cost", "setup cost", cu, {P}, setc);
  if (ending) in.add_param("e[p]", "ending_stock", "minimum ending inventory", pu, {P}, endst);

  in.vars.push_back({"x[p,t]", pu + " of product p produced in " + pw + " t", "continuous, >= 0"});
  in.vars.push_back({"s[p,t]", "inventory of product p at the end of " + pw + " t", "continuous, >= 0"});
  if (setup) in.vars.push_back({"y[p,t]", "1 if product p is set up in " + pw + " t, else 0", "binary"});
  in.sense = lp::ObjSense::Minimize;
  in.objective_formula = std::string("minimize sum_{p in P} sum_{t in T} (c[p,t] * x[p,t] + h[p] * s[p,t]") +
                         (setup ? " + f[p] * y[p,t])" : ")");
  in.objective_description = setup ? "production, holding and setup cost" : "production and holding cost";
  in.objective_unit = cu;
  in.constraints.push_back({"balance", "s[p,t-1] + x[p,t] - s[p,t] = d[p,t]   for all p, t (with s[p,0] = s0[p])",
                            "inventory balance"});
  in.constraints.push_back({"capacity", "sum_{p in P} r[p] * x[p,t] <= C[t]   for all t in T", "production hours per period"});
  if (setup) in.constraints.push_back({"setup", "x[p,t] - (C[t] / r[p]) * y[p,t] <= 0   for all p, t", "produce only after a setup"});
  if (ending) in.constraints.push_back({"ending", "s[p,last] >= e[p]   for all p in P", "minimum stock at the end of the horizon"});

  auto& m = in.model;
  m.objective.sense = lp::ObjSense::Minimize;
  auto id = [&](int p, int t) { return size_t(p * nt + t); };
  std::vector<int> xv(size_t(np * nt)), sv(size_t(np * nt)), yv(size_t(np * nt), -1);
  for (int p = 0; p < np; ++p)
    for (int t = 0; t < nt; ++t) {
      xv[id(p, t)] = m.add_var("x_" + prods[size_t(p)] + "_" + periods[size_t(t)]);
      m.objective.terms.push_back({xv[id(p, t)], pc[id(p, t)]});
    }
  for (int p = 0; p < np; ++p)
    for (int t = 0; t < nt; ++t) {
      sv[id(p, t)] = m.add_var("s_" + prods[size_t(p)] + "_" + periods[size_t(t)]);
      m.objective.terms.push_back({sv[id(p, t)], hold[size_t(p)]});
    }
  if (setup)
    for (int p = 0; p < np; ++p)
      for (int t = 0; t < nt; ++t) {
        yv[id(p, t)] = m.add_var("y_" + prods[size_t(p)] + "_" + periods[size_t(t)], lp::VarType::Binary, 0, 1);
        m.objective.terms.push_back({yv[id(p, t)], setc[size_t(p)]});
      }
  for (int p = 0; p < np; ++p)
    for (int t = 0; t < nt; ++t) {
      std::vector<lp::Term> tm{{xv[id(p, t)], 1.0}, {sv[id(p, t)], -1.0}};
      double rhs = dem[id(p, t)];
      if (t > 0) tm.insert(tm.begin(), {sv[id(p, t - 1)], 1.0});
      else rhs -= init[size_t(p)];
      add_row(m, "balance_" + prods[size_t(p)] + "_" + periods[size_t(t)], tm, lp::RowSense::EQ, rhs);
    }
  for (int t = 0; t < nt; ++t) {
    std::vector<lp::Term> tm;
    for (int p = 0; p < np; ++p) tm.push_back({xv[id(p, t)], hrs[size_t(p)]});
    add_row(m, "capacity_" + periods[size_t(t)], tm, lp::RowSense::LE, capt[size_t(t)]);
  }
  if (setup)
    for (int p = 0; p < np; ++p)
      for (int t = 0; t < nt; ++t)
        add_row(m, "setup_" + prods[size_t(p)] + "_" + periods[size_t(t)],
                {{xv[id(p, t)], 1.0}, {yv[id(p, t)], -capt[size_t(t)] / hrs[size_t(p)]}}, lp::RowSense::LE, 0.0);
  if (ending)
    for (int p = 0; p < np; ++p) add_row(m, "ending_" + prods[size_t(p)], {{sv[id(p, nt - 1)], 1.0}}, lp::RowSense::GE, endst[size_t(p)]);

  in.intro = capitalize(c.org()) + c.x(" {plans|schedules|prepares} production of ") + label_list(prods) +
             c.x(" over the next ") + std::to_string(nt) + " " + pw + "s (" + label_list(periods) + ").";
  in.rules.push_back(c.x("{Demand in each " + pw + " must be met on time|Every " + pw + "'s demand has to be satisfied without backorders}") +
                     c.x("{ from production or from stock| from that " + pw + "'s output or inventory}."));
  in.rules.push_back(c.x("{Stock left at the end of a " + pw + " carries over and costs the holding cost|Inventory carried to the next " + pw +
                         " incurs the holding cost}; the initial inventory is available in the first " + pw + "."));
  in.rules.push_back(c.x("{Production time in a " + pw + " cannot exceed|Each " + pw + " offers at most} the production capacity (in hours)."));
  if (setup) in.rules.push_back(c.x("{Producing a product in a " + pw + " requires a setup, which costs the setup cost|A setup cost is paid in every " + pw + " in which a product is made}."));
  if (ending) in.rules.push_back(c.x("{At the end of the horizon at least|The final inventory must be at least} the minimum ending inventory {must remain|of each product}."));
  in.goal = c.x("{Minimize|Find the plan that minimizes|Determine the production plan with the lowest} total cost (in " + cu + ").");

  in.python_body =
      "model = gp.Model(\"production_planning\")\n"
      "x = {}\n"
      "s = {}\n";
  if (setup) in.python_body += "y = {}\n";
  in.python_body +=
      "for p in products:\n"
      "    for t in periods:\n"
      "        x[p, t] = model.addVar(lb=0, vtype=GRB.CONTINUOUS, name=f\"x_{p}_{t}\")\n"
      "        s[p, t] = model.addVar(lb=0, vtype=GRB.CONTINUOUS, name=f\"s_{p}_{t}\")\n";
  if (setup)
    in.python_body +=
        "        y[p, t] = model.addVar(vtype=GRB.BINARY, name=f\"y_{p}_{t}\")\n"
        "model.setObjective(gp.quicksum(prod_cost[p][t] * x[p, t] + holding_cost[p] * s[p, t] + setup_cost[p] * y[p, t]\n"
        "                               for p in products for t in periods), GRB.MINIMIZE)\n";
  else
    in.python_body +=
        "model.setObjective(gp.quicksum(prod_cost[p][t] * x[p, t] + holding_cost[p] * s[p, t]\n"
        "                               for p in products for t in periods), GRB.MINIMIZE)\n";
  in.python_body +=
      "for p in products:\n"
      "    for k, t in enumerate(periods):\n"
      "        previous = initial_stock[p] if k == 0 else s[p, periods[k - 1]]\n"
      "        model.addConstr(previous + x[p, t] - s[p, t] == demand[p][t], name=f\"balance_{p}_{t}\")\n"
      "for t in periods:\n"
      "    model.addConstr(gp.quicksum(hours_per_unit[p] * x[p, t] for p in products) <= capacity[t], name=f\"capacity_{t}\")\n";
  if (setup)
    in.python_body +=
        "for p in products:\n"
        "    for t in periods:\n"
        "        model.addConstr(x[p, t] - (capacity[t] / hours_per_unit[p]) * y[p, t] <= 0, name=f\"setup_{p}_{t}\")\n";
  if (ending)
    in.python_body +=
        "for p in products:\n"
        "    model.addConstr(s[p, periods[-1]] >= ending_stock[p], name=f\"ending_{p}\")\n";
  return in;
}

}  // namespace trex::ordata::detail
