// Hand-written LP texts for every construct the reader accepts and every error it raises
// (each error message must carry line and column).
#include <gtest/gtest.h>

#include <string>

#include "lp/lp_format.hpp"
#include "util/error.hpp"

namespace trex::lp {
namespace {

Model read(const std::string& text) { return read_lp_string(text, "t.lp"); }

const Row& row(const Model& m, const std::string& name) {
  for (const auto& r : m.rows)
    if (r.name == name) return r;
  throw std::runtime_error("no row " + name);
}
double coef(const Row& r, const Model& m, const std::string& var) {
  int v = m.find_var(var);
  for (const auto& t : r.terms)
    if (t.var == v) return t.coef;
  return 0.0;
}

// Expects a trex::Error whose message contains `needle` and the location "t.lp:line:col".
void expect_error(const std::string& text, long line, long col, const std::string& needle) {
  try {
    read(text);
    ADD_FAILURE() << "accepted:\n" << text;
  } catch (const Error& e) {
    std::string what = e.what();
    std::string loc = "t.lp:" + std::to_string(line) + ":" + std::to_string(col) + ":";
    EXPECT_NE(what.find(loc), std::string::npos) << "expected " << loc << " in: " << what;
    EXPECT_NE(what.find(needle), std::string::npos) << "expected '" << needle << "' in: " << what;
    EXPECT_EQ(e.where().line, line) << what;
    EXPECT_EQ(e.where().column, col) << what;
  }
}

TEST(LpReader, GurobiStyleFile) {
  Model m = read(
      "\\ Model Blending\n"
      "\\ LP format - for model browsing. Use MPS format to capture full model detail.\n"
      "Minimize\n"
      "  93.09 x[0] + 21.6 x[1] - 3e-2 y#1#2\n"
      "   + 4.389e+08 Constant\n"
      "Subject To\n"
      " c1: x[0] + x[1] <= 820.9\n"
      " c2: - 0.6 x[0] <= 0\n"
      " long: 3.75 x[0] + 7.1 x[1]\n"
      "   + flow[Nod1_2,Nod3_4]\n"
      "   >= 35\n"
      " empty: <= -1\n"
      "Bounds\n"
      " Constant = 1\n"
      " x[1] free\n"
      " 2 <= y#1#2 <= 5\n"
      "Binaries\n"
      " b\n"
      "Generals\n"
      " flow[Nod1_2,Nod3_4]\n"
      "End\n");
  EXPECT_EQ(m.name, "Blending");
  EXPECT_EQ(m.objective.sense, ObjSense::Minimize);
  ASSERT_EQ(m.num_vars(), 6);
  EXPECT_EQ(m.vars[0].name, "x[0]");
  EXPECT_EQ(m.vars[2].name, "y#1#2");
  EXPECT_EQ(m.vars[3].name, "Constant");
  EXPECT_EQ(m.vars[4].name, "flow[Nod1_2,Nod3_4]");
  EXPECT_EQ(m.vars[5].name, "b");
  ASSERT_EQ(m.objective.terms.size(), 4u);
  EXPECT_DOUBLE_EQ(m.objective.terms[2].coef, -3e-2);
  EXPECT_DOUBLE_EQ(m.objective.terms[3].coef, 4.389e8);
  EXPECT_EQ(m.objective.constant, 0.0);
  ASSERT_EQ(m.num_rows(), 4);
  EXPECT_EQ(row(m, "c2").terms.size(), 1u);
  EXPECT_DOUBLE_EQ(coef(row(m, "c2"), m, "x[0]"), -0.6);
  EXPECT_EQ(row(m, "long").sense, RowSense::GE);
  EXPECT_EQ(row(m, "long").rhs, 35.0);
  EXPECT_EQ(row(m, "long").terms.size(), 3u);
  EXPECT_TRUE(row(m, "empty").terms.empty());
  EXPECT_EQ(row(m, "empty").rhs, -1.0);
  EXPECT_EQ(m.vars[3].lb, 1.0);
  EXPECT_EQ(m.vars[3].ub, 1.0);
  EXPECT_EQ(m.vars[1].lb, -kInf);
  EXPECT_EQ(m.vars[1].ub, kInf);
  EXPECT_EQ(m.vars[2].lb, 2.0);
  EXPECT_EQ(m.vars[2].ub, 5.0);
  EXPECT_EQ(m.vars[5].type, VarType::Binary);
  EXPECT_EQ(m.vars[5].ub, 1.0);
  EXPECT_EQ(m.vars[4].type, VarType::Integer);
  EXPECT_EQ(m.vars[0].lb, 0.0);
  EXPECT_EQ(m.vars[0].ub, kInf);
}

TEST(LpReader, KeywordAliasesAreCaseInsensitive) {
  for (const char* obj : {"MAXIMIZE", "maximum", "Max"}) {
    for (const char* st : {"Subject To", "such that", "st", "S.T.", "subject   to", "ST."}) {
      std::string t = std::string(obj) + "\n x + y\n" + st + "\n c: x + y <= 1\nbound\n x <= 3\nEND\n";
      Model m = read(t);
      EXPECT_EQ(m.objective.sense, ObjSense::Maximize) << t;
      EXPECT_EQ(m.num_rows(), 1) << t;
      EXPECT_EQ(m.vars[0].ub, 3.0) << t;
    }
  }
  for (const char* obj : {"minimize", "MIN", "Minimum"}) {
    Model m = read(std::string(obj) + " x\nst\n x >= 1\nend");
    EXPECT_EQ(m.objective.sense, ObjSense::Minimize);
  }
  for (const char* bin : {"Binaries", "binary", "BIN"}) {
    Model m = read("min\n x\nst\n x + y >= 1\n" + std::string(bin) + "\n x\nend\n");
    EXPECT_EQ(m.vars[0].type, VarType::Binary);
  }
  for (const char* gen : {"Generals", "general", "GEN", "Integers", "integer", "int"}) {
    Model m = read("min\n x\nst\n x + y >= 1\n" + std::string(gen) + "\n x y\nend\n");
    EXPECT_EQ(m.vars[0].type, VarType::Integer);
    EXPECT_EQ(m.vars[1].type, VarType::Integer);
  }
}

TEST(LpReader, OperatorsAndSenses) {
  Model m = read(
      "min\n x\nst\n a: x <= 1\n b: x =< 2\n c: x < 3\n d: x >= 4\n e: x => 5\n f: x > 6\n g: x = 7\nend\n");
  const RowSense want[] = {RowSense::LE, RowSense::LE, RowSense::LE, RowSense::GE,
                           RowSense::GE, RowSense::GE, RowSense::EQ};
  ASSERT_EQ(m.num_rows(), 7);
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(m.rows[size_t(i)].sense, want[i]) << i;
    EXPECT_EQ(m.rows[size_t(i)].rhs, double(i + 1));
  }
}

TEST(LpReader, UnnamedRowsAndObjectiveName) {
  Model m = read("Maximize\n profit: 3 x + 2 y\nSubject To\n x + y <= 4\n R1: x <= 3\n - y >= -5\nEnd\n");
  EXPECT_EQ(m.objective.name, "profit");
  ASSERT_EQ(m.num_rows(), 3);
  EXPECT_EQ(m.rows[0].name, "R1_1");  // R1 is taken by the explicit name
  EXPECT_EQ(m.rows[1].name, "R1");
  EXPECT_EQ(m.rows[2].name, "R3");
  EXPECT_EQ(m.rows[2].terms[0].coef, -1.0);
  EXPECT_EQ(m.rows[2].rhs, -5.0);
}

TEST(LpReader, OperatorAndRhsOnContinuationLines) {
  Model m = read("min\n x\nst\n c: x + y\n   <=\n   10\n d: x\n + y\n = 3\nend\n");
  ASSERT_EQ(m.num_rows(), 2);
  EXPECT_EQ(m.rows[0].rhs, 10.0);
  EXPECT_EQ(m.rows[1].terms.size(), 2u);
  EXPECT_EQ(m.rows[1].sense, RowSense::EQ);
}

TEST(LpReader, DuplicateTermsAreMerged) {
  Model m = read("min\n x + 2 y - x + 3 x\nst\n c: x + y + 2 x - y <= 1\nend\n");
  ASSERT_EQ(m.objective.terms.size(), 2u);
  EXPECT_EQ(m.objective.terms[0].coef, 3.0);
  EXPECT_EQ(m.objective.terms[1].coef, 2.0);
  ASSERT_EQ(m.rows[0].terms.size(), 2u);
  EXPECT_EQ(m.rows[0].terms[0].coef, 3.0);
  EXPECT_EQ(m.rows[0].terms[1].coef, 0.0);  // merged to zero: kept, never dropped
}

TEST(LpReader, ConstantsOnTheLeftAndInTheObjective) {
  Model m = read("min\n 2 x + 5 - 1.5\nst\n c: x + 3 <= 10\n d: 4 <= 6\n e: - 2 + x >= 0\nend\n");
  EXPECT_EQ(m.objective.constant, 3.5);
  EXPECT_EQ(row(m, "c").rhs, 7.0);
  EXPECT_TRUE(row(m, "d").terms.empty());
  EXPECT_EQ(row(m, "d").rhs, 2.0);
  EXPECT_EQ(row(m, "e").rhs, 2.0);
}

TEST(LpReader, RangedRows) {
  Model m = read("min\n x\nst\n r: -5 <= x + y <= 5\n s: 10 >= 2 x >= 1\n t: 1 <= x + 1 <= 3\nend\n");
  EXPECT_EQ(row(m, "r").sense, RowSense::Range);
  EXPECT_EQ(row(m, "r").rhs, -5.0);
  EXPECT_EQ(row(m, "r").range_upper, 5.0);
  EXPECT_EQ(row(m, "s").rhs, 1.0);
  EXPECT_EQ(row(m, "s").range_upper, 10.0);
  EXPECT_EQ(row(m, "t").rhs, 0.0);
  EXPECT_EQ(row(m, "t").range_upper, 2.0);
}

TEST(LpReader, ScientificNotation) {
  Model m = read("min\n 4.389e+08 x + 1E-3 y + .5 z + 2. w\nst\n c: 1.5664279467186848e-04 x <= 1e10\nend\n");
  EXPECT_EQ(m.objective.terms[0].coef, 4.389e8);
  EXPECT_EQ(m.objective.terms[1].coef, 1e-3);
  EXPECT_EQ(m.objective.terms[2].coef, 0.5);
  EXPECT_EQ(m.objective.terms[3].coef, 2.0);
  EXPECT_EQ(m.rows[0].terms[0].coef, 1.5664279467186848e-04);
  EXPECT_EQ(m.rows[0].rhs, 1e10);
}

TEST(LpReader, BoundForms) {
  Model m = read(
      "min\n a + b + c + d + e + f + g + h + i + j\nst\n c0: a >= 0\nBounds\n"
      " a free\n b >= -3\n c <= 7\n -2 <= d <= 4\n e = 2.5\n -inf <= f\n g >= -Infinity\n"
      " -INF <= h <= +inf\n 3 >= i\n 5 >= j >= 1\n i <= 8\nEnd\n");
  auto v = [&](const char* n) { return m.vars[size_t(m.find_var(n))]; };
  EXPECT_EQ(v("a").lb, -kInf);
  EXPECT_EQ(v("a").ub, kInf);
  EXPECT_EQ(v("b").lb, -3.0);
  EXPECT_EQ(v("b").ub, kInf);
  EXPECT_EQ(v("c").lb, 0.0);
  EXPECT_EQ(v("c").ub, 7.0);
  EXPECT_EQ(v("d").lb, -2.0);
  EXPECT_EQ(v("d").ub, 4.0);
  EXPECT_EQ(v("e").lb, 2.5);
  EXPECT_EQ(v("e").ub, 2.5);
  EXPECT_EQ(v("f").lb, -kInf);
  EXPECT_EQ(v("g").lb, -kInf);
  EXPECT_EQ(v("h").lb, -kInf);
  EXPECT_EQ(v("h").ub, kInf);
  EXPECT_EQ(v("i").ub, 8.0);  // the later line overrides "3 >= i"
  EXPECT_EQ(v("j").lb, 1.0);
  EXPECT_EQ(v("j").ub, 5.0);
}

TEST(LpReader, NegativeUpperBoundKeepsDefaultLowerBound) {
  Model m = read("max\n x\nst\nbounds\n x <= -1\nend\n");
  EXPECT_EQ(m.vars[0].lb, 0.0);  // Gurobi 12 rule: the model is infeasible, nothing is changed
  EXPECT_EQ(m.vars[0].ub, -1.0);
}

TEST(LpReader, BinariesAreClippedToZeroOne) {
  Model m = read("min\n x + y + z\nst\n c: x + y + z >= 1\nBounds\n x <= 5\n y = 1\n z free\nBinaries\n x y z\nEnd\n");
  EXPECT_EQ(m.vars[0].lb, 0.0);
  EXPECT_EQ(m.vars[0].ub, 1.0);
  EXPECT_EQ(m.vars[1].lb, 1.0);
  EXPECT_EQ(m.vars[1].ub, 1.0);
  EXPECT_EQ(m.vars[2].lb, 0.0);
  EXPECT_EQ(m.vars[2].ub, 1.0);
}

TEST(LpReader, VariablesOnlyInLaterSectionsAreCreated) {
  Model m = read("min\n x\nst\n c: x >= 1\nBounds\n y <= 4\nGenerals\n z\nEnd\n");
  ASSERT_EQ(m.num_vars(), 3);
  EXPECT_EQ(m.vars[1].name, "y");
  EXPECT_EQ(m.vars[2].name, "z");
  EXPECT_EQ(m.vars[2].type, VarType::Integer);
}

TEST(LpReader, QuadraticObjectiveAndRows) {
  Model m = read(
      "Maximize\n 7 x[0] + 2 x[1] + [ 385.4 x[0] * x[1]\n + 4 x[0] ^ 2 - x[1] ^ 2 ] / 2\n"
      "Subject To\n q: [ x[0] * x[1] ] = 0\n r: x[0] + [ - 2 x[0] * x[1] + x[1] * x[0] ] <= 5\n"
      " h: [ 6 x[0] ^ 2 ] / 2 >= 1\nEnd\n");
  ASSERT_EQ(m.objective.quad.size(), 3u);
  EXPECT_EQ(m.objective.quad[0].coef, 385.4 / 2);
  EXPECT_EQ(m.objective.quad[1].var1, 0);
  EXPECT_EQ(m.objective.quad[1].var2, 0);
  EXPECT_EQ(m.objective.quad[1].coef, 2.0);
  EXPECT_EQ(m.objective.quad[2].coef, -0.5);
  ASSERT_EQ(row(m, "q").quad.size(), 1u);
  EXPECT_TRUE(row(m, "q").terms.empty());
  EXPECT_EQ(row(m, "q").quad[0].coef, 1.0);
  ASSERT_EQ(row(m, "r").quad.size(), 1u);  // x0*x1 and x1*x0 merged
  EXPECT_EQ(row(m, "r").quad[0].coef, -1.0);
  EXPECT_EQ(row(m, "r").terms.size(), 1u);
  EXPECT_EQ(row(m, "h").quad[0].coef, 3.0);
  EXPECT_TRUE(m.has_quadratic());
}

TEST(LpReader, MoreQuadraticForms) {
  Model m = read("min\n obj : x - [ x * y - 2 y ^ 2 ] + [ 3 x * x ]\nst\n c: [ x * y ] / 2 + y >= 1\nend\n");
  EXPECT_EQ(m.objective.name, "obj");
  ASSERT_EQ(m.objective.quad.size(), 3u);
  EXPECT_EQ(m.objective.quad[0].coef, -1.0);  // sign before '[' applies to every term, no halving
  EXPECT_EQ(m.objective.quad[1].coef, 2.0);
  EXPECT_EQ(m.objective.quad[2].var1, m.objective.quad[2].var2);
  EXPECT_EQ(m.objective.quad[2].coef, 3.0);
  EXPECT_EQ(m.rows[0].quad[0].coef, 0.5);
  EXPECT_EQ(m.rows[0].terms.size(), 1u);
}

TEST(LpReader, ModelNameFromTheFirstComment) {
  EXPECT_EQ(read("\\ Model  My model \nmin\n x\nend\n").name, "My model");
  EXPECT_EQ(read("\\Problem name: prob.lp\nmin\n x\nend\n").name, "prob.lp");
  EXPECT_EQ(read("\\ something else\nmin\n x\nend\n").name, "");
  EXPECT_EQ(read("\n\\ Model late\nmin\n x\nend\n").name, "");
}

TEST(LpReader, SemiContinuousAndSos) {
  Model m = read(
      "min\n x + y + z\nst\n c: x + y + z >= 1\nBounds\n x <= 10\n y <= 5\nSemi-continuous\n x y\n"
      "Generals\n y\nSOS\n s1: S1 :: x:1 y:2 z:3\n s2: S2:: z : 1.5  x : 2.5\n S1 :: y:-1\nEnd\n");
  EXPECT_EQ(m.vars[0].type, VarType::SemiContinuous);
  EXPECT_EQ(m.vars[1].type, VarType::SemiInteger);
  ASSERT_EQ(m.sos.size(), 3u);
  EXPECT_EQ(m.sos[0].name, "s1");
  EXPECT_EQ(m.sos[0].type, 1);
  ASSERT_EQ(m.sos[0].members.size(), 3u);
  EXPECT_EQ(m.sos[0].members[2].coef, 3.0);
  EXPECT_EQ(m.sos[1].type, 2);
  EXPECT_EQ(m.sos[1].members[0].var, 2);
  EXPECT_EQ(m.sos[1].members[1].coef, 2.5);
  EXPECT_EQ(m.sos[2].name, "");
  EXPECT_EQ(m.sos[2].members[0].coef, -1.0);
  EXPECT_TRUE(m.has_special());
  for (const char* kw : {"semi-continuous", "SEMIS", "semi"})
    EXPECT_EQ(read("min\n x\nst\n c: x >= 1\nbounds\n x <= 3\n" + std::string(kw) + "\n x\nend\n").vars[0].type,
              VarType::SemiContinuous);
}

TEST(LpReader, CommentsAndBlankLinesAnywhere) {
  Model m = read("\\ first\n\nMinimize \\ objective\n x \\ + y\n\n\\ gap\nSubject To\n c: x >= 1 \\ rhs\nEnd \\ done\n");
  EXPECT_EQ(m.objective.terms.size(), 1u);
  EXPECT_EQ(m.rows[0].rhs, 1.0);
}

TEST(LpReader, CrLfLineEnds) {
  Model m = read("Minimize\r\n x + y\r\nSubject To\r\n c: x + y >= 1\r\nBounds\r\n x free\r\nEnd\r\n");
  EXPECT_EQ(m.num_rows(), 1);
  EXPECT_EQ(m.vars[0].lb, -kInf);
}

TEST(LpReader, ErrorsNameLineAndColumn) {
  expect_error("", 1, 1, "expected Minimize or Maximize");
  expect_error("Subject To\n c: x <= 1\nEnd\n", 1, 1, "expected Minimize or Maximize");
  expect_error("min\n x\nst\n c: x <= 1\n", 5, 1, "missing End");
  expect_error("min\n x\nst\n c: x + y\nEnd\n", 5, 1, "expected <=, >= or =");
  expect_error("min\n x\nst\n c: x + y\n d: x <= 1\nEnd\n", 5, 2, "before the next constraint");
  expect_error("min\n x\nst\n c: x y <= 1\nEnd\n", 4, 7, "expected '+' or '-'");
  expect_error("min\n x\nst\n c: x <= 1 2\nEnd\n", 4, 12, "unexpected");
  expect_error("min\n x\nst\n c: x <= y\nEnd\n", 4, 10, "expected a number");
  expect_error("min\n x\nst\n c: x <= inf\nEnd\n", 4, 10, "infinite right-hand side");
  expect_error("min\n x\nst\n c: 3 <= x\nEnd\nx", 5, 1, "ranged form");
  expect_error("min\n x\nst\n c: 1 <= x >= 3\nEnd\n", 4, 12, "both operators");
  expect_error("min\n x\nst\n c: 1 = x = 3\nEnd\n", 4, 7, "ranged constraint");
  expect_error("min\n x\nst\n c: x == 1\nEnd\n", 4, 7, "'=='");
  expect_error("min\n x\nst\n c: b = 1 -> x <= 3\nEnd\n", 4, 11, "indicator");
  expect_error("min\n x\nst\n c: x + + y <= 1\nEnd\n", 4, 9, "two signs");
  expect_error("min\n x\nst\n c: 3 * x <= 1\nEnd\n", 4, 7, "only allowed inside [ ]");
  expect_error("min\n x * y\nst\nEnd\n", 2, 4, "inside [ ]");
  expect_error("min\n x ^ 2\nst\nEnd\n", 2, 4, "inside [ ]");
  expect_error("min\n [ x * y\nst\nEnd\n", 2, 2, "not closed");
  expect_error("min\n [ x ]\nst\nEnd\n", 2, 6, "linear term inside [ ]");
  expect_error("min\n [ x ^ 3 ]\nst\nEnd\n", 2, 8, "'^ 2'");
  expect_error("min\n [ x * y ] / 3\nst\nEnd\n", 2, 14, "'/ 2'");
  expect_error("min\n [ ]\nst\nEnd\n", 2, 4, "empty [ ]");
  expect_error("min\n [ x * y * z ]\nst\nEnd\n", 2, 10, "two variables");
  expect_error("min\n 2x\nst\nEnd\n", 2, 2, "immediately followed");
  expect_error("min\n 1e5000 x\nst\nEnd\n", 2, 2, "out of the range");
  expect_error("min\n x\nst\n c: x <= 1\nBounds\n x >= 1 y\nEnd\n", 6, 9, "unexpected");
  expect_error("min\n x\nst\n c: x <= 1\nBounds\n x\nEnd\n", 7, 1, "'free'");
  expect_error("min\n x\nst\n c: x <= 1\nBounds\n x = inf\nEnd\n", 6, 6, "infinity");
  expect_error("min\n x\nst\n c: x <= 1\nBounds\n 1 <= x >= 0\nEnd\n", 6, 9, "two-sided");
  expect_error("min\n x\nst\n c: x <= 1\nBounds\n <= x\nEnd\n", 6, 2, "unexpected '<=' in Bounds");
  expect_error("min\n x\nst\n c: x <= 1\nBinaries\n x\nGenerals\n x\nEnd\n", 8, 2, "binary");
  expect_error("min\n x\nst\n c: x <= 1\nGenerals\n 3\nEnd\n", 6, 2, "expected a variable name");
  expect_error("min\n x\nst\n c: x <= 1\nSOS\n s1: S3 :: x:1\nEnd\n", 6, 6, "S1 or S2");
  expect_error("min\n x\nst\n c: x <= 1\nSOS\n s1: S1 :: \nEnd\n", 7, 1, "at least one member");
  expect_error("min\n x\nst\n c: x <= 1\nGeneral Constraints\n g: r = MAX ( x , y )\nEnd\n", 5, 1,
               "General Constraints");
  expect_error("min\n x\nst\n c: x <= 1\nLazy Constraints\n c2: x <= 2\nEnd\n", 5, 1, "Lazy");
  expect_error("Minimize multi-objectives\n OBJ0: Priority=1\nEnd\n", 1, 1, "multi-objective");
  expect_error("min\n x\nst\n c: x <= 1\nst\n d: x <= 1\nEnd\n", 5, 1, "second Subject To");
  expect_error("min\n x\nst\n c: x <= 1\nbounds\n x <= 1\nst\n d: x <= 1\nEnd\n", 7, 1, "must come before");
  expect_error("min\n x\nmax\n y\nEnd\n", 3, 1, "second objective");
  expect_error("min\n x\nst\n c: x <= 1\nEnd\n junk\n", 6, 2, "after End");
  expect_error("min\n x\nst\n c: x <= 1\nGenerals\n x\n bin z\nEnd\n", 7, 2, "must stand alone");
  expect_error("min\n x\nst\n c: x <= 1\nBounds x <= 5\nEnd\n", 5, 1, "must stand alone");
  expect_error("min\n x\nst\n c: x\n  end + y <= 1\nEnd\n", 5, 3, "must stand alone");
  expect_error("min\n x\nst\n c: x <= 1\nEnd x\n", 5, 1, "must stand alone");
  expect_error("min\n x + inf\nst\nEnd\n", 2, 6, "keyword");
  expect_error("min\n x <= 3\nst\nEnd\n", 2, 4, "objective");
  expect_error("min\n x ] \nst\nEnd\n", 2, 4, "unexpected");
  expect_error("min\n x + \x01 y\nst\nEnd\n", 2, 6, "control character");
  expect_error("min\n x + (y)\nst\nEnd\n", 2, 6, "unexpected character");
}

TEST(LpReader, ReadFileNamesThePath) {
  try {
    read_lp_file("/nonexistent/dir/model.lp");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/model.lp"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trex::lp
