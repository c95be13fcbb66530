// Portfolio family: allocate a budget across investment options for maximum expected return under
// per-option limits and an average risk limit; the MILP variant adds selection binaries with
// minimum investments, a cardinality limit and a fixed fee per selected option.
#include <algorithm>
#include <cmath>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

Instance make_portfolio(Ctx& c) {
  static const int kA[4] = {4, 5, 7, 9};
  const auto& dom = c.dom;
  Instance in;
  in.variant = c.rng.bernoulli(0.5) ? "linear" : "cardinality_milp";
  in.name = "portfolio";
  bool milp = in.variant == "cardinality_milp";
  int na = c.size(kA);
  auto assets = pick_labels(c.rng, dom.assets, na);
  int A = in.add_set("A", "assets", "investment options", assets);
  std::vector<double> ret(static_cast<size_t>(na)), risk(static_cast<size_t>(na));
  for (int a = 0; a < na; ++a) {
    risk[size_t(a)] = double(c.ri(1, 9));
    ret[size_t(a)] = std::round((1.0 + risk[size_t(a)] * c.ru(0.6, 1.3)) * 10) / 10;  // percent, one decimal
  }
  double budget = double(c.ri(20, 200) * 10);
  double share = double(c.ri(20, 45));                   // percent of budget per option
  double rmin = *std::min_element(risk.begin(), risk.end()), rmax = *std::max_element(risk.begin(), risk.end());
  double avg_risk = std::round((rmin + (rmax - rmin) * c.ru(0.3, 0.7)) * 10) / 10;
  std::string cu = dom.currency;
  std::string money = "thousand " + cu;
  in.add_param("r[a]", "expected_return", "expected annual return", "percent", {A}, ret, 1);
  in.add_param("rho[a]", "risk_score", "risk score", "points", {A}, risk);
  in.add_param("B", "budget", "budget", money, {}, {budget});
  in.add_param("u", "max_share", "maximum share of the budget in one option", "percent", {}, {share});
  in.add_param("R", "max_avg_risk", "maximum average risk score", "points", {}, {avg_risk}, 1);
  double minimum = 0, fee = 0, kmax = 0;
  if (milp) {
    minimum = std::round(budget * c.ru(0.05, 0.12));
    fee = std::round(budget * c.ru(0.002, 0.01) * 10) / 10;
    kmax = double(std::max(int(std::ceil(100.0 / share)) + int(c.ri(0, 1)), 2));
    kmax = std::min(kmax, double(na));
    in.add_param("m", "min_invest", "minimum investment in a selected option", money, {}, {minimum});
    in.add_param("F", "fee", "fixed fee per selected option", money, {}, {fee}, 1);
    in.add_param("K", "max_options", "maximum number of selected options", "options", {}, {kmax});
  }
  double cap = budget * share / 100.0;

  in.vars.push_back({"x[a]", "amount invested in option a (" + money + ")", "continuous, 0 <= x[a] <= u/100 * B"});
  if (milp) in.vars.push_back({"z[a]", "1 if option a is selected, else 0", "binary"});
  in.sense = lp::ObjSense::Maximize;
  in.objective_formula = milp ? "maximize sum_{a in A} (r[a] / 100) * x[a] - sum_{a in A} F * z[a]"
                              : "maximize sum_{a in A} (r[a] / 100) * x[a]";
  in.objective_description = milp ? "expected annual return minus fees" : "expected annual return";
  in.objective_unit = money;
  in.constraints.push_back({"budget", "sum_{a in A} x[a] <= B", "do not invest more than the budget"});
  in.constraints.push_back({"risk", "sum_{a in A} (rho[a] - R) * x[a] <= 0", "average risk of the invested amount at most R"});
  if (milp) {
    in.constraints.push_back({"minimum", "x[a] - m * z[a] >= 0   for all a in A", "a selected option gets at least m"});
    in.constraints.push_back({"select", "x[a] - (u/100 * B) * z[a] <= 0   for all a in A", "only selected options receive money"});
    in.constraints.push_back({"cardinality", "sum_{a in A} z[a] <= K", "at most K options"});
  }

  auto& m = in.model;
  m.objective.sense = lp::ObjSense::Maximize;
  for (int a = 0; a < na; ++a) {
    int v = m.add_var("x_" + assets[size_t(a)], lp::VarType::Continuous, 0.0, cap);
    m.objective.terms.push_back({v, ret[size_t(a)] / 100.0});
  }
  if (milp)
    for (int a = 0; a < na; ++a) {
      int v = m.add_var("z_" + assets[size_t(a)], lp::VarType::Binary, 0, 1);
      m.objective.terms.push_back({v, -fee});
    }
  std::vector<lp::Term> all, rk;
  for (int a = 0; a < na; ++a) {
    all.push_back({a, 1.0});
    rk.push_back({a, std::round((risk[size_t(a)] - avg_risk) * 10) / 10});
  }
  add_row(m, "budget", all, lp::RowSense::LE, budget);
  add_row(m, "risk", rk, lp::RowSense::LE, 0.0);
  if (milp) {
    for (int a = 0; a < na; ++a) add_row(m, "minimum_" + assets[size_t(a)], {{a, 1.0}, {na + a, -minimum}}, lp::RowSense::GE, 0.0);
    for (int a = 0; a < na; ++a) add_row(m, "select_" + assets[size_t(a)], {{a, 1.0}, {na + a, -cap}}, lp::RowSense::LE, 0.0);
    std::vector<lp::Term> zs;
    for (int a = 0; a < na; ++a) zs.push_back({na + a, 1.0});
    add_row(m, "cardinality", zs, lp::RowSense::LE, kmax);
  }

  in.intro = capitalize(c.org()) + c.x(" {has|can invest|plans to allocate} ") + fmt_num(budget) + " " + money +
             c.x(" {across|among} ") + std::to_string(na) + c.x(" {investment options|candidate projects|options} (") + label_list(assets) + ").";
  in.rules.push_back(c.x("{At most|No more than} ") + fmt_num(share) + c.x("% of the budget {may go into|can be placed in} any single option, and the total invested cannot exceed the budget."));
  in.rules.push_back(c.x("{The average risk score of the money invested|The investment-weighted average risk score} must not exceed ") +
                     fmt_num(avg_risk) + ".");
  if (milp)
    in.rules.push_back(c.x("{A selected option must receive at least|Every option that is used gets at least} ") + fmt_num(minimum) + " " + money +
                       c.x(", {each selected option costs a fixed fee of|a fee of} ") + fmt_num(fee) + " " + money +
                       c.x(" {applies per selected option|is charged per option used}, and at most ") + fmt_num(kmax) + " options can be selected.");
  in.goal = milp ? c.x("{Maximize|Find the allocation that maximizes} the expected annual return minus fees (in " + money + ").")
                 : c.x("{Maximize the|Find the allocation that maximizes the|Determine the investment plan with the highest} expected annual return (in " + money + ").");

  in.python_body =
      "model = gp.Model(\"portfolio\")\n"
      "cap = max_share / 100 * budget\n"
      "x = {}\n"
      "for a in assets:\n"
      "    x[a] = model.addVar(lb=0, ub=cap, vtype=GRB.CONTINUOUS, name=f\"x_{a}\")\n";
  if (milp)
    in.python_body +=
        "z = {}\n"
        "for a in assets:\n"
        "    z[a] = model.addVar(vtype=GRB.BINARY, name=f\"z_{a}\")\n"
        "model.setObjective(gp.quicksum(expected_return[a] / 100 * x[a] for a in assets) - gp.quicksum(fee * z[a] for a in assets), GRB.MAXIMIZE)\n";
  else
    in.python_body += "model.setObjective(gp.quicksum(expected_return[a] / 100 * x[a] for a in assets), GRB.MAXIMIZE)\n";
  in.python_body +=
      "model.addConstr(gp.quicksum(x[a] for a in assets) <= budget, name=\"budget\")\n"
      "model.addConstr(gp.quicksum((risk_score[a] - max_avg_risk) * x[a] for a in assets) <= 0, name=\"risk\")\n";
  if (milp)
    in.python_body +=
        "for a in assets:\n"
        "    model.addConstr(x[a] - min_invest * z[a] >= 0, name=f\"minimum_{a}\")\n"
        "    model.addConstr(x[a] - cap * z[a] <= 0, name=f\"select_{a}\")\n"
        "model.addConstr(gp.quicksum(z[a] for a in assets) <= max_options, name=\"cardinality\")\n";
  return in;
}

}  // namespace trex::ordata::detail
