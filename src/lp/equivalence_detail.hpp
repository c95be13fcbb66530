// The stages of the ORGEval structural check (OR_BENCHMARKS.md §6), exposed for tests and the
// benchmark: normalisation N1-N3, float32 "%.6f" colour strings, the bipartite graph, the MD5
// Weisfeiler-Lehman refinement (a readable reference path and a fast path with identical output)
// and the sufficiency test. check_equivalence() in equivalence.hpp composes them.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "lp/model.hpp"

namespace trex::lp::orgeval {

// Gurobi's infinity: IR ±kInf becomes ±1e100 before anything else looks at it.
constexpr double kGurobiInf = 1e100;

// What Gurobi's model exposes to the check, per variable: Obj, VType code (binary 1, integer 2,
// anything else 0), LB, UB.
struct CheckVar {
  double obj = 0.0;
  int type = 0;
  double lb = 0.0, ub = kGurobiInf;
};

// A linear row: sense -1 (<=), 0 (=), +1 (>=), as in the row colour.
struct CheckRow {
  std::vector<Term> terms;
  int sense = 0;
  double rhs = 0.0;
};

struct CheckModel {
  std::vector<CheckVar> vars;
  std::vector<CheckRow> rows;
};

// The model as Gurobi holds it: linear rows only (a row with quadratic terms is a quadratic
// constraint, invisible), ranged rows as Gurobi stores them (expr - s = L with an appended slack
// variable s in [0, U - L]), infinities as ±1e100. SOS sets, objective sense, objective constant
// and quadratic objective terms are dropped (invisible to the check).
CheckModel gurobi_view(const Model& model);

// N1 (singleton rows to bounds, no sign flip, overwrite), N2 (<= rows with |rhs| < 1e-9 negated
// to >= 0.0), N3 (= rows with |rhs| < 1e-9 negated when their coefficient sum is < 0), in order.
void normalize(CheckModel& model);
void normalize_singletons(CheckModel& model);  // N1 only
void normalize_zero_rhs(CheckModel& model);    // N2 then N3

// One value as ORGEval prints it: rounded to float32, "%.6f" of that value widened to double,
// "nan" for any NaN (glibc would print "-nan" for a negative one).
std::string fmt_value(double v);
void append_fmt(std::string& out, double v);
// Values joined by ',' without spaces.
std::string fmt_values(std::initializer_list<double> values);

// Bipartite graph: nodes 0..V-1 are the variables (model order), V..V+R-1 the rows. Adjacency in
// CSR form; every stored term is one edge, seen from both ends (parallel edges repeat).
struct Graph {
  int num_vars = 0, num_rows = 0;
  std::vector<std::string> colour0;       // initial node colours
  std::vector<int> offsets;               // size num_nodes()+1
  std::vector<int> nbr;                   // neighbour node per adjacency entry
  std::vector<int> edge;                  // edge colour id per adjacency entry
  std::vector<std::string> edge_colours;  // distinct edge colour strings, by id
  int num_nodes() const { return num_vars + num_rows; }
};
Graph build_graph(const CheckModel& model);

// Final WL colouring: class id per node and the colour string of each class.
struct Colouring {
  std::vector<int> node_class;
  std::vector<std::string> class_colour;
  int rounds = 0;
  std::string node_colour(int node) const { return class_colour[size_t(node_class[size_t(node)])]; }
};

// Readable reference: every node's MD5 input is built and hashed in every round.
Colouring wl_reference(const Graph& graph);

// Fast path with identical output: neighbour strings are ranked once per round and nodes with
// the same (own colour, sorted neighbour ranks) signature share one MD5. Buffers are reused.
class WlRefiner {
 public:
  Colouring refine(const Graph& graph);

 private:
  // Per-round scratch, kept between rounds and calls.
  std::vector<int64_t> entry_key_, pair_key_;
  std::vector<std::string> pair_text_;
  std::vector<int> pair_order_, pair_rank_, entry_rank_, node_order_, rank_text_;
  std::vector<std::string> new_colours_;
  std::vector<int> new_class_;
  std::string buffer_;
};

// Sufficiency of one graph under its final colouring: "WL-determinable" (every class has one node),
// "symmetric-decomposable" (no connected component of the subgraph induced by the nodes of
// multi-member classes holds two nodes of one class), else "Due to distinctness.".
std::string sufficiency(const Graph& graph, const Colouring& colouring);

inline constexpr std::string_view kWlDeterminable = "WL-determinable";
inline constexpr std::string_view kSymmetricDecomposable = "symmetric-decomposable";
inline constexpr std::string_view kDueToDistinctness = "Due to distinctness.";

}  // namespace trex::lp::orgeval
