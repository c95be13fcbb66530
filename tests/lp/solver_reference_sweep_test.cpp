// The solve sweep over the benchmark reference LPs, both backends, split into shards so ctest -j2
// runs them in parallel:
// - B4O-Feasible (344): every model solves to `answer` within 1e-6 * max(1, |answer|), the 8 quadratic
//   (nonconvex) ones too, proven by spatial branch and bound.
// - B4O-ORGEval (394): the status agrees with `ref_lp_cbc_status` (CBC 2.10.8 CLI, 25 s limit), and
//   the objective with `ref_lp_cbc_objective` where that is optimal; its TIMEOUTs (132/133) must now
//   be solved to optimality.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "lp/lp_format.hpp"
#include "lp/solver.hpp"
#include "lp_test_support.hpp"
#include "util/error.hpp"
#include "util/jsonl.hpp"

namespace trex::lp {
namespace {

constexpr int kShards = 4;
constexpr double kPerModelLimit = 60.0;  // a safety net only: the slowest model takes ~1-2 s

struct Reference {
  std::string id, lp_file;
  bool has_answer = false;
  double answer = 0.0;
  std::string cbc_status;  // ORGEval only
};

std::vector<Reference> load_references(const std::string& jsonl) {
  const auto path = testing::benchmarks_dir() / jsonl;
  std::vector<Reference> out;
  if (!std::filesystem::exists(path)) {
    ADD_FAILURE() << "benchmark data missing: " << path << " (set TREX_BENCHMARKS)";
    return out;
  }
  JsonlReader reader(path);
  while (auto rec = reader.next()) {
    Reference r;
    r.id = rec->at("id").get<std::string>();
    r.lp_file = rec->at("lp_file").get<std::string>();
    if (jsonl == "bench4opt_feasible.jsonl") {
      r.has_answer = rec->at("answer").is_number();
      if (r.has_answer) r.answer = rec->at("answer").get<double>();
    } else {
      r.cbc_status = rec->at("ref_lp_cbc_status").get<std::string>();
      const auto& obj = rec->at("ref_lp_cbc_objective");
      r.has_answer = obj.is_number();
      if (r.has_answer) r.answer = obj.get<double>();
    }
    out.push_back(std::move(r));
  }
  return out;
}

SolveStatus expected_status(const std::string& cbc_status) {
  if (cbc_status == "OPTIMAL" || cbc_status == "TIMEOUT") return SolveStatus::Optimal;
  if (cbc_status == "INFEASIBLE") return SolveStatus::Infeasible;
  if (cbc_status == "UNBOUNDED") return SolveStatus::Unbounded;
  if (cbc_status == "QUADRATIC") return SolveStatus::Optimal;  // the 8 nonconvex ones: proven by spatial B&B
  ADD_FAILURE() << "unknown ref_lp_cbc_status " << cbc_status;
  return SolveStatus::Error;
}

using ShardParam = std::tuple<Backend, int>;

std::string shard_name(const ::testing::TestParamInfo<ShardParam>& p) {
  return std::string(to_string(std::get<0>(p.param))) + "_shard" + std::to_string(std::get<1>(p.param));
}

class FeasibleSweep : public ::testing::TestWithParam<ShardParam> {};

TEST_P(FeasibleSweep, SolvesToTheAnswer) {
  const auto [backend, shard] = GetParam();
  const std::vector<Reference> refs = load_references("bench4opt_feasible.jsonl");
  ASSERT_EQ(refs.size(), 344u);
  SolveOptions options;
  options.time_limit = kPerModelLimit;
  int checked = 0, quadratic = 0;
  for (size_t i = size_t(shard); i < refs.size(); i += kShards) {
    const Reference& ref = refs[i];
    ASSERT_TRUE(ref.has_answer) << ref.id;
    const Model model = read_lp_file(testing::benchmarks_dir() / ref.lp_file);
    const SolveResult r = solve(model, backend, options);
    ++checked;
    if (model.has_quadratic()) {  // Ipopt + spatial branch and bound whatever the backend (quadratic_b4o_test.cpp)
      ++quadratic;
      EXPECT_EQ(r.proof, "spatial_branch_and_bound") << ref.id << ": " << to_string(r.status) << " " << r.message;
    }
    ASSERT_EQ(r.status, SolveStatus::Optimal) << ref.id << " (" << ref.lp_file << "): " << to_string(r.status)
                                              << " " << r.message;
    EXPECT_LE(std::abs(r.objective - ref.answer), 1e-6 * std::max(1.0, std::abs(ref.answer)))
        << ref.id << ": objective " << r.objective << " vs answer " << ref.answer;
  }
  EXPECT_GT(checked, 80);
  RecordProperty("quadratic", quadratic);
}

class OrgevalSweep : public ::testing::TestWithParam<ShardParam> {};

TEST_P(OrgevalSweep, StatusAgreesWithReferenceCbc) {
  const auto [backend, shard] = GetParam();
  const std::vector<Reference> refs = load_references("bench4opt_orgeval.jsonl");
  ASSERT_EQ(refs.size(), 394u);
  SolveOptions options;
  options.time_limit = kPerModelLimit;
  int unbounded_undecided = 0;
  for (size_t i = size_t(shard); i < refs.size(); i += kShards) {
    const Reference& ref = refs[i];
    const Model model = read_lp_file(testing::benchmarks_dir() / ref.lp_file);
    const SolveResult r = solve(model, backend, options);
    const SolveStatus want = expected_status(ref.cbc_status);
    // model_24/25/340/341: one equality over 3 general integers with 16-digit coefficients
    // (2.579454224546183 x0 - 4.295117870939943 x1 - 4.495509532741478 x2 = 0, x0 >= 1) and an unbounded
    // relaxation. An integer point exists only within the solvers' feasibility tolerance (exactly, the
    // decimal data admit none this side of astronomically large values), so "unbounded" is not provable:
    // when the budgeted integer feasibility check finds no point, infeasible_or_unbounded is the answer.
    if (want == SolveStatus::Unbounded && r.status == SolveStatus::InfeasibleOrUnbounded) {
      ++unbounded_undecided;
      continue;
    }
    EXPECT_EQ(r.status, want) << ref.id << " (" << ref.lp_file << "): " << to_string(r.status) << " vs "
                              << ref.cbc_status << " " << r.message;
    if (want == SolveStatus::Optimal && r.status == SolveStatus::Optimal && ref.has_answer) {
      EXPECT_LE(std::abs(r.objective - ref.answer), 1e-6 * std::max(1.0, std::abs(ref.answer)))
          << ref.id << ": objective " << r.objective << " vs reference CBC " << ref.answer;
    }
  }
  EXPECT_LE(unbounded_undecided, 2) << "more UNBOUNDED references left undecided than the 4 explained ones allow";
}

INSTANTIATE_TEST_SUITE_P(Reference, FeasibleSweep,
                         ::testing::Combine(::testing::Values(Backend::Cbc, Backend::Glpk),
                                            ::testing::Range(0, kShards)),
                         shard_name);
INSTANTIATE_TEST_SUITE_P(Reference, OrgevalSweep,
                         ::testing::Combine(::testing::Values(Backend::Cbc, Backend::Glpk),
                                            ::testing::Range(0, kShards)),
                         shard_name);

}  // namespace
}  // namespace trex::lp
