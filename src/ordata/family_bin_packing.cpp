// Bin-packing family (task families: packing, cutting stock): pack items into the fewest identical
// bins (assignment binaries, capacity linked to a bin-used binary), or cut pieces of several widths
// from the fewest stock rolls (the Kantorovich model: integer pieces per roll). The number of bins or
// rolls available is the first-fit-decreasing count plus one, so every draw is feasible and the
// trivial "use everything" pattern is never optimal; x[i,b] <= d[i] y[b] rows tighten the LP bound and
// y[b] >= y[b+1] rows break the bins' symmetry (CBC proves the optimum in milliseconds).
#include <algorithm>
#include <cmath>
#include <functional>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

namespace {
// Bins used by first-fit decreasing for `sizes` (each <= capacity).
int ffd_bins(std::vector<double> sizes, double capacity) {
  std::sort(sizes.begin(), sizes.end(), std::greater<>());
  std::vector<double> left;
  for (double s : sizes) {
    auto it = std::find_if(left.begin(), left.end(), [&](double l) { return l >= s; });
    if (it == left.end()) left.push_back(capacity - s);
    else *it -= s;
  }
  return int(left.size());
}
}  // namespace

Instance make_bin_packing(Ctx& c) {
  static const int kN[4] = {4, 5, 7, 8}, kT[4] = {2, 3, 3, 4};
  const auto& dom = c.dom;
  Instance in;
  const char* variants[] = {"bin_packing", "cutting_stock"};
  in.variant = variants[c.ri(0, 1)];
  in.name = "bin_packing";
  bool cutting = in.variant == "cutting_stock";
  int n = cutting ? c.size(kT) : c.size(kN);
  double cap = double(c.ri(8, 20) * 10);
  std::vector<double> size(static_cast<size_t>(n)), need(size_t(n), 1.0), pieces;
  for (int i = 0; i < n; ++i) {
    size[size_t(i)] = std::round(cap * c.ru(0.15, cutting ? 0.45 : 0.6));
    if (cutting) need[size_t(i)] = double(c.ri(1, 3));
    for (int k = 0; k < int(need[size_t(i)]); ++k) pieces.push_back(size[size_t(i)]);
  }
  int nb = ffd_bins(pieces, cap) + 1;
  auto items = pick_labels(c.rng, dom.products, n);
  std::vector<std::string> bins;
  for (int b = 1; b <= nb; ++b) bins.push_back((cutting ? "Roll" : "Bin") + std::to_string(b));
  int I = in.add_set("I", "items", cutting ? "piece types" : "items", items);
  in.add_set("B", "bins", cutting ? "stock rolls available" : "bins available", bins);
  std::string u = cutting ? "cm" : dom.unit;
  in.add_param("s[i]", cutting ? "width" : "size", cutting ? "width of a piece" : "size of an item", u, {I}, size);
  if (cutting) in.add_param("d[i]", "pieces", "pieces required", "pieces", {I}, need);
  in.add_param("W", "capacity", cutting ? "roll width" : "bin capacity", u, {}, {cap});

  in.vars.push_back({"y[b]", "1 if bin (roll) b is used, else 0", "binary"});
  in.vars.push_back(cutting ? VarDef{"x[i,b]", "pieces of type i cut from roll b", "integer, 0 <= x[i,b] <= d[i]"}
                            : VarDef{"x[i,b]", "1 if item i is packed into bin b, else 0", "binary"});
  in.sense = lp::ObjSense::Minimize;
  in.objective_formula = "minimize sum_{b in B} y[b]";
  in.objective_description = cutting ? "stock rolls used" : "bins used";
  in.objective_unit = cutting ? "rolls" : "bins";
  in.constraints.push_back(cutting ? ConDef{"demand", "sum_{b in B} x[i,b] >= d[i]   for all i in I", "every piece type is cut as often as required"}
                                   : ConDef{"assign", "sum_{b in B} x[i,b] = 1   for all i in I", "every item goes into exactly one bin"});
  in.constraints.push_back({"capacity", "sum_{i in I} s[i] * x[i,b] - W * y[b] <= 0   for all b in B", "a bin holds only what fits, and only if used"});
  in.constraints.push_back({"link", cutting ? "x[i,b] - d[i] * y[b] <= 0   for all i, b" : "x[i,b] - y[b] <= 0   for all i, b",
                            "nothing is assigned to an unused bin (a tighter form of the capacity link)"});
  in.constraints.push_back({"order", "y[b] - y[b+1] >= 0   for consecutive bins", "bins are used in order (symmetry breaking)"});

  auto& m = in.model;
  m.objective.sense = lp::ObjSense::Minimize;
  for (int b = 0; b < nb; ++b) m.objective.terms.push_back({m.add_var("y_" + bins[size_t(b)], lp::VarType::Binary, 0, 1), 1.0});
  for (int i = 0; i < n; ++i)
    for (int b = 0; b < nb; ++b)
      m.add_var("x_" + items[size_t(i)] + "_" + bins[size_t(b)], cutting ? lp::VarType::Integer : lp::VarType::Binary, 0, need[size_t(i)]);
  auto xv = [&](int i, int b) { return nb + i * nb + b; };
  for (int i = 0; i < n; ++i) {
    std::vector<lp::Term> t;
    for (int b = 0; b < nb; ++b) t.push_back({xv(i, b), 1.0});
    add_row(m, (cutting ? "demand_" : "assign_") + items[size_t(i)], t, cutting ? lp::RowSense::GE : lp::RowSense::EQ, need[size_t(i)]);
  }
  for (int b = 0; b < nb; ++b) {
    std::vector<lp::Term> t;
    for (int i = 0; i < n; ++i) t.push_back({xv(i, b), size[size_t(i)]});
    t.push_back({b, -cap});
    add_row(m, "capacity_" + bins[size_t(b)], t, lp::RowSense::LE, 0.0);
  }
  for (int i = 0; i < n; ++i)
    for (int b = 0; b < nb; ++b)
      add_row(m, "link_" + items[size_t(i)] + "_" + bins[size_t(b)], {{xv(i, b), 1.0}, {b, -need[size_t(i)]}}, lp::RowSense::LE, 0.0);
  for (int b = 0; b + 1 < nb; ++b) add_row(m, "order_" + bins[size_t(b)], {{b, 1.0}, {b + 1, -1.0}}, lp::RowSense::GE, 0.0);

  // Narrative scenarios: loading containers/trucks, batching jobs on a machine, cutting raw stock.
  int scen = c.scenario(3);
  std::string il = std::to_string(n) + (cutting ? " piece types (" : " items (") + label_list(items) + ")";
  if (cutting) {
    const char* stock = scen == 0 ? "rolls" : (scen == 1 ? "boards" : "bars");
    in.intro = capitalize(c.org()) + c.x(" {cuts|must cut|needs to cut} ") + il + c.x(" from standard " + std::string(stock) + " of equal width; ") +
               std::to_string(nb) + c.x(" {stock pieces|of them} are {in stock|available}.");
    in.rules.push_back(c.x("{Each piece type must be cut at least as often as required|The required number of pieces of every type must be produced}") +
                       c.x("{, and|;} {the pieces cut from one stock piece cannot be wider than it in total|the widths cut from a stock piece add up to at most its width}."));
    in.rules.push_back(c.x("{Only stock pieces that are used can be cut, and they are used in their numbering order|Stock pieces are taken in order; an unused one yields nothing}."));
    in.goal = c.x("{Minimize|Find the cutting plan that minimizes} the number of stock pieces used.");
  } else {
    const char* box = scen == 0 ? "containers" : (scen == 1 ? "trucks" : "batches");
    in.intro = capitalize(c.org()) + c.x(" {must pack|has to load|groups} ") + il + c.x(" into identical " + std::string(box) + " of equal capacity; ") +
               std::to_string(nb) + c.x(" of them {are available|can be used}.");
    in.rules.push_back(c.x("{Every item goes into exactly one " + std::string(box) + "|Each item is placed whole in a single " + std::string(box) + "}") +
                       c.x("{, and|;} {the items in one " + std::string(box) + " may not exceed its capacity|a " + std::string(box) + "'s load is limited by its capacity}."));
    in.rules.push_back(c.x("{Only used " + std::string(box) + " can hold items, and they are used in their numbering order|" +
                           capitalize(std::string(box)) + " are filled in order; an unused one holds nothing}."));
    in.goal = c.x("{Minimize|Find the packing that minimizes} the number of " + std::string(box) + " used.");
  }

  std::string xt = cutting ? "lb=0, ub=pieces[i], vtype=GRB.INTEGER" : "vtype=GRB.BINARY";
  std::string key = cutting ? "width" : "size";
  in.python_body =
      "model = gp.Model(\"bin_packing\")\n"
      "y = {b: model.addVar(vtype=GRB.BINARY, name=f\"y_{b}\") for b in bins}\n"
      "x = {}\n"
      "for i in items:\n"
      "    for b in bins:\n"
      "        x[i, b] = model.addVar(" + xt + ", name=f\"x_{i}_{b}\")\n"
      "model.setObjective(gp.quicksum(y[b] for b in bins), GRB.MINIMIZE)\n"
      "for i in items:\n" +
      std::string(cutting ? "    model.addConstr(gp.quicksum(x[i, b] for b in bins) >= pieces[i], name=f\"demand_{i}\")\n"
                          : "    model.addConstr(gp.quicksum(x[i, b] for b in bins) == 1, name=f\"assign_{i}\")\n") +
      "for b in bins:\n"
      "    model.addConstr(gp.quicksum(" + key + "[i] * x[i, b] for i in items) - capacity * y[b] <= 0, name=f\"capacity_{b}\")\n"
      "for i in items:\n"
      "    for b in bins:\n"
      "        model.addConstr(x[i, b] - " + std::string(cutting ? "pieces[i]" : "1") + " * y[b] <= 0, name=f\"link_{i}_{b}\")\n"
      "for k in range(len(bins) - 1):\n"
      "    model.addConstr(y[bins[k]] - y[bins[k + 1]] >= 0, name=f\"order_{bins[k]}\")\n";
  return in;
}

}  // namespace trex::ordata::detail
