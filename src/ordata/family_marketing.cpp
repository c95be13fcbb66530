// Marketing family (task family: marketing): how many advertising slots to buy in each media channel
// (continuous: slots are sold in fractions, e.g. airtime or impressions; up to a channel limit); an LP,
// so the budget or reach row binds at the optimum (integer slots left these rows slack in most draws). media_mix: maximize total reach within a budget while reaching a
// minimum of the target audience; reach_target: minimize cost subject to minimum total and target-
// audience reach. The limits are set around a planted plan, so every draw is feasible.
#include <algorithm>
#include <cmath>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

Instance make_marketing(Ctx& c) {
  static const int kK[4] = {3, 4, 6, 8};
  static const std::vector<std::string> kChannels = {"TV", "Radio", "Online", "Print", "Social", "Outdoor", "Email", "Events",
                                                     "Podcast", "Search", "Video", "Cinema"};
  const auto& dom = c.dom;
  Instance in;
  const char* variants[] = {"media_mix", "reach_target"};
  in.variant = variants[c.ri(0, 1)];
  in.name = "marketing";
  bool target = in.variant == "reach_target";
  int nk = c.size(kK);
  auto ch = pick_labels(c.rng, kChannels, nk);
  int K = in.add_set("K", "channels", "media channels", ch);
  std::vector<double> cost(static_cast<size_t>(nk)), reach(static_cast<size_t>(nk)), young(static_cast<size_t>(nk)), cap(static_cast<size_t>(nk));
  double c0 = 0, r0 = 0, y0 = 0;
  for (int k = 0; k < nk; ++k) {
    cost[size_t(k)] = double(c.ri(2, 40) * 50);
    reach[size_t(k)] = std::round(cost[size_t(k)] / 50 * c.ru(0.6, 1.8) * 10) / 10;  // thousand people per ad
    // Target-audience share falls with reach per cost (2 - reach per 50 of cost: 0.2-1.4), so the reach-best plan
    // is not also the audience-best one and the audience minimum below binds in some draws.
    young[size_t(k)] = std::round(reach[size_t(k)] * (2.0 - reach[size_t(k)] * 50 / cost[size_t(k)]) * c.ru(0.1, 0.4) * 10) / 10;
    cap[size_t(k)] = double(c.ri(3, 12));
    double planted = std::floor(cap[size_t(k)] * c.ru(0.2, 0.8));
    c0 += cost[size_t(k)] * planted, r0 += reach[size_t(k)] * planted, y0 += young[size_t(k)] * planted;
  }
  double budget = std::max(100.0, std::ceil(c0 * c.ru(0.8, 1.0) / 100) * 100), rmin = std::floor(r0 * c.ru(0.7, 0.95));
  // The planted plan scaled to the budget (slots are continuous) meets the audience minimum set just below it, so
  // every draw is feasible (at 0.5-0.75 of the planted audience, with shares independent of reach, it bound in no
  // draw: the reach-maximizing plan reached the target audience anyway).
  double scale = c0 > 0 ? std::min(1.0, budget / c0) : 1.0, ymin = std::floor(y0 * scale * c.ru(0.85, 0.98));
  std::string cu = dom.currency;
  in.add_param("c[k]", "cost", "cost of one slot", cu, {K}, cost);
  in.add_param("r[k]", "reach", "people reached per slot", "thousand people", {K}, reach, 1);
  in.add_param("a[k]", "target_reach", "target-audience people reached per slot", "thousand people", {K}, young, 1);
  in.add_param("u[k]", "max_ads", "most slots the channel sells", "slots", {K}, cap);
  if (target) in.add_param("R", "min_reach", "minimum total reach", "thousand people", {}, {rmin});
  else in.add_param("B", "budget", "advertising budget", cu, {}, {budget});
  in.add_param("A", "min_target_reach", "minimum target-audience reach", "thousand people", {}, {ymin});

  in.vars.push_back({"n[k]", "advertising slots bought in channel k", "continuous, 0 <= n[k] <= u[k]"});
  in.sense = target ? lp::ObjSense::Minimize : lp::ObjSense::Maximize;
  in.objective_formula = target ? "minimize sum_{k in K} c[k] * n[k]" : "maximize sum_{k in K} r[k] * n[k]";
  in.objective_description = target ? "advertising cost" : "total reach";
  in.objective_unit = target ? cu : "thousand people";
  if (target) in.constraints.push_back({"reach", "sum_{k in K} r[k] * n[k] >= R", "the campaign reaches at least R"});
  else in.constraints.push_back({"budget", "sum_{k in K} c[k] * n[k] <= B", "the campaign stays within the budget"});
  in.constraints.push_back({"audience", "sum_{k in K} a[k] * n[k] >= A", "the target audience is reached enough"});

  auto& m = in.model;
  m.objective.sense = in.sense;
  for (int k = 0; k < nk; ++k)
    m.objective.terms.push_back({m.add_var("n_" + ch[size_t(k)], lp::VarType::Continuous, 0, cap[size_t(k)]), target ? cost[size_t(k)] : reach[size_t(k)]});
  std::vector<lp::Term> first, aud;
  for (int k = 0; k < nk; ++k) first.push_back({k, target ? reach[size_t(k)] : cost[size_t(k)]}), aud.push_back({k, young[size_t(k)]});
  add_row(m, target ? "reach" : "budget", first, target ? lp::RowSense::GE : lp::RowSense::LE, target ? rmin : budget);
  add_row(m, "audience", aud, lp::RowSense::GE, ymin);

  // Narrative scenarios: a product launch, a seasonal campaign, a public-information campaign.
  int scen = c.scenario(3);
  std::string cl = std::to_string(nk) + " media channels (" + label_list(ch) + ")";
  // Every draw of a sentence is its own statement, left to right (the order of the family file
  // configs/families/media_planning.toml; the operands of + are not sequenced).
  if (scen == 0) {
    std::string org = capitalize(c.org());
    in.intro = org + c.x(" {is launching|prepares} a campaign for its " + dom.good + " and {can advertise in|considers} ") + cl + ".";
  } else if (scen == 1) {
    std::string when = c.x("{For the coming " + dom.period + "|This " + dom.period + "}, ");
    std::string org = c.org();
    in.intro = when + org + c.x(" {plans|is planning} its advertising across ") + cl + ".";
  } else {
    std::string org = capitalize(c.org());
    in.intro = org + c.x(" wants to {inform|reach} the public about its services and {books|buys} advertisements in ") + cl + ".";
  }
  in.rules.push_back(c.x("{Slots may be bought in fractions, up to the most each channel sells|Each channel sells at most its maximum number of slots (fractions allowed)}."));
  std::string opening = target ? c.x("{The campaign must reach at least the minimum total reach|Total reach must not fall below the minimum}")
                               : c.x("{The total cost may not exceed the budget|Spending stays within the budget}");
  if (target)
    in.rules.push_back(opening + c.x("{, and at least the minimum of the target audience.|; the target audience must also be reached at least to its minimum.}"));
  else
    in.rules.push_back(opening + c.x("{, and the target audience must be reached at least to its minimum.|; at least the minimum target-audience reach is required.}"));
  in.goal = target ? c.x("{Minimize|Plan the campaign at minimum|Find the cheapest plan, minimizing} total advertising cost (in " + cu + ").")
                   : c.x("{Maximize|Plan the campaign that maximizes|Choose the advertisements that maximize} total reach (in thousand people).");

  in.python_body =
      "model = gp.Model(\"marketing\")\n"
      "n = {k: model.addVar(lb=0, ub=max_ads[k], vtype=GRB.CONTINUOUS, name=f\"n_{k}\") for k in channels}\n";
  if (target)
    in.python_body +=
        "model.setObjective(gp.quicksum(cost[k] * n[k] for k in channels), GRB.MINIMIZE)\n"
        "model.addConstr(gp.quicksum(reach[k] * n[k] for k in channels) >= min_reach, name=\"reach\")\n";
  else
    in.python_body +=
        "model.setObjective(gp.quicksum(reach[k] * n[k] for k in channels), GRB.MAXIMIZE)\n"
        "model.addConstr(gp.quicksum(cost[k] * n[k] for k in channels) <= budget, name=\"budget\")\n";
  in.python_body += "model.addConstr(gp.quicksum(target_reach[k] * n[k] for k in channels) >= min_target_reach, name=\"audience\")\n";
  return in;
}

}  // namespace trex::ordata::detail
