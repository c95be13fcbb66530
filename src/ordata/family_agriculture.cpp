// Agriculture family (task family: agriculture): how to use a farm's land.
// crop_mix (LP): hectares a[c] of each crop, between a contracted minimum and a market limit
// (lo[c] <= a[c] <= hi[c]), within the land, irrigation water and labour available
// (sum a <= L, sum w a <= W, sum h a <= H); maximize the profit sum p a.
// crop_rotation (MILP): which crop each field grows in each season, x[f,c,t] binary; at most one crop
// per field and season (a field may lie fallow); the same crop never on a field in two consecutive
// seasons, the season before the horizon included (x[f,c,t] + x[f,c,t-1] <= 1, x[f,c,0] = g[f,c]);
// per season at least K fields with a staple (cereal) crop and at most R fields with crops that need
// irrigation (what the irrigation system serves); maximize sum p[c] A[f] x[f,c,t]. Both are set around a
// planted plan (crop_rotation: every field used, the rotation kept), so every draw is feasible; the
// irrigated crops earn more, so the irrigation and staple rows are what binds.
#include <algorithm>
#include <cmath>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

namespace {
struct Crop {
  const char* name;
  bool staple;  // a cereal: counts towards the staple-area minimum of crop_rotation
};
const std::vector<Crop>& crop_pool() {
  static const std::vector<Crop> kCrops = {
      {"Wheat", true},    {"Corn", true},     {"Barley", true},   {"Oats", true},       {"Rye", true},     {"Sorghum", true},
      {"Soybean", false}, {"Canola", false},  {"Potato", false},  {"Sunflower", false}, {"Lentil", false}, {"Sugarbeet", false},
      {"Alfalfa", false}, {"Onion", false}};
  return kCrops;
}
const std::vector<std::string>& field_names() {
  static const std::vector<std::string> kFields = {"North_field", "South_field", "Hill_field",  "River_field", "Long_field",
                                                   "Mill_field",  "Oak_field",   "Brook_field", "Stone_field", "Lower_field"};
  return kFields;
}
// Picks n crops (in pool order after a seeded shuffle) with at least two staples and one other crop.
std::vector<Crop> pick_crops(Rng& rng, int n) {
  std::vector<Crop> staples, others;
  for (const auto& c : crop_pool()) (c.staple ? staples : others).push_back(c);
  rng.shuffle(staples);
  rng.shuffle(others);
  int most = std::min(n - 1, int(staples.size()));
  int ns = int(rng.uniform_int(2, std::max(2, most)));
  std::vector<Crop> r(staples.begin(), staples.begin() + ns);
  r.insert(r.end(), others.begin(), others.begin() + (n - ns));
  rng.shuffle(r);
  return r;
}
}  // namespace

