// The LP writer: Gurobi-style text, exact round trip (read(write(m)) == m bit for bit) on hand-made
// and seeded random models with every construct, refusal of what cannot be written, atomic files.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <unistd.h>

#include "lp/lp_format.hpp"
#include "lp/model_compare.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"

namespace trex::lp {
namespace {

void expect_round_trip(const Model& m) {
  std::string text = write_lp_string(m);
  Model back;
  try {
    back = read_lp_string(text, "written.lp");
  } catch (const Error& e) {
    FAIL() << e.what() << "\n" << text;
  }
  EXPECT_EQ(first_difference(m, back), "") << text;
  EXPECT_EQ(write_lp_string(back), text);
}

TEST(LpWriter, GurobiStyleText) {
  Model m = read_lp_string(
      "\\ Model demo\nMaximize\n 3 x + 2 y - z + [ 4 x * y + 2 z ^ 2 ] / 2\nSubject To\n c1: x + y <= 4\n"
      " c2: - x + 0.5 z >= -1\n e: <= -1\nBounds\n y <= 3\n z free\n w = 2\nBinaries\n b\nGenerals\n x\nEnd\n");
  std::string t = write_lp_string(m);
  EXPECT_EQ(t,
            "\\ Model demo\n"
            "\\ LP format - written by trex (Gurobi style)\n"
            "Maximize\n"
            "  3 x + 2 y - z + [ 4 x * y + 2 z ^ 2 ] / 2\n"
            "Subject To\n"
            " c1: x + y <= 4\n"
            " c2: - x + 0.5 z >= -1\n"
            " e: <= -1\n"
            "Bounds\n"
            " y <= 3\n"
            " z free\n"
            " w = 2\n"
            " b >= 0\n"
            "Binaries\n"
            " b\n"
            "Generals\n"
            " x\n"
            "End\n");
  expect_round_trip(m);
}

TEST(LpWriter, LongRowsWrapLikeGurobi) {
  std::string text = "Minimize\n";
  for (int i = 0; i < 40; ++i) text += " + 1234.5678 x[" + std::to_string(i) + "]";
  text += "\nSubject To\n c:";
  for (int i = 0; i < 40; ++i) text += " + 3.25 x[" + std::to_string(i) + "]";
  text += " >= 7\nEnd\n";
  Model m = read_lp_string(text);
  std::string t = write_lp_string(m);
  size_t start = 0, continuation = 0;
  while (start < t.size()) {
    size_t end = t.find('\n', start);
    std::string line = t.substr(start, end - start);
    EXPECT_LE(line.size(), 80u) << line;
    if (line.rfind("   + ", 0) == 0) ++continuation;
    start = end + 1;
  }
  EXPECT_GT(continuation, 6u);
  expect_round_trip(m);
}

TEST(LpWriter, ExactDoublesRoundTrip) {
  Model m;
  const double values[] = {0.1, 1.0 / 3.0, 2.0 / 3.0, 1e-300, DBL_MIN, DBL_TRUE_MIN, DBL_MAX, 1e100, 123456789.123456789,
                           4.389432071685700e8, 1.5664279467186848e-04, 5e-324, 0.30000000000000004, 9007199254740993.0};
  int i = 0;
  for (double v : values) {
    int x = m.add_var("x" + std::to_string(i++));
    m.objective.terms.push_back({x, v});
    Row r;
    r.name = "r" + std::to_string(i);
    r.terms.push_back({x, -v});
    r.rhs = v;
    m.rows.push_back(r);
    m.vars[size_t(x)].ub = v;
  }
  m.objective.constant = -0.1;
  expect_round_trip(m);
}

TEST(LpWriter, NegativeZeroIsKept) {
  Model m;
  int x = m.add_var("x");
  m.objective.terms.push_back({x, -0.0});
  m.objective.constant = -0.0;
  Row r;
  r.name = "c";
  r.terms.push_back({x, 0.0});
  r.rhs = -0.0;
  m.rows.push_back(r);
  m.vars[0].lb = -0.0;
  expect_round_trip(m);
  Model back = read_lp_string(write_lp_string(m));
  EXPECT_TRUE(std::signbit(back.objective.terms[0].coef));
  EXPECT_TRUE(std::signbit(back.objective.constant));
  EXPECT_TRUE(std::signbit(back.rows[0].rhs));
  EXPECT_TRUE(std::signbit(back.vars[0].lb));
}

TEST(LpWriter, EveryConstructRoundTrips) {
  Model m = read_lp_string(
      "\\ Model all constructs\nMinimize\n obj: 2 a - b + 7.5 + [ a * b - 3 c ^ 2 ] / 2\nSubject To\n"
      " lin: a + b + c >= 1\n rng: -2 <= a - c <= 8.5\n rng2: 1 <= [ a * c ] <= 2\n q: b + [ a ^ 2 + b * c ] <= 4\n"
      " onlyq: [ a * b ] = 0\n x - a = 0\n empty: >= -3\nBounds\n a <= 10\n -5 <= b <= 5\n c >= -1\n d free\n"
      " -infinity <= e <= 3\n f = 0\n sc <= 9\n si <= 7\n bb = 1\n g >= 2\nBinaries\n bb\nGenerals\n g si\n"
      "Semi-continuous\n sc si\nSOS\n s1: S1 :: a:1 b:2 c:3\n S2 :: d:1.5 e:-2\nEnd\n");
  EXPECT_EQ(m.rows[5].name, "R6");
  EXPECT_EQ(m.objective.constant, 7.5);
  expect_round_trip(m);
}

TEST(LpWriter, VariablesOnlyInBoundsOrSectionsKeepTheirOrder) {
  Model m = read_lp_string("min\n x\nst\n c: x >= 1\nbounds\n u >= 0\n v <= 3\ngenerals\n w\nbinaries\n z\nSOS\n S1 :: s:1\nend\n");
  ASSERT_EQ(m.num_vars(), 6);
  expect_round_trip(m);
}

TEST(LpWriter, PlainQuadraticFormWhenDoublingOverflows) {
  Model m;
  int x = m.add_var("x");
  m.objective.quad.push_back({x, x, DBL_MAX});
  std::string t = write_lp_string(m);
  EXPECT_EQ(t.find("/ 2"), std::string::npos) << t;
  expect_round_trip(m);
}

TEST(LpWriter, SeededRandomModelsRoundTrip) {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    Rng rng(seed);
    Model m;
    m.name = "random " + std::to_string(seed);
    int n = int(rng.uniform_int(1, 30));
    for (int i = 0; i < n; ++i) {
      VarType type = VarType(rng.uniform_int(0, 4));
      double lb = rng.bernoulli(0.2) ? -kInf : rng.bernoulli(0.5) ? 0.0 : rng.normal() * 10;
      double ub = rng.bernoulli(0.3) ? kInf : lb + std::fabs(rng.normal()) * std::pow(10.0, double(rng.uniform_int(-5, 5)));
      if (ub == -kInf) ub = kInf;
      if (type == VarType::Binary) {
        lb = rng.bernoulli(0.8) ? 0.0 : 1.0;
        ub = 1.0;
      }
      m.add_var("v" + std::to_string(i) + (rng.bernoulli(0.3) ? "[" + std::to_string(i) + ",2]" : ""), type, lb, ub);
    }
    auto coef = [&] {
      double c = rng.normal() * std::pow(10.0, double(rng.uniform_int(-8, 8)));
      return rng.bernoulli(0.1) ? 1.0 : rng.bernoulli(0.1) ? -1.0 : c;
    };
    auto terms = [&](std::vector<Term>& ts) {
      std::vector<int> vars(size_t(n), 0);
      for (int i = 0; i < n; ++i) vars[size_t(i)] = i;
      rng.shuffle(vars);
      int k = int(rng.uniform_int(0, n));
      for (int i = 0; i < k; ++i) ts.push_back({vars[size_t(i)], coef()});
    };
    auto quads = [&](std::vector<QuadTerm>& qs) {
      if (!rng.bernoulli(0.2)) return;
      int k = int(rng.uniform_int(1, 4));
      for (int i = 0; i < k; ++i) {
        int a = int(rng.uniform_int(0, n - 1)), b = int(rng.uniform_int(a, n - 1));
        bool dup = false;
        for (const auto& q : qs) dup |= q.var1 == a && q.var2 == b;
        if (!dup) qs.push_back({a, b, coef()});
      }
    };
    // Column order must be first-mention order for an LP file to reproduce it: mention every
    // variable in the objective, in index order.
    for (int i = 0; i < n; ++i) m.objective.terms.push_back({i, coef()});
    m.objective.sense = rng.bernoulli(0.5) ? ObjSense::Minimize : ObjSense::Maximize;
    quads(m.objective.quad);
    if (rng.bernoulli(0.5)) m.objective.constant = coef();
    int rows = int(rng.uniform_int(0, 20));
    for (int r = 0; r < rows; ++r) {
      Row row;
      row.name = "r_" + std::to_string(r);
      terms(row.terms);
      quads(row.quad);
      row.sense = RowSense(rng.uniform_int(0, 3));
      row.rhs = coef();
      if (row.sense == RowSense::Range) {
        row.range_upper = row.rhs + std::fabs(coef());
        if (row.terms.empty() && row.quad.empty()) row.sense = RowSense::EQ;
      }
      m.rows.push_back(row);
    }
    if (rng.bernoulli(0.3)) {
      SosSet s;
      s.name = rng.bernoulli(0.5) ? "sos" : "";
      s.type = int(rng.uniform_int(1, 2));
      terms(s.members);
      if (s.members.empty()) s.members.push_back({0, 1.0});
      m.sos.push_back(s);
    }
    m.rebuild_index();
    SCOPED_TRACE("seed " + std::to_string(seed));
    expect_round_trip(m);
  }
}

TEST(LpWriter, RefusesWhatCannotBeWritten) {
  auto refuses = [](const Model& m, const std::string& needle) {
    try {
      write_lp_string(m);
      ADD_FAILURE() << "written: " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  auto base = [] {
    Model m;
    m.add_var("x");
    m.objective.terms.push_back({0, 1.0});
    return m;
  };
  Model m = base();
  m.vars[0].name = "2x";
  refuses(m, "'2x'");
  m = base();
  m.vars[0].name = "a b";
  refuses(m, "'a b'");
  m = base();
  m.vars[0].name = "Bounds";
  refuses(m, "keyword");
  m = base();
  m.vars[0].name = "";
  refuses(m, "variable name");
  m = base();
  m.objective.terms[0].coef = std::nan("");
  refuses(m, "NaN");
  m = base();
  m.objective.terms[0].coef = kInf;
  refuses(m, "infinite");
  m = base();
  m.rows.push_back(Row{"c", {{0, 1.0}}, {}, RowSense::LE, kInf, 0.0});
  refuses(m, "right-hand side");
  m = base();
  m.rows.push_back(Row{"c:d", {{0, 1.0}}, {}, RowSense::LE, 1, 0.0});
  refuses(m, "constraint name");
  m = base();
  m.rows.push_back(Row{"c", {}, {}, RowSense::Range, 1, 2});
  refuses(m, "no terms");
  m = base();
  m.vars[0].type = VarType::Binary;
  m.vars[0].ub = 5;
  refuses(m, "outside [0, 1]");
  m = base();
  m.vars[0].lb = kInf;
  refuses(m, "impossible infinite bound");
  m = base();
  m.name = "two\nlines";
  refuses(m, "line break");
  m = base();
  m.objective.terms[0].var = 3;
  refuses(m, "variable index");
}

TEST(LpWriter, WriteFileIsAtomicAndReadsBack) {
  auto dir = std::filesystem::temp_directory_path() / ("trex_lpw_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  Model m = read_lp_string("min\n x + y\nst\n c: x + y >= 1\nend\n");
  write_lp_file(m, dir / "m.lp");
  EXPECT_EQ(first_difference(m, read_lp_file(dir / "m.lp")), "");
  // A model that cannot be written leaves the existing file untouched and no temporary behind.
  Model bad = m;
  bad.vars[0].name = "end";
  EXPECT_THROW(write_lp_file(bad, dir / "m.lp"), Error);
  EXPECT_EQ(read_file(dir / "m.lp"), write_lp_string(m));
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace trex::lp
