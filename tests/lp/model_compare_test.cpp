// first_difference finds each kind of difference and is empty for identical models.
#include <gtest/gtest.h>

#include "lp/lp_format.hpp"
#include "lp/model_compare.hpp"

namespace trex::lp {
namespace {

const char* kText =
    "\\ Model m\nMaximize\n obj: 3 x + 2 y + [ x * y ] / 2\nSubject To\n c: x + y <= 4\n r: 1 <= x - y <= 2\n"
    " q: [ x ^ 2 ] <= 9\nBounds\n y <= 3\nGenerals\n x\nSOS\n s: S1 :: x:1 y:2\nEnd\n";

TEST(ModelCompare, IdenticalIsEmpty) {
  Model a = read_lp_string(kText), b = read_lp_string(kText);
  EXPECT_EQ(first_difference(a, b), "");
}

TEST(ModelCompare, FindsEachKindOfDifference) {
  const Model base = read_lp_string(kText);
  auto check = [&](auto edit, const std::string& needle) {
    Model b = base;
    edit(b);
    std::string d = first_difference(base, b);
    EXPECT_NE(d.find(needle), std::string::npos) << "got '" << d << "', wanted '" << needle << "'";
  };
  check([](Model& m) { m.name = "other"; }, "model name");
  check([](Model& m) { m.vars[1].name = "z"; }, "name vs 'z'");
  check([](Model& m) { m.vars[0].type = VarType::Continuous; }, "type");
  check([](Model& m) { m.vars[1].ub = 4; }, "upper bound 3 vs 4");
  check([](Model& m) { m.vars[1].lb = -0.0; }, "lower bound 0 vs -0");
  check([](Model& m) { m.objective.sense = ObjSense::Minimize; }, "objective sense");
  check([](Model& m) { m.objective.name = ""; }, "objective name");
  check([](Model& m) { m.objective.terms[1].coef = 2.0000000000000004; }, "objective terms[1]: coefficient");
  check([](Model& m) { m.objective.quad[0].coef = 1; }, "objective quadratic[0]");
  check([](Model& m) { m.objective.constant = 1; }, "objective constant");
  check([](Model& m) { m.rows[0].rhs = 5; }, "rows[0] 'c': rhs 4 vs 5");
  check([](Model& m) { m.rows[0].sense = RowSense::GE; }, "sense");
  check([](Model& m) { m.rows[1].range_upper = 3; }, "range upper");
  check([](Model& m) { m.rows[2].quad.clear(); }, "quadratic: 1 vs 0");
  check([](Model& m) { m.rows[0].terms.pop_back(); }, "terms: 2 vs 1");
  check([](Model& m) { m.rows.pop_back(); }, "rows: 3 vs 2");
  check([](Model& m) { m.sos[0].members[1].coef = 3; }, "sos[0] 's': members[1]");
  check([](Model& m) { m.sos[0].type = 2; }, "type 1 vs 2");
}

}  // namespace
}  // namespace trex::lp