Instance make_agriculture(Ctx& c) {
  static const int kC[4] = {3, 4, 6, 8};                                            // crop_mix crops
  static const int kF[4] = {3, 4, 5, 6}, kRC[4] = {3, 4, 4, 5}, kT[4] = {2, 2, 3, 3};  // rotation fields, crops, seasons
  static const std::vector<std::string> kFarms = {"a family farm", "a farming cooperative", "an organic farm", "an estate farm",
                                                  "a market garden"};
  const auto& dom = c.dom;
  Instance in;
  const char* variants[] = {"crop_mix", "crop_rotation"};
  in.variant = variants[c.ri(0, 1)];
  in.name = "agriculture";
  bool rotation = in.variant == "crop_rotation";
  // The story's farm: the domain's organisation when it is agriculture, else a farm.
  std::string farm = dom.name == "agriculture" ? c.org() : c.rng.pick(kFarms);
  std::string cu = dom.currency;
  auto& m = in.model;

  if (!rotation) {
    int nc = c.size(kC);
    auto crops = pick_crops(c.rng, nc);
    std::vector<std::string> names;
    for (const auto& cr : crops) names.push_back(cr.name);
    int C = in.add_set("C", "crops", "crops", names);
    std::vector<double> profit(static_cast<size_t>(nc)), water(static_cast<size_t>(nc)), labour(static_cast<size_t>(nc)), lo(size_t(nc), 0.0), hi(static_cast<size_t>(nc));
    double land = 0, w0 = 0, h0 = 0;
    for (size_t k = 0; k < size_t(nc); ++k) {
      water[k] = std::round(c.ru(1.0, 6.0) * 10) / 10;  // thousand m3 per hectare
      profit[k] = std::round((150 + water[k] * c.ru(60, 140)) / 10) * 10;
      labour[k] = double(c.ri(6, 40));
      double planted = double(c.ri(10, 60));
      hi[k] = planted + double(c.ri(10, 50));                              // market limit
      if (c.rng.uniform() < 0.4) lo[k] = std::floor(planted * c.ru(0.3, 0.8));  // contracted minimum
      land += planted, w0 += water[k] * planted, h0 += labour[k] * planted;
    }
    double L = std::ceil(land * c.ru(1.0, 1.1)), W = std::ceil(w0 * c.ru(0.95, 1.05)), H = std::ceil(h0 * c.ru(1.0, 1.15));
    // W may sit below the planted plan's use; the contracted minimums alone must still fit.
    double wmin = 0;
    for (size_t k = 0; k < size_t(nc); ++k) wmin += water[k] * lo[k];
    W = std::max(W, std::ceil(wmin * 1.1));
    in.add_param("p[c]", "profit", "profit per hectare", cu + " per hectare", {C}, profit);
    in.add_param("w[c]", "water_use", "irrigation water per hectare", "thousand m3 per hectare", {C}, water, 1);
    in.add_param("h[c]", "labour_use", "labour per hectare", "hours per hectare", {C}, labour);
    in.add_param("lo[c]", "min_area", "contracted minimum area", "hectares", {C}, lo);
    in.add_param("hi[c]", "max_area", "market limit (largest area that can be sold)", "hectares", {C}, hi);
    in.add_param("L", "land", "land available", "hectares", {}, {L});
    in.add_param("W", "water", "irrigation water available", "thousand m3", {}, {W});
    in.add_param("H", "labour", "labour available", "hours", {}, {H});

    in.vars.push_back({"a[c]", "hectares planted with crop c", "continuous, lo[c] <= a[c] <= hi[c]"});
    in.sense = lp::ObjSense::Maximize;
    in.objective_formula = "maximize sum_{c in C} p[c] * a[c]";
    in.objective_description = "total profit";
    in.objective_unit = cu;
    in.constraints.push_back({"land", "sum_{c in C} a[c] <= L", "the crops fit on the land"});
    in.constraints.push_back({"water", "sum_{c in C} w[c] * a[c] <= W", "irrigation stays within the water available"});
    in.constraints.push_back({"labour", "sum_{c in C} h[c] * a[c] <= H", "the work fits the labour available"});

    m.objective.sense = lp::ObjSense::Maximize;
    std::vector<lp::Term> tl, tw, th;
    for (int k = 0; k < nc; ++k) {
      int v = m.add_var("a_" + names[size_t(k)], lp::VarType::Continuous, lo[size_t(k)], hi[size_t(k)]);
      m.objective.terms.push_back({v, profit[size_t(k)]});
      tl.push_back({v, 1.0}), tw.push_back({v, water[size_t(k)]}), th.push_back({v, labour[size_t(k)]});
    }
    add_row(m, "land", tl, lp::RowSense::LE, L);
    add_row(m, "water", tw, lp::RowSense::LE, W);
    add_row(m, "labour", th, lp::RowSense::LE, H);

    // Narrative scenarios: planning the season's sowing, a land lease, a water-allocation cut.
    int scen = c.scenario(3);
    std::string cl = std::to_string(nc) + " crops (" + label_list(names) + ")";
    if (scen == 0)
      in.intro = capitalize(farm) + c.x(" {plans|is planning|decides} {the sowing for the coming " + dom.period + "|next " + dom.period + "'s planting}: ") +
                 fmt_num(L) + c.x(" hectares {can be planted with|are available for} ") + cl + ".";
    else if (scen == 1)
      in.intro = c.x("{After leasing|Having taken over} ") + fmt_num(L) + c.x(" hectares of farmland, ") + farm +
                 c.x(" {must decide|wants to decide} how much of it to {sow with|give to} each of ") + cl + ".";
    else
      in.intro = c.x("{The irrigation allowance of|Water rights for} ") + farm + c.x(" {are limited|have been cut} this " + dom.period + "; it {grows|can grow} ") + cl +
                 c.x(" and {must divide|has to split} its land and water between them.");
    in.rules.push_back(c.x("{The total area planted may not exceed the land available|All crops together must fit on the available land}."));
    in.rules.push_back(c.x("{Irrigation water and labour are limited: each crop uses them per hectare, and the totals may not exceed what is available|"
                           "The water and the labour the crops need per hectare, summed over all crops, must stay within the amounts available}."));
    in.rules.push_back(c.x("{Each crop's area must lie between its contracted minimum and its market limit|"
                           "No crop may exceed its market limit, and contracted minimum areas must be met}") +
                       c.x("{; areas may be fractional.|, in hectares (fractions allowed).}"));
    in.goal = c.x("{Maximize|Choose the areas that maximize|Plan the planting to maximize} total profit (in " + cu + ").");

    in.python_body =
        "model = gp.Model(\"agriculture\")\n"
        "a = {c: model.addVar(lb=min_area[c], ub=max_area[c], vtype=GRB.CONTINUOUS, name=f\"a_{c}\") for c in crops}\n"
        "model.setObjective(gp.quicksum(profit[c] * a[c] for c in crops), GRB.MAXIMIZE)\n"
        "model.addConstr(gp.quicksum(a[c] for c in crops) <= land, name=\"land\")\n"
        "model.addConstr(gp.quicksum(water_use[c] * a[c] for c in crops) <= water, name=\"water\")\n"
        "model.addConstr(gp.quicksum(labour_use[c] * a[c] for c in crops) <= labour, name=\"labour\")\n";
    return in;
  }

  int nf = c.size(kF), nc = c.size(kRC, 0), nt = kT[c.level()];
  auto crops = pick_crops(c.rng, nc);
  auto fields = pick_labels(c.rng, field_names(), nf);
  std::vector<std::string> names, seasons;
  for (const auto& cr : crops) names.push_back(cr.name);
  for (int t = 1; t <= nt; ++t) seasons.push_back("Season" + std::to_string(t));
  int F = in.add_set("F", "fields", "fields", fields);
  int C = in.add_set("C", "crops", "crops", names);
  in.add_set("T", "seasons", "seasons", seasons);
  std::vector<double> area(static_cast<size_t>(nf)), profit(static_cast<size_t>(nc)), irrigated(static_cast<size_t>(nc)), staple(static_cast<size_t>(nc)), last(size_t(nf) * size_t(nc), 0.0);
  for (auto& a : area) a = double(c.ri(4, 30));
  for (size_t k = 0; k < size_t(nc); ++k) {
    staple[k] = crops[k].staple ? 1.0 : 0.0;
    // Irrigated crops (most non-staples) earn more, so the irrigation row binds. The seasonal rows count
    // fields, not hectares: area-weighted rows made CBC seconds-long knapsacks at 100 binaries.
    irrigated[k] = (crops[k].staple ? c.rng.uniform() < 0.3 : c.rng.uniform() < 0.8) ? 1.0 : 0.0;
    profit[k] = std::round(c.ru(irrigated[k] != 0.0 ? 280 : 180, irrigated[k] != 0.0 ? 450 : 320) / 10) * 10;
  }
  // Planted plan: every field grows a crop in every season, never the crop of the season before; in
  // season t field t % nf grows a staple (two staples exist, so one differs from its previous crop).
  std::vector<int> prev(static_cast<size_t>(nf)), plan(size_t(nf) * size_t(nt));
  for (int f = 0; f < nf; ++f) prev[size_t(f)] = int(c.ri(0, nc - 1)), last[size_t(f * nc + prev[size_t(f)])] = 1.0;
  for (int t = 0; t < nt; ++t)
    for (int f = 0; f < nf; ++f) {
      std::vector<int> ok;
      for (int k = 0; k < nc; ++k)
        if (k != prev[size_t(f)] && (f != t % nf || crops[size_t(k)].staple)) ok.push_back(k);
      prev[size_t(f)] = plan[size_t(t * nf + f)] = c.rng.pick(ok);
    }
  double smin = 1e18, imax = 0;
  for (int t = 0; t < nt; ++t) {
    double s = 0, w = 0;
    for (int f = 0; f < nf; ++f) {
      int k = plan[size_t(t * nf + f)];
      s += staple[size_t(k)], w += irrigated[size_t(k)];
    }
    smin = std::min(smin, s), imax = std::max(imax, w);
  }
  double K = std::max(1.0, smin - double(c.ri(0, 1))), R = std::max(1.0, imax);
  in.add_param("A[f]", "field_area", "field area", "hectares", {F}, area);
  in.add_param("p[c]", "profit", "profit per hectare and season", cu + " per hectare", {C}, profit);
  in.add_param("ir[c]", "irrigated", "irrigation flag (1: the crop needs irrigation)", "", {C}, irrigated);
  in.add_param("st[c]", "staple", "staple flag (1: a staple cereal)", "", {C}, staple);
  in.add_param("g[f,c]", "last_crop", "last season's crop (1: the field grew the crop in the season before the first)", "", {F, C}, last);
  in.add_param("K", "min_staple_fields", "fields that must grow a staple crop every season", "fields", {}, {K});
  in.add_param("R", "max_irrigated_fields", "fields the irrigation system can serve per season", "fields", {}, {R});

  in.vars.push_back({"x[f,c,t]", "1 if field f grows crop c in season t, else 0", "binary"});
  in.sense = lp::ObjSense::Maximize;
  in.objective_formula = "maximize sum_{f,c,t} p[c] * A[f] * x[f,c,t]";
  in.objective_description = "total profit";
  in.objective_unit = cu;
  in.constraints.push_back({"one_crop", "sum_{c in C} x[f,c,t] <= 1   for all f in F, t in T", "a field grows at most one crop per season"});
  in.constraints.push_back({"rotation", "x[f,c,t] + x[f,c,t-1] <= 1   for all f, c, t (x[f,c,0] = g[f,c])",
                            "no crop is grown on a field two seasons in a row"});
  in.constraints.push_back({"staple", "sum_{f in F} sum_{c in C} st[c] * x[f,c,t] >= K   for all t in T",
                            "every season at least K fields grow a staple crop"});
  in.constraints.push_back({"irrigation", "sum_{f in F} sum_{c in C} ir[c] * x[f,c,t] <= R   for all t in T",
                            "every season at most R fields grow irrigated crops"});

  m.objective.sense = lp::ObjSense::Maximize;
  auto idx = [&](int f, int k, int t) { return (f * nc + k) * nt + t; };
  for (int f = 0; f < nf; ++f)
    for (int k = 0; k < nc; ++k)
      for (int t = 0; t < nt; ++t)
        m.objective.terms.push_back({m.add_var("x_" + fields[size_t(f)] + "_" + names[size_t(k)] + "_" + seasons[size_t(t)], lp::VarType::Binary, 0, 1),
                                     profit[size_t(k)] * area[size_t(f)]});
  for (int f = 0; f < nf; ++f)
    for (int t = 0; t < nt; ++t) {
      std::vector<lp::Term> terms;
      for (int k = 0; k < nc; ++k) terms.push_back({idx(f, k, t), 1.0});
      add_row(m, "one_crop_" + fields[size_t(f)] + "_" + seasons[size_t(t)], terms, lp::RowSense::LE, 1.0);
    }
  for (int f = 0; f < nf; ++f)
    for (int k = 0; k < nc; ++k)
      for (int t = 0; t < nt; ++t) {
        std::vector<lp::Term> terms = {{idx(f, k, t), 1.0}};
        if (t > 0) terms.push_back({idx(f, k, t - 1), 1.0});
        double rhs = t > 0 ? 1.0 : 1.0 - last[size_t(f * nc + k)];
        add_row(m, "rotation_" + fields[size_t(f)] + "_" + names[size_t(k)] + "_" + seasons[size_t(t)], terms, lp::RowSense::LE, rhs);
      }
  for (int t = 0; t < nt; ++t) {
    std::vector<lp::Term> ts, tw;
    for (int f = 0; f < nf; ++f)
      for (int k = 0; k < nc; ++k) {
        ts.push_back({idx(f, k, t), staple[size_t(k)]});  // zero terms are dropped
        tw.push_back({idx(f, k, t), irrigated[size_t(k)]});
      }
    add_row(m, "staple_" + seasons[size_t(t)], ts, lp::RowSense::GE, K);
    add_row(m, "irrigation_" + seasons[size_t(t)], tw, lp::RowSense::LE, R);
  }

  // Narrative scenarios: a multi-season cropping plan, a rotation for soil health, a contract for staples.
  int scen = c.scenario(3);
  std::string fl = std::to_string(nf) + " fields (" + label_list(fields) + ")";
  std::string cl = std::to_string(nc) + " crops (" + label_list(names) + ")";
  std::string tl = std::to_string(nt) + " seasons";
  if (scen == 0)
    in.intro = capitalize(farm) + c.x(" {plans|draws up} a cropping plan for its ") + fl + c.x(" over the next ") + tl + c.x(", choosing among ") + cl + ".";
  else if (scen == 1)
    in.intro = c.x("{To keep its soil healthy|To break pest and disease cycles}, ") + farm + c.x(" {rotates|alternates} ") + cl + c.x(" on its ") + fl +
               c.x(" and {plans|fixes} the next ") + tl + ".";
  else
    in.intro = capitalize(farm) + c.x(" {has promised|is committed} to {supply|deliver} staple grain every season; it {farms|works} ") + fl +
               c.x(" and {can grow|chooses among} ") + cl + c.x(" over the next ") + tl + ".";
  in.rules.push_back(c.x("{Each field grows at most one crop per season (it may lie fallow)|In every season a field is either sown with one crop or left fallow}") +
                     c.x("{, and the whole field is used.|; a sown field is planted entirely.}"));
  in.rules.push_back(c.x("{The same crop may not be grown on a field in two consecutive seasons|No field grows the same crop two seasons in a row}") +
                     c.x("{, including the crop it grew in the season before the first|; the crops of the season before the first count}."));
  in.rules.push_back(c.x("{In every season at least the minimum number of fields must grow a staple (cereal) crop|"
                         "Every season at least the required number of fields is sown with staple crops}") +
                     c.x("{, and at most the number of fields the irrigation system serves may grow irrigated crops.|; "
                         "crops that need irrigation may be grown on no more fields per season than the irrigation system serves.}"));
  in.goal = c.x("{Maximize|Choose the plan that maximizes|Plan the rotation to maximize} total profit over the " + tl + " (in " + cu + ").");

  in.python_body =
      "model = gp.Model(\"agriculture\")\n"
      "x = {}\n"
      "for f in fields:\n"
      "    for c in crops:\n"
      "        for t in seasons:\n"
      "            x[f, c, t] = model.addVar(vtype=GRB.BINARY, name=f\"x_{f}_{c}_{t}\")\n"
      "model.setObjective(gp.quicksum(profit[c] * field_area[f] * x[f, c, t] for f in fields for c in crops for t in seasons), GRB.MAXIMIZE)\n"
      "for f in fields:\n"
      "    for t in seasons:\n"
      "        model.addConstr(gp.quicksum(x[f, c, t] for c in crops) <= 1, name=f\"one_crop_{f}_{t}\")\n"
      "for f in fields:\n"
      "    for c in crops:\n"
      "        for k, t in enumerate(seasons):\n"
      "            previous = x[f, c, seasons[k - 1]] if k > 0 else last_crop[f][c]\n"
      "            model.addConstr(x[f, c, t] + previous <= 1, name=f\"rotation_{f}_{c}_{t}\")\n"
      "for t in seasons:\n"
      "    model.addConstr(gp.quicksum(staple[c] * x[f, c, t] for f in fields for c in crops) >= min_staple_fields, name=f\"staple_{t}\")\n"
      "    model.addConstr(gp.quicksum(irrigated[c] * x[f, c, t] for f in fields for c in crops) <= max_irrigated_fields, name=f\"irrigation_{t}\")\n";
  return in;
}

}  // namespace trex::ordata::detail
