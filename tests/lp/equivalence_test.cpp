// ORGEval structural equivalence on hand-built IR models: one test per quirk of OR_BENCHMARKS.md §6
// (normalisation N1-N3, colour strings, WL hashes and stop rule, colour sets, sufficiency), the
// fast WL path against the reference path, and renamed/shuffled copies and mutations.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>

#include "equivalence_test_util.hpp"
#include "lp/equivalence.hpp"
#include "lp/equivalence_detail.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"
#include "util/jsonl.hpp"

using namespace trex::lp;
using namespace trex::lp::orgeval;
using namespace trex::lp::testing;

namespace {

CheckModel normalized(const Model& m) {
  CheckModel c = gurobi_view(m);
  normalize(c);
  return c;
}

std::vector<std::string> node_colours(const Colouring& c) {
  std::vector<std::string> out;
  for (size_t i = 0; i < c.node_class.size(); ++i) out.push_back(c.node_colour(int(i)));
  return out;
}

}  // namespace

// ---- colour strings -------------------------------------------------------------------------

TEST(OrgevalFormat, Float32SixDecimals) {
  EXPECT_EQ(fmt_value(1.0), "1.000000");
  EXPECT_EQ(fmt_value(1e100), "inf");
  EXPECT_EQ(fmt_value(-1e100), "-inf");
  EXPECT_EQ(fmt_value(kInf), "inf");
  EXPECT_EQ(fmt_value(-0.0), "-0.000000");
  EXPECT_EQ(fmt_value(0.0), "0.000000");
  EXPECT_EQ(fmt_value(1e-7), "0.000000");
  EXPECT_EQ(fmt_value(-1e-7), "-0.000000");  // sign survives the rounding
  EXPECT_EQ(fmt_value(1234567.1), "1234567.125000");
  EXPECT_EQ(fmt_value(0.1), "0.100000");
  EXPECT_EQ(fmt_value(2.5e-6), "0.000002");  // float32(2.5e-6) < 2.5e-6; the double prints 0.000003
  EXPECT_EQ(fmt_value(1.0000005), "1.000000");
  EXPECT_EQ(fmt_value(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(fmt_value(-std::numeric_limits<double>::quiet_NaN()), "nan");  // never "-nan"
  EXPECT_EQ(fmt_value(3.5e38), "inf");                                     // beyond float32 range
  EXPECT_EQ(fmt_value(-3.5e38), "-inf");
  EXPECT_EQ(fmt_value(3.4028235e38), "340282346638528859811704183484516925440.000000");  // FLT_MAX
  EXPECT_EQ(fmt_values({4.0, -1.0}), "4.000000,-1.000000");
  EXPECT_EQ(fmt_values({}), "");
}

TEST(OrgevalFormat, Md5HasherMatchesOneShot) {
  trex::Md5Hasher h;
  for (const char* s : {"", "a", "1.000000,0.000000,0.000000,inf|"}) EXPECT_EQ(h.hex(s), trex::md5_hex(s));
  EXPECT_EQ(h.hex("1.000000,0.000000,0.000000,inf|"), "ce2953d442980f54efac5dd90077e079");
}

// ---- what the check sees of a model ----------------------------------------------------------

TEST(OrgevalView, TypesInfinitiesAndInvisibleParts) {
  Model m;
  add_var(m, "b", VarType::Binary, 0, 1, 3.0);
  add_var(m, "i", VarType::Integer, -kInf, kInf);
  add_var(m, "c", VarType::Continuous);
  add_var(m, "s", VarType::SemiContinuous, 0, 4);
  add_var(m, "si", VarType::SemiInteger, 0, 4);
  m.objective.sense = ObjSense::Maximize;
  m.objective.constant = 17.0;
  m.objective.quad.push_back({0, 1, 2.0});
  add_row(m, "lin", {{0, 1.0}, {1, 1.0}}, RowSense::LE, kInf);
  Row q;
  q.name = "quad";
  q.terms = {{0, 1.0}, {2, 1.0}};
  q.quad = {{0, 2, 1.0}};
  q.sense = RowSense::EQ;
  m.rows.push_back(q);
  m.sos.push_back({"s1", 1, {{0, 1.0}, {2, 2.0}}});
  const CheckModel c = gurobi_view(m);
  ASSERT_EQ(c.vars.size(), 5u);
  EXPECT_EQ(c.vars[0].type, 1);
  EXPECT_EQ(c.vars[1].type, 2);
  EXPECT_EQ(c.vars[2].type, 0);
  EXPECT_EQ(c.vars[3].type, 0);
  EXPECT_EQ(c.vars[4].type, 0);
  EXPECT_EQ(c.vars[0].obj, 3.0);
  EXPECT_EQ(c.vars[1].lb, -1e100);
  EXPECT_EQ(c.vars[1].ub, 1e100);
  ASSERT_EQ(c.rows.size(), 1u);  // the quadratic constraint is not a linear row
  EXPECT_EQ(c.rows[0].rhs, 1e100);
  EXPECT_EQ(c.rows[0].sense, -1);
}

TEST(OrgevalView, RangedRowBecomesEqualityWithSlack) {
  Model m;
  add_var(m, "x");
  add_var(m, "y");
  Row r;
  r.name = "rg";
  r.terms = {{0, 1.0}, {1, 2.0}};
  r.sense = RowSense::Range;
  r.rhs = 2.0;
  r.range_upper = 9.0;
  m.rows.push_back(r);
  const CheckModel c = gurobi_view(m);
  ASSERT_EQ(c.vars.size(), 3u);
  EXPECT_EQ(c.vars[2].lb, 0.0);
  EXPECT_EQ(c.vars[2].ub, 7.0);
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].sense, 0);
  EXPECT_EQ(c.rows[0].rhs, 2.0);
  ASSERT_EQ(c.rows[0].terms.size(), 3u);
  EXPECT_EQ(c.rows[0].terms[2].var, 2);
  EXPECT_EQ(c.rows[0].terms[2].coef, -1.0);

  // ...and is equivalent to writing that slack out by hand.
  Model explicit_slack;
  add_var(explicit_slack, "x");
  add_var(explicit_slack, "y");
  add_var(explicit_slack, "RgRg", VarType::Continuous, 0.0, 7.0);
  add_row(explicit_slack, "rg", {{0, 1.0}, {1, 2.0}, {2, -1.0}}, RowSense::EQ, 2.0);
  EXPECT_TRUE(check_equivalence(m, explicit_slack).equivalent);
}

