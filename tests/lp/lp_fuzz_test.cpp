// Seeded fuzzing of the LP reader: mutated reference files (byte flips, deletions, inserted LP
// tokens, huge numbers, truncation) and random bytes. Every case must either parse -- and then
// write and read back to the same model -- or throw trex::Error carrying a line number; never
// crash, hang or throw anything else. Run under -DTREX_SANITIZE=ON for memory errors and leaks.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "lp/lp_format.hpp"
#include "lp/model_compare.hpp"
#include "lp_test_support.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"

namespace trex::lp {
namespace {

constexpr int kShards = 4;
constexpr int kCasesPerShard = 2500;

const std::vector<std::string>& corpus() {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> out;
    for (const char* folder : {"bench4opt", "bench4opt_feasible"})
      for (const auto& f : testing::reference_lp_files(folder)) out.push_back(read_file(f));
    return out;
  }();
  return texts;
}

const std::vector<std::string> kTokens = {
    "[", "]", ":", "::", "<=", ">=", "=", "<", ">", "=<", "=>", "==", "->", "+", "-", "*", "^", "^ 2", "/ 2", "/",
    "inf", "-inf", "+infinity", "Infinity", "free", "1e308", "1e309", "-1e999", "4.9e-324", "1e-400",
    "179769313486231570000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "0", "-0", ".5", "5.", "1e", "1e+", "x", "x[0]", "x[", "]x", "y#1#2", "Constant", "\n", "\r\n", "\n ", " ",
    "\\", "\\ comment\n", "End", "\nEnd\n", "\nBounds\n", "\nSubject To\n", "\nMaximize\n", "\nBinaries\n",
    "\nGenerals\n", "\nSemi-continuous\n", "\nSOS\n", " S1 :: ", "s1: S2 :: x:1 ", "\nGeneral Constraints\n",
    "c: ", "c:", " [ x * y ] / 2 ", " [ x ^ 2 ] ", "\t", std::string(1, '\0'), "\x7f", "\xff", "(", ")", ",",
    ".", "st", "min", "max"};

std::string mutate(const std::string& base, Rng& rng) {
  std::string s = base;
  int edits = int(rng.uniform_int(1, 4));
  for (int e = 0; e < edits; ++e) {
    size_t pos = s.empty() ? 0 : size_t(rng.uniform_int(0, int64_t(s.size())));
    switch (rng.uniform_int(0, 5)) {
      case 0:  // byte flip
        if (!s.empty()) s[std::min(pos, s.size() - 1)] = char(rng.uniform_int(0, 255));
        break;
      case 1:  // delete a span
        if (!s.empty()) s.erase(std::min(pos, s.size() - 1), size_t(rng.uniform_int(1, 40)));
        break;
      case 2:
      case 3:  // insert an LP token, often between blanks
        s.insert(pos, rng.bernoulli(0.5) ? " " + rng.pick(kTokens) + " " : rng.pick(kTokens));
        break;
      case 4:  // truncate
        s.resize(pos);
        break;
      case 5:  // duplicate a span elsewhere
        if (!s.empty()) {
          size_t from = size_t(rng.uniform_int(0, int64_t(s.size()) - 1));
          std::string span = s.substr(from, size_t(rng.uniform_int(1, 80)));
          s.insert(pos, span);
        }
        break;
    }
  }
  return s;
}

std::string random_bytes(Rng& rng) {
  std::string s(size_t(rng.uniform_int(0, 400)), '\0');
  const bool printable = rng.bernoulli(0.5);
  for (char& c : s) c = printable ? char(rng.uniform_int(32, 126)) : char(rng.uniform_int(0, 255));
  if (rng.bernoulli(0.5)) s = "Minimize\n" + s;
  return s;
}

struct Outcome {
  int parsed = 0, rejected = 0, unwritable = 0;
};

void run_case(const std::string& text, Outcome& out, const std::string& label) {
  Model m;
  try {
    m = read_lp_string(text, "fuzz.lp");
  } catch (const Error& e) {
    ++out.rejected;
    EXPECT_GT(e.where().line, 0) << label << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find("fuzz.lp:" + std::to_string(e.where().line)), std::string::npos)
        << label << ": " << e.what();
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << label << ": non-trex exception " << e.what();
    return;
  }
  ++out.parsed;
  // Whatever parses must write and read back to the same model (unless the writer refuses it,
  // e.g. a keyword used as a variable name mid-line, which it reports as a trex::Error).
  std::string written;
  try {
    written = write_lp_string(m);
  } catch (const Error&) {
    ++out.unwritable;
    return;
  }
  try {
    Model back = read_lp_string(written, "written.lp");
    EXPECT_EQ(first_difference(m, back), "") << label;
  } catch (const Error& e) {
    ADD_FAILURE() << label << ": written model does not read back: " << e.what();
  }
}

class LpFuzz : public ::testing::TestWithParam<int> {};

TEST_P(LpFuzz, ParsesOrFailsWithALine) {
  const auto& texts = corpus();
  ASSERT_EQ(texts.size(), 738u) << "reference LP files missing under " << testing::benchmarks_dir();
  const int shard = GetParam();
  Rng rng = Rng::derive(20261130, uint64_t(shard));
  Outcome out;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kCasesPerShard; ++i) {
    std::string label = "shard " + std::to_string(shard) + " case " + std::to_string(i);
    if (i % 10 == 9)
      run_case(random_bytes(rng), out, label + " (random bytes)");
    else
      run_case(mutate(rng.pick(texts), rng), out, label);
    if (HasFailure()) break;  // one reproducible failing case is enough
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 20.0 / kShards) << "fuzz shard too slow: " << s << " s";
  // Both outcomes must be exercised, or the mutations are too weak / too destructive.
  EXPECT_GT(out.parsed, kCasesPerShard / 20);
  EXPECT_GT(out.rejected, kCasesPerShard / 4);
  std::printf("shard %d: %d parsed, %d rejected, %d parsed but unwritable, %.2f s\n", shard, out.parsed,
              out.rejected, out.unwritable, s);
}

INSTANTIATE_TEST_SUITE_P(Shards, LpFuzz, ::testing::Range(0, kShards));

}  // namespace
}  // namespace trex::lp
