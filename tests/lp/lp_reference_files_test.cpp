// Every reference LP file of bench4opt (394) and bench4opt_feasible (344) is read, and the counts
// that can be checked against the benchmark README / OR_BENCHMARKS.md §8 match.
#include <gtest/gtest.h>

#include <coin/CoinLpIO.hpp>
#include <coin/CoinMessageHandler.hpp>
#include <coin/CoinPackedMatrix.hpp>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <set>
#include <unordered_map>

#include "lp/lp_format.hpp"
#include "lp/model_compare.hpp"
#include "lp_test_support.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"

namespace trex::lp {
namespace {

struct Counts {
  int files = 0, quadratic = 0, constant = 0, maximize = 0, with_free = 0, empty_rows = 0, binaries = 0,
      generals = 0;
  std::set<std::string> quadratic_models;
};

Counts read_all(const std::string& folder) {
  Counts c;
  auto files = testing::reference_lp_files(folder);
  for (const auto& f : files) {
    Model m;
    try {
      m = read_lp_file(f);
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    ++c.files;
    if (m.has_quadratic()) {
      ++c.quadratic;
      std::string stem = f.stem().string();
      c.quadratic_models.insert(stem.substr(0, stem.find("_problem")));
    }
    c.constant += m.find_var("Constant") >= 0;
    c.maximize += m.objective.sense == ObjSense::Maximize;
    bool free = false, bin = false, gen = false;
    for (const auto& v : m.vars) {
      free |= v.lb == -kInf && v.ub == kInf;
      bin |= v.type == VarType::Binary;
      gen |= v.type == VarType::Integer;
    }
    c.with_free += free;
    c.binaries += bin;
    c.generals += gen;
    bool empty = false;
    for (const auto& r : m.rows) empty |= r.terms.empty() && r.quad.empty();
    c.empty_rows += empty;
    EXPECT_FALSE(m.has_special()) << f;
    for (const auto& r : m.rows) EXPECT_FALSE(r.name.empty()) << f;
  }
  return c;
}

const std::set<std::string> kQuadratic = {"model_32", "model_33", "model_56", "model_57",
                                          "model_364", "model_365", "model_374", "model_375"};

TEST(LpReferenceFiles, Bench4OptAllRead) {
  auto files = testing::reference_lp_files("bench4opt");
  ASSERT_EQ(files.size(), 394u) << "reference LP files missing under " << testing::benchmarks_dir();
  Counts c = read_all("bench4opt");
  EXPECT_EQ(c.files, 394);
  EXPECT_EQ(c.quadratic, 8);
  EXPECT_EQ(c.quadratic_models, kQuadratic);
  EXPECT_EQ(c.constant, 20);
  EXPECT_EQ(c.maximize, 98);
  EXPECT_EQ(c.with_free, 2);
  EXPECT_EQ(c.empty_rows, 6);
  // Files declaring a Binaries / Generals section (OR_BENCHMARKS.md §8: 100 / 38) hold at least
  // as many models with such variables; models whose sections list no variable count 0 here.
  EXPECT_LE(c.binaries, 100);
  EXPECT_LE(c.generals, 38);
  EXPECT_GT(c.binaries, 0);
  EXPECT_GT(c.generals, 0);
}

TEST(LpReferenceFiles, Bench4OptFeasibleAllRead) {
  auto files = testing::reference_lp_files("bench4opt_feasible");
  ASSERT_EQ(files.size(), 344u) << "reference LP files missing under " << testing::benchmarks_dir();
  Counts c = read_all("bench4opt_feasible");
  EXPECT_EQ(c.files, 344);
  EXPECT_EQ(c.quadratic, 8);
  EXPECT_EQ(c.quadratic_models, kQuadratic);
  EXPECT_EQ(c.constant, 18);
  EXPECT_EQ(c.empty_rows, 20);
  EXPECT_LE(c.binaries, 88);
  EXPECT_LE(c.generals, 18);
}

// read -> write -> read gives the same model, and writing it again gives the same text.
void round_trip_all(const std::string& folder, size_t expected) {
  auto files = testing::reference_lp_files(folder);
  ASSERT_EQ(files.size(), expected) << "reference LP files missing under " << testing::benchmarks_dir();
  for (const auto& f : files) {
    try {
      Model a = read_lp_file(f);
      std::string text = write_lp_string(a);
      Model b = read_lp_string(text, f.string() + " (written)");
      EXPECT_EQ(first_difference(a, b), "") << f;
      EXPECT_EQ(write_lp_string(b), text) << f;
    } catch (const Error& e) {
      ADD_FAILURE() << f << ": " << e.what();
    }
  }
}
TEST(LpReferenceFiles, Bench4OptRoundTrip) { round_trip_all("bench4opt", 394); }
TEST(LpReferenceFiles, Bench4OptFeasibleRoundTrip) { round_trip_all("bench4opt_feasible", 344); }

// Reading all 738 files takes well under a second (~40 ms measured, Release build).
TEST(LpReferenceFiles, ReadingAllFilesIsFast) {
  std::vector<std::string> texts;
  for (const char* folder : {"bench4opt", "bench4opt_feasible"})
    for (const auto& f : testing::reference_lp_files(folder)) texts.push_back(read_file(f));
  ASSERT_EQ(texts.size(), 738u);
  auto t0 = std::chrono::steady_clock::now();
  size_t nz = 0;
  for (const auto& t : texts) nz += size_t(read_lp_string(t).num_nonzeros());
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GT(nz, 0u);
#if defined(__SANITIZE_ADDRESS__)
  const double limit = 10.0;  // AddressSanitizer builds run ~7x slower
#else
  const double limit = 1.0;
#endif
  EXPECT_LT(s, limit) << "reading 738 reference files took " << s << " s";
  std::printf("read 738 reference LP files (%zu nonzeros) in %.1f ms\n", nz, s * 1e3);
}

// ---- Cross-check against COIN-OR CoinLpIO (an independent parser) ----

// CoinLpIO renames every column when a name holds '[' or ']'; map a bracket that follows a
// non-blank (a name bracket, never a quadratic one) to parentheses (OR_BENCHMARKS.md §9).
std::string map_brackets(const std::string& s) {
  std::string out = s;
  for (size_t i = 1; i < out.size(); ++i)
    if ((out[i] == '[' || out[i] == ']') && out[i - 1] != ' ' && out[i - 1] != '\n') out[i] = out[i] == '[' ? '(' : ')';
  return out;
}
std::string map_name(std::string s) {
  for (char& c : s)
    if (c == '[') c = '(';
    else if (c == ']') c = ')';
  return s;
}

struct Oracle {
  int compared = 0, skipped_quadratic = 0, skipped_empty_rows = 0;
};

void cross_check(const std::filesystem::path& f, Oracle& o) {
  Model m = read_lp_file(f);
  if (m.has_quadratic()) {
    ++o.skipped_quadratic;
    return;
  }
  for (const auto& r : m.rows)
    if (r.terms.empty()) {
      ++o.skipped_empty_rows;
      return;
    }
  auto tmp = std::filesystem::temp_directory_path() /
             ("trex_coinlp_" + std::to_string(::getpid()) + "_" + f.filename().string());
  {
    std::ofstream out(tmp, std::ios::binary);  // scratch copy: no fsync needed
    out << map_brackets(read_file(f));
    ASSERT_TRUE(out.good()) << tmp;
  }
  CoinLpIO lp;
  lp.messageHandler()->setLogLevel(0);
  lp.readLp(tmp.string().c_str(), 1e-12);
  std::filesystem::remove(tmp);
  ++o.compared;
  SCOPED_TRACE(f.string());
  const double inf = lp.getInfinity();
  auto same_bound = [&](double ours, double theirs) {
    if (ours == kInf) return theirs >= inf;
    if (ours == -kInf) return theirs <= -inf;
    return ours == theirs;
  };
  ASSERT_EQ(lp.getNumCols(), m.num_vars());
  ASSERT_EQ(lp.getNumRows(), m.num_rows());
  std::unordered_map<std::string, int> coin_col;
  for (int j = 0; j < lp.getNumCols(); ++j) coin_col[lp.columnName(j)] = j;
  std::vector<int> to_coin(m.vars.size());
  for (size_t i = 0; i < m.vars.size(); ++i) {
    auto it = coin_col.find(map_name(m.vars[i].name));
    ASSERT_NE(it, coin_col.end()) << m.vars[i].name;
    to_coin[i] = it->second;
  }
  // Objective: CoinLpIO turns Maximize into Minimize with negated c.
  EXPECT_EQ(lp.wasMaximization(), m.objective.sense == ObjSense::Maximize);
  std::vector<double> c = m.objective_dense();
  const double sign = lp.wasMaximization() ? -1.0 : 1.0;
  for (size_t i = 0; i < c.size(); ++i)
    EXPECT_EQ(sign * c[i], lp.getObjCoefficients()[to_coin[i]]) << "objective " << m.vars[i].name;
  EXPECT_EQ(lp.objectiveOffset(), m.objective.constant);
  for (size_t i = 0; i < m.vars.size(); ++i) {
    const Variable& v = m.vars[i];
    int j = to_coin[i];
    EXPECT_TRUE(same_bound(v.lb, lp.getColLower()[j])) << v.name << " lb " << v.lb << " vs " << lp.getColLower()[j];
    EXPECT_TRUE(same_bound(v.ub, lp.getColUpper()[j])) << v.name << " ub " << v.ub << " vs " << lp.getColUpper()[j];
    EXPECT_EQ(lp.isInteger(j), v.type == VarType::Integer || v.type == VarType::Binary) << v.name;
  }
  const CoinPackedMatrix* A = lp.getMatrixByRow();
  for (int r = 0; r < m.num_rows(); ++r) {
    const Row& row = m.rows[size_t(r)];
    EXPECT_EQ(std::string(lp.rowName(r)), map_name(row.name));
    const char want = row.sense == RowSense::LE ? 'L' : row.sense == RowSense::GE ? 'G' : 'E';
    EXPECT_EQ(lp.getRowSense()[r], want) << row.name;
    EXPECT_EQ(lp.getRightHandSide()[r], row.rhs) << row.name;
    CoinShallowPackedVector v = A->getVector(r);
    std::unordered_map<int, double> theirs;
    for (int k = 0; k < v.getNumElements(); ++k) theirs[v.getIndices()[k]] = v.getElements()[k];
    EXPECT_EQ(theirs.size(), row.terms.size()) << row.name;
    for (const auto& t : row.terms) {
      auto it = theirs.find(to_coin[size_t(t.var)]);
      ASSERT_NE(it, theirs.end()) << row.name << " " << m.vars[size_t(t.var)].name;
      EXPECT_EQ(it->second, t.coef) << row.name << " " << m.vars[size_t(t.var)].name;
    }
  }
}

void cross_check_folder(const std::string& folder, size_t expected, int expect_compared) {
  auto files = testing::reference_lp_files(folder);
  ASSERT_EQ(files.size(), expected) << "reference LP files missing under " << testing::benchmarks_dir();
  Oracle o;
  for (const auto& f : files) cross_check(f, o);
  EXPECT_EQ(o.skipped_quadratic, 8);
  EXPECT_EQ(o.compared, expect_compared);
}

TEST(LpReferenceFiles, Bench4OptMatchesCoinLpIO) { cross_check_folder("bench4opt", 394, 380); }
TEST(LpReferenceFiles, Bench4OptFeasibleMatchesCoinLpIO) { cross_check_folder("bench4opt_feasible", 344, 344 - 8 - 20); }

}  // namespace
}  // namespace trex::lp