TEST(OrgevalView, BadVariableIndexIsAnError) {
  Model m;
  add_var(m, "x");
  add_row(m, "r", {{0, 1.0}, {3, 1.0}}, RowSense::LE, 1.0);
  EXPECT_THROW(gurobi_view(m), trex::Error);
}

// ---- N1: singleton rows to bounds -----------------------------------------------------------

TEST(OrgevalN1, NegativeCoefficientGivesBoundWithoutFlip) {
  Model m;
  add_var(m, "x", VarType::Continuous, 2.0, 8.0);
  add_var(m, "y");
  add_row(m, "s", {{0, -0.61}}, RowSense::LE, 0.0);
  add_row(m, "keep", {{0, 1.0}, {1, 1.0}}, RowSense::GE, 1.0);
  const CheckModel c = normalized(m);
  ASSERT_EQ(c.rows.size(), 1u);  // the singleton row is gone
  EXPECT_EQ(c.vars[0].lb, 2.0);  // untouched: only a UB candidate
  EXPECT_EQ(c.vars[0].ub, 0.0);
  EXPECT_TRUE(std::signbit(c.vars[0].ub));  // 0 / -0.61 = -0.0, printed "-0.000000"
  EXPECT_EQ(build_graph(c).colour0[0], "0.000000,0.000000,2.000000,-0.000000");

  Model ge;  // -x >= -3 gives LB = 3 (right by accident), -x <= -3 gives UB = 3 (wrong direction)
  add_var(ge, "x");
  add_row(ge, "s", {{0, -1.0}}, RowSense::LE, -3.0);
  const CheckModel c2 = normalized(ge);
  EXPECT_EQ(c2.vars[0].lb, 0.0);
  EXPECT_EQ(c2.vars[0].ub, 3.0);
}

TEST(OrgevalN1, CandidatesOverwriteDeclaredBounds) {
  Model m;
  add_var(m, "x", VarType::Continuous, 4.0, 5.0);
  add_var(m, "y", VarType::Integer, 0.0, 100.0);
  add_var(m, "z");
  add_row(m, "loosen", {{0, 1.0}}, RowSense::LE, 10.0);  // UB 5 -> 10 (looser)
  add_row(m, "lb1", {{1, 1.0}}, RowSense::GE, 1.0);
  add_row(m, "lb3", {{1, 2.0}}, RowSense::GE, 6.0);
  add_row(m, "ub7", {{1, 1.0}}, RowSense::LE, 7.0);
  add_row(m, "ub4", {{1, 1.0}}, RowSense::LE, 4.0);
  add_row(m, "eq", {{2, 2.0}}, RowSense::EQ, 6.0);
  const CheckModel c = normalized(m);
  EXPECT_TRUE(c.rows.empty());
  EXPECT_EQ(c.vars[0].lb, 4.0);
  EXPECT_EQ(c.vars[0].ub, 10.0);
  EXPECT_EQ(c.vars[1].lb, 3.0);  // max of candidates
  EXPECT_EQ(c.vars[1].ub, 4.0);  // min of candidates
  EXPECT_EQ(c.vars[2].lb, 3.0);  // = gives both
  EXPECT_EQ(c.vars[2].ub, 3.0);
}

TEST(OrgevalN1, SignedZeroTieKeepsTheFirstCandidate) {
  Model a;
  add_var(a, "x");
  add_row(a, "neg", {{0, -1.0}}, RowSense::LE, 0.0);  // UB -0.0
  add_row(a, "pos", {{0, 1.0}}, RowSense::LE, 0.0);   // UB 0.0, not smaller
  EXPECT_TRUE(std::signbit(normalized(a).vars[0].ub));
  Model b;
  add_var(b, "x");
  add_row(b, "pos", {{0, 1.0}}, RowSense::LE, 0.0);
  add_row(b, "neg", {{0, -1.0}}, RowSense::LE, 0.0);
  EXPECT_FALSE(std::signbit(normalized(b).vars[0].ub));
}

