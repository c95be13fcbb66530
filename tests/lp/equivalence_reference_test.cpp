// ORGEval check on the 394 B40 ORGEval reference LPs (benchmarks/bench4opt_orgeval.jsonl): each is
// equivalent to itself except BENCH4OPT_286/287/360/361 (sufficiency), the self-check classes are
// 370 / 20 / 4, renamed and shuffled copies are equivalent, and mutations chosen under ORGEval's
// rules (equivalence_test_util.hpp) are caught with the expected reason; copies and mutations are
// checked as IR and again after write -> read through the LP writer and reader. The fast WL path is compared with the reference path on every
// file. Sharded so ctest -j2 runs the shards in parallel.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "equivalence_test_util.hpp"
#include "lp/equivalence.hpp"
#include "lp/equivalence_detail.hpp"
#include "lp/lp_format.hpp"
#include "util/jsonl.hpp"
#include "benchmarks_dir.hpp"

using namespace trex::lp;
using namespace trex::lp::testing;

namespace {

struct ReferenceLp {
  std::string id;
  std::filesystem::path path;
};

using trex::testing::benchmarks_dir;

// All 394 records; a missing or short file fails the calling test (never a silent skip).
const std::vector<ReferenceLp>& reference_lps() {
  static const std::vector<ReferenceLp> lps = [] {
    std::vector<ReferenceLp> out;
    const auto jsonl = benchmarks_dir() / "bench4opt_orgeval.jsonl";
    trex::JsonlReader reader(jsonl);
    while (auto rec = reader.next())
      out.push_back({trex::require_string(*rec, "id", reader.where()),
                     benchmarks_dir() / trex::require_string(*rec, "lp_file", reader.where())});
    return out;
  }();
  return lps;
}

const std::set<std::string> kNotSufficient{"BENCH4OPT_286", "BENCH4OPT_287", "BENCH4OPT_360", "BENCH4OPT_361"};
constexpr int kShards = 8;

void expect_same_verdict(const EquivalenceResult& got, const EquivalenceResult& want, const std::string& what) {
  EXPECT_EQ(got.equivalent, want.equivalent) << what;
  EXPECT_EQ(got.reason, want.reason) << what;
  EXPECT_EQ(got.sufficient_msg, want.sufficient_msg) << what;
}

Model write_read(const Model& m) { return read_lp_string(write_lp_string(m), m.name + ".lp"); }

class OrgevalReferenceShard : public ::testing::TestWithParam<int> {};

TEST_P(OrgevalReferenceShard, SelfCopiesAndMutations) {
  const std::vector<ReferenceLp>* lps = nullptr;
  ASSERT_NO_THROW(lps = &reference_lps()) << "benchmark data missing under " << benchmarks_dir();
  ASSERT_EQ(lps->size(), 394u) << "bench4opt_orgeval.jsonl should hold 394 records";
  const int shard = GetParam();
  std::map<std::string, int> applied, files;
  orgeval::WlRefiner fast;
  for (size_t i = size_t(shard); i < lps->size(); i += kShards) {
    const ReferenceLp& lp = (*lps)[i];
    SCOPED_TRACE(lp.id + " " + lp.path.string());
    Model m;
    ASSERT_NO_THROW(m = read_lp_file(lp.path));

    const EquivalenceResult self = check_equivalence(m, m);
    if (kNotSufficient.count(lp.id)) {
      EXPECT_FALSE(self.equivalent);
      EXPECT_EQ(self.reason, "sufficient_check");
      EXPECT_EQ(self.sufficient_msg, "Due to distinctness.");
    } else {
      EXPECT_TRUE(self.equivalent) << self.reason;
    }

    // Fast WL path == readable reference path, colour by colour.
    orgeval::CheckModel cm = orgeval::gurobi_view(m);
    orgeval::normalize(cm);
    const orgeval::Graph g = orgeval::build_graph(cm);
    const orgeval::Colouring ref = orgeval::wl_reference(g), f = fast.refine(g);
    ASSERT_EQ(ref.rounds, f.rounds);
    for (int v = 0; v < g.num_nodes(); ++v) ASSERT_EQ(ref.node_colour(v), f.node_colour(v)) << "node " << v;

    trex::Rng rng = trex::Rng::derive(20261129, i);
    const Model copy = renamed_shuffled(m, rng);
    expect_same_verdict(check_equivalence(m, copy), self, "renamed/shuffled copy");
    expect_same_verdict(check_equivalence(m, write_read(copy)), self, "renamed/shuffled copy, written and read");

    ++files["all"];
    for (const std::string& kind : mutation_kinds()) {
      auto mut = mutate(m, kind, rng);
      if (!mut) continue;
      ++applied[kind];
      const EquivalenceResult r = check_equivalence(m, mut->model);
      EXPECT_FALSE(r.equivalent) << mut->what;
      EXPECT_EQ(r.reason, mut->expected_reason) << mut->what;
      const EquivalenceResult rw = check_equivalence(m, write_read(mut->model));
      EXPECT_FALSE(rw.equivalent) << mut->what << " (written and read)";
      EXPECT_EQ(rw.reason, mut->expected_reason) << mut->what << " (written and read)";
    }
  }
  // Every kind finds a qualifying candidate in every reference file (see docs/lp-equiv.md).
  for (const std::string& kind : mutation_kinds())
    EXPECT_EQ(applied[kind], files["all"]) << kind << " applied to " << applied[kind] << " of " << files["all"];
}

INSTANTIATE_TEST_SUITE_P(Shards, OrgevalReferenceShard, ::testing::Range(0, kShards));

TEST(OrgevalReference, SelfCheckClasses) {
  const std::vector<ReferenceLp>* lps = nullptr;
  ASSERT_NO_THROW(lps = &reference_lps()) << "benchmark data missing under " << benchmarks_dir();
  ASSERT_EQ(lps->size(), 394u);
  std::map<std::string, int> counts;
  std::set<std::string> not_sufficient;
  for (const ReferenceLp& lp : *lps) {
    const std::string c = sufficiency_class(read_lp_file(lp.path));
    ++counts[c];
    if (c == "not-sufficient") not_sufficient.insert(lp.id);
  }
  EXPECT_EQ(counts["WL-determinable"], 370);
  EXPECT_EQ(counts["symmetric-decomposable"], 20);
  EXPECT_EQ(counts["not-sufficient"], 4);
  EXPECT_EQ(not_sufficient, kNotSufficient);
}

}  // namespace
