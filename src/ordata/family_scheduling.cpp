// Scheduling family: staff shift covering (integer staff per shift covering demand per time slot),
// with a per-shift staffing cap variant and a cyclic weekly roster (five consecutive days on).
#include <algorithm>
#include <cmath>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

Instance make_scheduling(Ctx& c) {
  static const int kP[4] = {5, 8, 12, 20}, kK[4] = {4, 6, 9, 14};
  const auto& dom = c.dom;
  Instance in;
  const char* variants[] = {"shift_cover", "shift_cover_capped", "weekly_roster"};
  in.variant = variants[c.ri(0, 2)];
  in.name = "staff_scheduling";
  bool weekly = in.variant == "weekly_roster", capped = in.variant == "shift_cover_capped";
  std::vector<std::string> periods, shifts;
  std::vector<double> cover;  // shift x period
  int np, nk;
  if (weekly) {
    periods = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
    np = nk = 7;
    for (int k = 0; k < 7; ++k) shifts.push_back("Start" + periods[size_t(k)]);
    cover.assign(49, 0.0);
    int on = c.level() >= 2 ? 4 : 5;
    for (int k = 0; k < 7; ++k)
      for (int d = 0; d < on; ++d) cover[size_t(k * 7 + (k + d) % 7)] = 1.0;
  } else {
    np = c.size(kP);
    nk = c.size(kK);
    int start_hour = int(c.ri(5, 8));
    for (int p = 0; p < np; ++p) {
      int h = (start_hour + p) % 24;
      periods.push_back((h < 10 ? "H0" : "H") + std::to_string(h));
    }
    // Shifts: (start, length) pairs; the first ones tile the horizon so every slot is coverable.
    std::vector<std::pair<int, int>> sl;
    for (int s = 0; s < np;) {
      int len = int(c.ri(2, 4));
      sl.push_back({s, std::min(len, np - s)});
      s += len;
    }
    while (int(sl.size()) < nk) {
      int len = int(c.ri(2, 5));
      int s = int(c.ri(0, std::max(0, np - len)));
      std::pair<int, int> cand{s, std::min(len, np - s)};
      if (std::find(sl.begin(), sl.end(), cand) == sl.end()) sl.push_back(cand);
    }
    nk = int(sl.size());
    std::sort(sl.begin(), sl.end());
    cover.assign(size_t(nk) * size_t(np), 0.0);
    for (int k = 0; k < nk; ++k) {
      shifts.push_back("S" + std::to_string(k + 1));
      for (int d = 0; d < sl[size_t(k)].second; ++d) cover[size_t(k * np + sl[size_t(k)].first + d)] = 1.0;
    }
  }
  int K = in.add_set("K", "shifts", "shifts", shifts);
  int P = in.add_set("P", "periods", weekly ? "days" : "hourly time slots", periods);
  std::vector<double> demand(static_cast<size_t>(np)), cost(static_cast<size_t>(nk)), maxstaff;
  for (auto& d : demand) d = double(c.ri(2, 6 + 4 * c.level()));
  std::string cu = dom.currency;
  for (int k = 0; k < nk; ++k) {
    double len = 0;
    for (int p = 0; p < np; ++p) len += cover[size_t(k * np + p)];
    cost[size_t(k)] = weekly ? double(c.ri(500, 900)) : std::round(len * double(c.ri(18, 40)) + double(c.ri(0, 30)));
  }
  in.add_param("a[k,p]", "covers", "coverage (1 if the shift covers the period)", "", {K, P}, cover);
  in.add_param("r[p]", "required", "minimum staff required", dom.staff, {P}, demand);
  in.add_param("c[k]", "cost", "cost per person on the shift", cu, {K}, cost);
  if (capped) {
    maxstaff.resize(static_cast<size_t>(nk));
    double mx = *std::max_element(demand.begin(), demand.end());
    for (auto& v : maxstaff) v = std::ceil(mx * c.ru(0.55, 0.9));
    in.add_param("m[k]", "max_staff", "maximum staff per shift", dom.staff, {K}, maxstaff);
  }
  in.vars.push_back({"x[k]", "number of " + dom.staff + " working shift k", capped ? "integer, 0 <= x[k] <= m[k]" : "integer, >= 0"});
  in.sense = lp::ObjSense::Minimize;
  in.objective_formula = "minimize sum_{k in K} c[k] * x[k]";
  in.objective_description = "total staffing cost";
  in.objective_unit = cu;
  in.constraints.push_back({"cover", "sum_{k in K} a[k,p] * x[k] >= r[p]   for all p in P",
                            "every period is covered by at least the required staff"});

  auto& m = in.model;
  m.objective.sense = lp::ObjSense::Minimize;
  for (int k = 0; k < nk; ++k) {
    int v = m.add_var("x_" + shifts[size_t(k)], lp::VarType::Integer, 0.0, capped ? maxstaff[size_t(k)] : lp::kInf);
    m.objective.terms.push_back({v, cost[size_t(k)]});
  }
  for (int p = 0; p < np; ++p) {
    std::vector<lp::Term> t;
    for (int k = 0; k < nk; ++k)
      if (cover[size_t(k * np + p)] != 0.0) t.push_back({k, 1.0});
    add_row(m, "cover_" + periods[size_t(p)], t, lp::RowSense::GE, demand[size_t(p)]);
  }

  if (weekly) {
    int on = int(std::lround(std::count(cover.begin(), cover.begin() + 7, 1.0)));
    in.intro = capitalize(c.org()) + c.x(" {plans|builds|prepares} a {weekly|cyclic weekly} roster for its ") + dom.staff + ". " +
               c.x("{Everyone|Each person} works ") + std::to_string(on) +
               c.x(" consecutive days {and then|followed by} {has|takes} the rest of the week off") +
               c.x("{, so a person is identified by the day their block starts|; a shift is named after its start day}.");
  } else {
    in.intro = capitalize(c.org()) + c.x(" {staffs|schedules} ") + dom.staff + c.x(" over ") + std::to_string(np) +
               c.x(" {consecutive hourly slots|one-hour time slots} ({from|starting at} ") + periods[0] + "). " +
               c.x("{There are|It can use} ") + std::to_string(nk) +
               c.x(" {shift patterns|shift types}; {each covers|every shift covers} a block of consecutive slots as given by the coverage data.");
  }
  in.rules.push_back(c.x("{In every|For each} ") + (weekly ? "day" : "slot") +
                     c.x(" the number of {people|" + dom.staff + "} on duty must {reach|be at least} the minimum staff required."));
  if (capped) in.rules.push_back(c.x("{No shift may have more than|At most} its maximum staff {can be assigned to it|}."));
  in.rules.push_back(c.x("{Staff numbers are whole people|Only whole people can be scheduled|The number on each shift must be an integer}."));
  in.goal = c.x("{Minimize|Find the roster that minimizes|Determine how many people to put on each shift to minimize} the total staffing cost (in " + cu + ").");

  in.python_body =
      "model = gp.Model(\"staff_scheduling\")\n"
      "x = {}\n"
      "for k in shifts:\n"
      "    x[k] = model.addVar(lb=0, ub=" + std::string(capped ? "max_staff[k]" : "GRB.INFINITY") +
      ", vtype=GRB.INTEGER, name=f\"x_{k}\")\n"
      "model.setObjective(gp.quicksum(cost[k] * x[k] for k in shifts), GRB.MINIMIZE)\n"
      "for p in periods:\n"
      "    model.addConstr(gp.quicksum(covers[k][p] * x[k] for k in shifts) >= required[p], name=f\"cover_{p}\")\n";
  return in;
}

}  // namespace trex::ordata::detail