TEST(OrgevalN1, TinyCoefficientAndEmptyRowsStay) {
  Model m;
  add_var(m, "x");
  add_row(m, "tiny", {{0, 9e-13}}, RowSense::LE, 5.0);
  add_row(m, "empty", {}, RowSense::LE, -1.0);
  add_row(m, "edge", {{0, 1e-12}}, RowSense::LE, 5.0);  // |a| >= 1e-12: removed, UB = 5e12
  const CheckModel c = normalized(m);
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_EQ(c.rows[0].terms.size(), 1u);
  EXPECT_EQ(c.rows[1].terms.size(), 0u);
  EXPECT_DOUBLE_EQ(c.vars[0].ub, 5e12);
}

// ---- N2 / N3: zero-rhs sign normalisation -----------------------------------------------------

TEST(OrgevalN2, LessEqualZeroRowsBecomeGreaterEqual) {
  Model m;
  add_var(m, "x");
  add_var(m, "y");
  add_row(m, "zero", {{0, 1.0}, {1, -2.0}}, RowSense::LE, 0.0);
  add_row(m, "tiny", {{0, 1.0}, {1, 1.0}}, RowSense::LE, 5e-10);
  add_row(m, "negzero", {{0, 1.0}, {1, 1.0}}, RowSense::LE, -0.0);
  add_row(m, "notsmall", {{0, 1.0}, {1, 1.0}}, RowSense::LE, 2e-9);
  add_row(m, "ge", {{0, -1.0}, {1, 1.0}}, RowSense::GE, 0.0);
  add_row(m, "zerocoef", {{0, 0.0}, {1, 1.0}}, RowSense::LE, 0.0);
  const CheckModel c = normalized(m);
  ASSERT_EQ(c.rows.size(), 6u);
  EXPECT_EQ(c.rows[0].sense, 1);
  EXPECT_EQ(c.rows[0].terms[0].coef, -1.0);
  EXPECT_EQ(c.rows[0].terms[1].coef, 2.0);
  EXPECT_EQ(c.rows[1].sense, 1);
  EXPECT_EQ(c.rows[1].rhs, 0.0);
  EXPECT_FALSE(std::signbit(c.rows[2].rhs));  // rhs exactly 0.0
  EXPECT_EQ(c.rows[3].sense, -1);             // |rhs| >= 1e-9: untouched
  EXPECT_EQ(c.rows[3].rhs, 2e-9);
  EXPECT_EQ(c.rows[4].sense, 1);  // >= rows never touched
  EXPECT_EQ(c.rows[4].terms[0].coef, -1.0);
  EXPECT_TRUE(std::signbit(c.rows[5].terms[0].coef));  // 0 negated: -0.0, edge colour "-0.000000"
  EXPECT_EQ(build_graph(c).edge_colours.back(), "-0.000000");
}

TEST(OrgevalN3, EqualityZeroRowsFollowTheCoefficientSum) {
  Model m;
  add_var(m, "x");
  add_var(m, "y");
  add_row(m, "neg", {{0, -1.0}, {1, -2.0}}, RowSense::EQ, 0.0);      // s < 0: negated
  add_row(m, "pos", {{0, 3.0}, {1, -2.0}}, RowSense::EQ, 5e-10);      // s > 0: unchanged, rhs kept
  add_row(m, "balanced", {{0, 1.0}, {1, -1.0}}, RowSense::EQ, -0.0);  // |s| < 1e-12: unchanged
  add_row(m, "negtiny", {{0, -1.0}, {1, -1.0}}, RowSense::EQ, 5e-10);  // negated, rhs 0.0
  add_row(m, "nonzero", {{0, -1.0}, {1, -1.0}}, RowSense::EQ, 4.0);    // rhs not ~0: unchanged
  const CheckModel c = normalized(m);
  ASSERT_EQ(c.rows.size(), 5u);
  EXPECT_EQ(c.rows[0].terms[0].coef, 1.0);
  EXPECT_EQ(c.rows[0].terms[1].coef, 2.0);
  EXPECT_EQ(c.rows[1].terms[0].coef, 3.0);
  EXPECT_EQ(c.rows[1].rhs, 5e-10);
  EXPECT_EQ(c.rows[2].terms[0].coef, 1.0);
  EXPECT_TRUE(std::signbit(c.rows[2].rhs));
  EXPECT_EQ(c.rows[3].terms[0].coef, 1.0);
  EXPECT_EQ(c.rows[3].rhs, 0.0);
  EXPECT_EQ(c.rows[4].terms[0].coef, -1.0);
  for (const auto& r : c.rows) EXPECT_EQ(r.sense, 0);
}

TEST(OrgevalN3, InOutFlowOrientations) {
  // in - out = 0 vs out - in = 0: coefficient sum 0, neither row is flipped, so they differ when
  // in and out are distinguishable (quirk 2). With a third term the sum decides the sign and the
  // two orientations normalise to the same row.
  auto flow = [](std::vector<double> coefs) {
    Model m;
    add_var(m, "in", VarType::Continuous, 0, kInf, 1.0);
    add_var(m, "out", VarType::Continuous, 0, kInf, 2.0);
    add_var(m, "loss");
    std::vector<Term> terms;
    for (size_t i = 0; i < coefs.size(); ++i) terms.push_back({int(i), coefs[i]});
    add_row(m, "bal", terms, RowSense::EQ, 0.0);
    return m;
  };
  EXPECT_EQ(check_equivalence(flow({1, -1}), flow({-1, 1})).reason, "wl_check");
  const EquivalenceResult r = check_equivalence(flow({1, -1, -0.5}), flow({-1, 1, 0.5}));
  EXPECT_TRUE(r.equivalent) << r.reason;
}

// ---- graph, WL hashes and stop rule -----------------------------------------------------------

namespace {
Model two_vars_one_row() {
  Model m;
  add_var(m, "x", VarType::Continuous, 0.0, kInf, 1.0);
  add_var(m, "y", VarType::Integer, 0.0, 10.0);
  add_row(m, "r", {{0, 1.0}, {1, 2.0}}, RowSense::GE, 4.0);
  return m;
}
}  // namespace

TEST(OrgevalGraph, InitialColoursAndEdges) {
  const Graph g = build_graph(normalized(two_vars_one_row()));
  ASSERT_EQ(g.num_nodes(), 3);
  EXPECT_EQ(g.colour0[0], "1.000000,0.000000,0.000000,inf");
  EXPECT_EQ(g.colour0[1], "0.000000,2.000000,0.000000,10.000000");
  EXPECT_EQ(g.colour0[2], "4.000000,1.000000");
  EXPECT_EQ(g.edge_colours, (std::vector<std::string>{"1.000000", "2.000000"}));
  EXPECT_EQ(g.offsets, (std::vector<int>{0, 1, 2, 4}));
}

TEST(OrgevalWl, HashesMatchHandComputedStrings) {
  // Expected values: Python hashlib.md5 over the strings of OR_BENCHMARKS.md §6, computed by hand:
  // round 1 x = md5("1.000000,0.000000,0.000000,inf|4.000000,1.000000|1.000000"), ...; k1 = k2 = 3,
  // so the loop stops after round 2 and keeps the round-2 colours.
  const Graph g = build_graph(normalized(two_vars_one_row()));
  const std::vector<std::string> expected{"aeea319ec9731d214e867184a005b60a", "a94b05b7132148bf297a0a7cf82f7c3d",
                                          "09680746e9dac507a4ed63bd7beb9d5d"};
  const Colouring ref = wl_reference(g);
  EXPECT_EQ(ref.rounds, 2);
  EXPECT_EQ(node_colours(ref), expected);
  WlRefiner fast;
  const Colouring f = fast.refine(g);
  EXPECT_EQ(f.rounds, 2);
  EXPECT_EQ(node_colours(f), expected);
}

TEST(OrgevalWl, IsolatedNodeAndRoundCap) {
  Model one;
  add_var(one, "x", VarType::Continuous, 0.0, kInf, 1.0);
  const Graph g = build_graph(normalized(one));
  const Colouring c = wl_reference(g);
  EXPECT_EQ(c.rounds, 1);  // N = 1 node: at most one round, k1 = 1 != k0 = 0 but the cap ends it
  EXPECT_EQ(c.node_colour(0), "ce2953d442980f54efac5dd90077e079");  // md5("1.000000,...,inf|")
  WlRefiner fast;
  EXPECT_EQ(fast.refine(g).rounds, 1);

  Model two;  // two identical isolated variables: k1 = 1, k2 = 1 -> stop at round 2
  add_var(two, "x");
  add_var(two, "y");
  EXPECT_EQ(wl_reference(build_graph(normalized(two))).rounds, 2);
  EXPECT_EQ(fast.refine(build_graph(normalized(two))).rounds, 2);
}

TEST(OrgevalWl, ParallelEdgesRepeat) {
  // A term list naming x twice (the reader merges such terms; a hand-built IR may not) gives two
  // parallel edges, each contributing its own neighbour string.
  Model twice, once;
  for (Model* m : {&twice, &once}) {
    add_var(*m, "x", VarType::Continuous, 0, kInf, 1.0);
    add_var(*m, "y", VarType::Continuous, 0, kInf, 2.0);
  }
  add_row(twice, "r", {{0, 1.0}, {0, 1.0}, {1, 1.0}}, RowSense::GE, 3.0);
  add_row(once, "r", {{0, 1.0}, {1, 1.0}}, RowSense::GE, 3.0);
  const Graph g = build_graph(normalized(twice));
  EXPECT_EQ(g.offsets[1] - g.offsets[0], 2);  // x has two adjacency entries
  WlRefiner fast;
  const Colouring ref = wl_reference(g), f = fast.refine(g);
  EXPECT_EQ(node_colours(ref), node_colours(f));
  EXPECT_EQ(ref.rounds, 2);
  EXPECT_EQ(check_equivalence(twice, once).reason, "wl_check");
}

TEST(OrgevalWl, LongPathNeedsManyRounds) {
  Model m;  // a path x0 - r0 - x1 - r1 - ... : classes split by distance to the ends
  const int n = 12;
  for (int i = 0; i <= n; ++i) add_var(m, "x" + std::to_string(i));
  for (int i = 0; i < n; ++i) add_row(m, "r" + std::to_string(i), {{i, 1.0}, {i + 1, 1.0}}, RowSense::GE, 1.0);
  const Graph g = build_graph(normalized(m));
  const Colouring ref = wl_reference(g);
  WlRefiner fast;
  const Colouring f = fast.refine(g);
  EXPECT_GT(ref.rounds, 6);
  EXPECT_EQ(ref.rounds, f.rounds);
  EXPECT_EQ(node_colours(ref), node_colours(f));
}

TEST(OrgevalWl, FastPathEqualsReferenceOnRandomModels) {
  trex::Rng rng(20261129);
  WlRefiner fast;
  for (int i = 0; i < 300; ++i) {
    const Model m = random_model(rng);
    const Graph g = build_graph(normalized(m));
    const Colouring ref = wl_reference(g), f = fast.refine(g);
    ASSERT_EQ(ref.rounds, f.rounds) << "model " << i;
    ASSERT_EQ(node_colours(ref), node_colours(f)) << "model " << i;
    ASSERT_EQ(sufficiency(g, ref), sufficiency(g, f)) << "model " << i;
  }
}

TEST(OrgevalWl, WildValuesNeverBreakTheCheck) {
  // NaN, infinities, values beyond float32 range, denormals: no crash, both WL paths agree, and a
  // model is still equivalent to its renamed copy unless its own sufficiency fails.
  const double wild[] = {std::numeric_limits<double>::quiet_NaN(), kInf, -kInf, 1e300, -3.5e38, 4e-320, -0.0, 1.0};
  trex::Rng rng(99);
  WlRefiner fast;
  for (int i = 0; i < 100; ++i) {
    Model m = random_model(rng, 10, 10);
    for (Row& r : m.rows) {
      for (Term& t : r.terms)
        if (rng.bernoulli(0.3)) t.coef = wild[rng.uniform_int(0, 7)];
      if (rng.bernoulli(0.3)) r.rhs = wild[rng.uniform_int(0, 7)];
    }
    for (Variable& v : m.vars)
      if (rng.bernoulli(0.2)) v.ub = wild[rng.uniform_int(0, 7)];
    const Graph g = build_graph(normalized(m));
    const Colouring ref = wl_reference(g), f = fast.refine(g);
    ASSERT_EQ(node_colours(ref), node_colours(f)) << "model " << i;
    const EquivalenceResult self = check_equivalence(m, m);
    EXPECT_TRUE(self.equivalent || self.reason == "sufficient_check") << "model " << i << ": " << self.reason;
  }
}

TEST(OrgevalWl, EmptyModelsAreAnError) {
  Model a, b;
  EXPECT_THROW(check_equivalence(a, b), trex::Error);
  EXPECT_THROW(sufficiency_class(a), trex::Error);
  EXPECT_THROW(wl_reference(build_graph(normalized(a))), trex::Error);
}

// ---- decision: counts, colour sets, sufficiency ------------------------------------------------

TEST(OrgevalDecision, ReasonIsTheFirstFailedCheck) {
  Model a = two_vars_one_row();
  Model more_vars = a;
  add_var(more_vars, "z");
  add_row(more_vars, "extra", {{0, 1.0}, {2, 1.0}}, RowSense::LE, 3.0);  // rows differ too
  EquivalenceResult r = check_equivalence(a, more_vars);
  EXPECT_FALSE(r.equivalent);
  EXPECT_EQ(r.reason, "var_num_check");
  EXPECT_FALSE(r.var_num_check);
  EXPECT_FALSE(r.cons_num_check);  // not evaluated

  Model more_rows = a;
  add_row(more_rows, "extra", {{0, 1.0}, {1, 1.0}}, RowSense::LE, 3.0);
  r = check_equivalence(a, more_rows);
  EXPECT_EQ(r.reason, "cons_num_check");
  EXPECT_TRUE(r.var_num_check);
  EXPECT_FALSE(r.cons_num_check);

  Model other_rhs = a;
  other_rhs.rows[0].rhs = 5.0;
  r = check_equivalence(a, other_rhs);
  EXPECT_EQ(r.reason, "wl_check");
  EXPECT_TRUE(r.cons_num_check);
  EXPECT_FALSE(r.wl_check);

  r = check_equivalence(a, a);
  EXPECT_TRUE(r.equivalent);
  EXPECT_EQ(r.reason, "");
  EXPECT_TRUE(r.var_num_check && r.cons_num_check && r.wl_check && r.sufficient_check);
  EXPECT_EQ(r.sufficient_msg, "WL-determinable");
  EXPECT_EQ(r.wl_rounds_ref, 2);
  EXPECT_EQ(r.wl_rounds_gen, 2);
}

TEST(OrgevalDecision, ColourSetsNotClassSizes) {
  Model a, b;  // {obj 1, obj 1, obj 2} vs {obj 1, obj 2, obj 2}: same colour sets
  add_var(a, "x", VarType::Continuous, 0, kInf, 1.0);
  add_var(a, "y", VarType::Continuous, 0, kInf, 1.0);
  add_var(a, "z", VarType::Continuous, 0, kInf, 2.0);
  add_var(b, "x", VarType::Continuous, 0, kInf, 1.0);
  add_var(b, "y", VarType::Continuous, 0, kInf, 2.0);
  add_var(b, "z", VarType::Continuous, 0, kInf, 2.0);
  const EquivalenceResult r = check_equivalence(a, b);
  EXPECT_TRUE(r.equivalent) << r.reason;
  EXPECT_EQ(r.sufficient_msg, "symmetric-decomposable");
}

TEST(OrgevalDecision, SufficiencyClasses) {
  EXPECT_EQ(sufficiency_class(two_vars_one_row()), "WL-determinable");

  Model copies;  // two disjoint copies of x + 2y >= 1: every component holds one node per class
  for (int k = 0; k < 2; ++k) {
    int x = add_var(copies, "x" + std::to_string(k)), y = add_var(copies, "y" + std::to_string(k));
    add_row(copies, "r" + std::to_string(k), {{x, 1.0}, {y, 2.0}}, RowSense::GE, 1.0);
  }
  EXPECT_EQ(sufficiency_class(copies), "symmetric-decomposable");
  EXPECT_TRUE(check_equivalence(copies, copies).equivalent);

  Model dup_rows_only;  // duplicate rows over distinct variables: the rows are isolated once the
  add_var(dup_rows_only, "x", VarType::Continuous, 0, kInf, 1.0);  // single-member x, y are removed
  add_var(dup_rows_only, "y", VarType::Continuous, 0, kInf, 2.0);
  add_row(dup_rows_only, "a", {{0, 1.0}, {1, 1.0}}, RowSense::GE, 1.0);
  add_row(dup_rows_only, "b", {{0, 1.0}, {1, 1.0}}, RowSense::GE, 1.0);
  EXPECT_EQ(sufficiency_class(dup_rows_only), "symmetric-decomposable");

  Model dup;  // the same row twice over two interchangeable variables: one component, 2 per class
  add_var(dup, "x", VarType::Continuous, 0, kInf, 1.0);
  add_var(dup, "y", VarType::Continuous, 0, kInf, 1.0);
  add_row(dup, "a", {{0, 1.0}, {1, 1.0}}, RowSense::GE, 1.0);
  add_row(dup, "b", {{0, 1.0}, {1, 1.0}}, RowSense::GE, 1.0);
  EXPECT_EQ(sufficiency_class(dup), "not-sufficient");
  const EquivalenceResult r = check_equivalence(dup, dup);
  EXPECT_FALSE(r.equivalent);
  EXPECT_EQ(r.reason, "sufficient_check");
  EXPECT_EQ(r.sufficient_msg, "Due to distinctness.");
  EXPECT_TRUE(r.wl_check);

  // The zero-rhs flip makes `t - w >= 0` and `w - t <= 0` identical (BENCH4OPT_286's pattern).
  Model flip;
  add_var(flip, "w", VarType::Binary, 0, 1, 1.0);
  add_var(flip, "t", VarType::Binary, 0, 1);
  add_var(flip, "u", VarType::Binary, 0, 1, 1.0);
  add_row(flip, "covered", {{0, 1.0}, {2, 1.0}, {1, -1.0}}, RowSense::GE, 0.0);
  add_row(flip, "compat", {{0, -1.0}, {2, -1.0}, {1, 1.0}}, RowSense::LE, 0.0);
  EXPECT_EQ(sufficiency_class(flip), "not-sufficient");
}

TEST(OrgevalDecision, GeneratedSideSufficiencyAlsoCounts) {
  // Reference: two disjoint 4-cycles a-p-b-q-a (p: a + b >= 1, q: a + 2b >= 1). Generated: their
  // double cover, one 8-cycle with the same local structure. WL cannot tell them apart (same colour
  // set, even the same class sizes), the reference is symmetric-decomposable, the generated graph
  // has one component holding both copies of every class.
  Model ref, gen;
  for (Model* m : {&ref, &gen}) {
    add_var(*m, "a0", VarType::Continuous, 0, kInf, 1.0);
    add_var(*m, "b0", VarType::Continuous, 0, kInf, 2.0);
    add_var(*m, "a1", VarType::Continuous, 0, kInf, 1.0);
    add_var(*m, "b1", VarType::Continuous, 0, kInf, 2.0);
  }
  add_row(ref, "p0", {{0, 1.0}, {1, 1.0}}, RowSense::GE, 1.0);
  add_row(ref, "q0", {{0, 1.0}, {1, 2.0}}, RowSense::GE, 1.0);
  add_row(ref, "p1", {{2, 1.0}, {3, 1.0}}, RowSense::GE, 1.0);
  add_row(ref, "q1", {{2, 1.0}, {3, 2.0}}, RowSense::GE, 1.0);
  add_row(gen, "p0", {{0, 1.0}, {1, 1.0}}, RowSense::GE, 1.0);
  add_row(gen, "q0", {{2, 1.0}, {1, 2.0}}, RowSense::GE, 1.0);
  add_row(gen, "p1", {{2, 1.0}, {3, 1.0}}, RowSense::GE, 1.0);
  add_row(gen, "q1", {{0, 1.0}, {3, 2.0}}, RowSense::GE, 1.0);
  EXPECT_EQ(sufficiency_class(ref), "symmetric-decomposable");
  EXPECT_EQ(sufficiency_class(gen), "not-sufficient");
  EXPECT_TRUE(check_equivalence(ref, ref).equivalent);
  for (const auto& [a, b] : {std::pair{&ref, &gen}, std::pair{&gen, &ref}}) {
    const EquivalenceResult r = check_equivalence(*a, *b);
    EXPECT_FALSE(r.equivalent);
    EXPECT_TRUE(r.wl_check);
    EXPECT_EQ(r.reason, "sufficient_check");
    EXPECT_EQ(r.sufficient_msg, "Due to distinctness.");
  }
}

// ---- documented quirks -------------------------------------------------------------------------

TEST(OrgevalQuirks, OnlyZeroRhsRowsAreSignNormalised) {
  Model a, b;
  for (Model* m : {&a, &b}) {
    add_var(*m, "x", VarType::Continuous, 0, kInf, 1.0);
    add_var(*m, "y", VarType::Continuous, 0, kInf, 2.0);
  }
  add_row(a, "r", {{0, 1.0}, {1, 1.0}}, RowSense::GE, 5.0);
  add_row(b, "r", {{0, -1.0}, {1, -1.0}}, RowSense::LE, -5.0);
  EXPECT_EQ(check_equivalence(a, b).reason, "wl_check");

  Model c = a, d = a;  // scaled rows differ
  d.rows[0].terms = {{0, 2.0}, {1, 2.0}};
  d.rows[0].rhs = 10.0;
  EXPECT_EQ(check_equivalence(c, d).reason, "wl_check");

  Model e = a, f = a;  // ...but the zero-rhs forms agree: x + y <= 0 vs -x - y >= 0
  e.rows[0] = {"r", {{0, 1.0}, {1, 1.0}}, {}, RowSense::LE, 0.0, 0.0};
  f.rows[0] = {"r", {{0, -1.0}, {1, -1.0}}, {}, RowSense::GE, 0.0, 0.0};
  EXPECT_TRUE(check_equivalence(e, f).equivalent);
}

TEST(OrgevalQuirks, SingletonDirectionQuirk) {
  Model a, b;  // -x <= -3 (UB 3 by the quirk) vs x >= 3 (LB 3)
  add_var(a, "x");
  add_var(b, "x");
  add_row(a, "s", {{0, -1.0}}, RowSense::LE, -3.0);
  add_row(b, "s", {{0, 1.0}}, RowSense::GE, 3.0);
  EXPECT_EQ(check_equivalence(a, b).reason, "wl_check");
  Model c;  // the same variable with UB 3 written as a bound is equivalent to a
  add_var(c, "x", VarType::Continuous, 0.0, 3.0);
  EXPECT_TRUE(check_equivalence(a, c).equivalent);
}

TEST(OrgevalQuirks, ObjectiveSenseIgnoredCoefficientsAsWritten) {
  Model min = two_vars_one_row(), max = min, neg = min;
  max.objective.sense = ObjSense::Maximize;
  EXPECT_TRUE(check_equivalence(min, max).equivalent);
  neg.objective.sense = ObjSense::Maximize;
  for (Term& t : neg.objective.terms) t.coef = -t.coef;
  EXPECT_EQ(check_equivalence(min, neg).reason, "wl_check");
  Model constant = min;
  constant.objective.constant = 42.0;  // a literal constant is invisible
  EXPECT_TRUE(check_equivalence(min, constant).equivalent);
}

TEST(OrgevalQuirks, BinaryIsNotIntegerAndConstantIsAVariable) {
  Model bin, integer;
  add_var(bin, "x", VarType::Binary, 0, 1, 1.0);
  add_var(integer, "x", VarType::Integer, 0, 1, 1.0);
  EXPECT_EQ(check_equivalence(bin, integer).reason, "wl_check");

  Model gurobi_constant = two_vars_one_row(), literal = gurobi_constant;
  int c = add_var(gurobi_constant, "Constant", VarType::Continuous, 1.0, 1.0);
  gurobi_constant.objective.terms.push_back({c, 7.0});
  literal.objective.constant = 7.0;
  EXPECT_EQ(check_equivalence(gurobi_constant, literal).reason, "var_num_check");
}

TEST(OrgevalQuirks, Float32SixDecimalsHidesTinyChanges) {
  Model a = two_vars_one_row(), b = a, c = a;
  b.rows[0].terms[1].coef = 2.0000001;  // float32 %.6f prints 2.000000
  EXPECT_TRUE(check_equivalence(a, b).equivalent);
  c.rows[0].terms[1].coef = 2.00001;  // visible
  EXPECT_EQ(check_equivalence(a, c).reason, "wl_check");
  Model f = a;  // |obj| below ~5e-7 prints as 0.000000 (or -0.000000)
  f.objective.terms[0].coef = 3e-7;
  Model g = a;
  g.objective.terms[0].coef = 1e-7;
  EXPECT_TRUE(check_equivalence(f, g).equivalent);
  Model h = a;
  h.objective.terms[0].coef = -1e-7;  // "-0.000000" differs from "0.000000"
  EXPECT_EQ(check_equivalence(g, h).reason, "wl_check");
}

TEST(OrgevalQuirks, QuadraticPartsIgnored) {
  Model a = two_vars_one_row(), b = a;
  b.objective.quad.push_back({0, 1, 3.0});
  Row q;
  q.name = "q";
  q.terms = {{0, 1.0}};
  q.quad = {{0, 0, 1.0}};
  q.sense = RowSense::LE;
  q.rhs = 4.0;
  b.rows.push_back(q);
  const EquivalenceResult r = check_equivalence(a, b);
  EXPECT_TRUE(r.equivalent) << r.reason;
}

// ---- renamed copies and mutations on random models ---------------------------------------------

TEST(OrgevalTransforms, RenamedShuffledCopiesAreEquivalent) {
  trex::Rng rng(7);
  int sufficient = 0;
  for (int i = 0; i < 200; ++i) {
    const Model m = random_model(rng);
    const Model copy = renamed_shuffled(m, rng);
    const EquivalenceResult self = check_equivalence(m, m), r = check_equivalence(m, copy);
    EXPECT_EQ(r.equivalent, self.equivalent) << "model " << i;
    EXPECT_EQ(r.reason, self.reason) << "model " << i;
    EXPECT_EQ(r.sufficient_msg, self.sufficient_msg) << "model " << i;
    if (self.reason != "sufficient_check") {
      EXPECT_TRUE(r.equivalent) << "model " << i << ": " << r.reason;
    }
    sufficient += self.equivalent;
  }
  EXPECT_GT(sufficient, 50);  // most random models pass against themselves
}

TEST(OrgevalTransforms, MutationsAreDetected) {
  trex::Rng rng(11);
  std::map<std::string, int> applied;
  for (int i = 0; i < 150; ++i) {
    const Model m = random_model(rng);
    for (const std::string& kind : mutation_kinds()) {
      auto mut = mutate(m, kind, rng);
      if (!mut) continue;
      ++applied[kind];
      const EquivalenceResult r = check_equivalence(m, mut->model);
      EXPECT_FALSE(r.equivalent) << "model " << i << ": " << mut->what;
      EXPECT_EQ(r.reason, mut->expected_reason) << "model " << i << ": " << mut->what;
    }
  }
  for (const std::string& kind : mutation_kinds()) EXPECT_GT(applied[kind], 60) << kind;
}

// ---- the CLI: exit codes and JSON ----------------------------------------------------------------

namespace {

struct CliRun {
  int rc;
  std::string out;
};

CliRun run_cli(const std::string& args) {
  const std::string cmd = std::string(TREX_BIN_PATH) + " lp-equiv " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, ""};
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string write_temp(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / ("trex_lp_equiv_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

}  // namespace

TEST(OrgevalCli, ExitCodesAndJson) {
  const std::string ref = write_temp("ref.lp",
                                     "\\ reference\nMinimize\n  x + 2 y\nSubject To\n c1: x + 2 y >= 4\n"
                                     " c2: - 0.5 x <= 0\nBounds\n y <= 10\nGenerals\n y\nEnd\n");
  const std::string renamed = write_temp("renamed.lp",
                                         "Maximize\n  2 b + a\nSubject To\n first: - 0.5 a <= 0\n"
                                         " second: 2 b + a >= 4\nBounds\n b <= 10\nGenerals\n b\nEnd\n");
  const std::string other = write_temp("other.lp",
                                       "Minimize\n  x + 2 y\nSubject To\n c1: x + 2 y >= 5\n"
                                       " c2: - 0.5 x <= 0\nBounds\n y <= 10\nGenerals\n y\nEnd\n");
  const std::string broken = write_temp("broken.lp", "Minimize\n  x +\nSubject To\nEnd\n");

  CliRun r = run_cli(ref + " " + renamed + " --json");
  EXPECT_EQ(r.rc, 0) << r.out;
  trex::Json j = trex::Json::parse(r.out);
  EXPECT_EQ(j["equivalent"], true);
  EXPECT_EQ(j["reason"], "");
  EXPECT_EQ(j["sufficient_msg"], "WL-determinable");
  for (const char* key : {"var_num_check", "cons_num_check", "wl_check", "sufficient_check"}) EXPECT_EQ(j[key], true);

  r = run_cli(ref + " " + other + " --json");
  EXPECT_EQ(r.rc, 1) << r.out;
  j = trex::Json::parse(r.out);
  EXPECT_EQ(j["equivalent"], false);
  EXPECT_EQ(j["reason"], "wl_check");

  r = run_cli(ref + " " + broken + " --json");  // unreadable generated file: a verdict
  EXPECT_EQ(r.rc, 1) << r.out;
  j = trex::Json::parse(r.out);
  EXPECT_EQ(j["reason"], "read_error");
  EXPECT_NE(j["error"].get<std::string>().find("broken.lp:3:"), std::string::npos) << r.out;

  r = run_cli(broken + " " + ref);  // unreadable reference: an error
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("broken.lp:3:"), std::string::npos) << r.out;

  r = run_cli(ref + " " + other);
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("not equivalent: wl_check"), std::string::npos) << r.out;
  EXPECT_EQ(run_cli(ref).rc, 2);  // missing argument
  std::filesystem::remove_all(std::filesystem::path(ref).parent_path());
}
