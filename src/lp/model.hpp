// The LP/MILP model IR shared by the LP-file reader/writer, the solver backends and the ORGEval
// structural check. Quadratic terms, SOS sets and semi-continuous types are kept so they are never
// silently dropped: linear solvers refuse such models with SolveStatus::Unsupported.
#pragma once
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace trex::lp {

constexpr double kInf = std::numeric_limits<double>::infinity();

enum class VarType : uint8_t { Continuous, Integer, Binary, SemiContinuous, SemiInteger };
enum class RowSense : uint8_t { LE, GE, EQ, Range };  // Range: rhs <= expr <= range_upper
enum class ObjSense : uint8_t { Minimize, Maximize };

struct Variable {
  std::string name;
  VarType type = VarType::Continuous;
  double lb = 0.0;   // -kInf allowed
  double ub = kInf;  // +kInf allowed
};

struct Term {
  int var;
  double coef;
};

// coef * x[var1] * x[var2] as it contributes to the expression (the "[ ... ] / 2" halving already
// applied); var1 == var2 for squares.
struct QuadTerm {
  int var1, var2;
  double coef;
};

struct Row {
  std::string name;
  std::vector<Term> terms;  // linear part, in file order, one entry per variable
  std::vector<QuadTerm> quad;
  RowSense sense = RowSense::LE;
  double rhs = 0.0;
  double range_upper = 0.0;  // only for RowSense::Range
};

struct Objective {
  std::string name;
  ObjSense sense = ObjSense::Minimize;
  std::vector<Term> terms;  // one entry per variable
  std::vector<QuadTerm> quad;
  double constant = 0.0;    // a literal constant (Gurobi instead writes a `Constant` variable fixed to 1)
};

struct SosSet {
  std::string name;
  int type = 1;  // 1 or 2
  std::vector<Term> members;  // var, weight
};

class Model {
 public:
  std::string name;
  Objective objective;
  std::vector<Variable> vars;
  std::vector<Row> rows;
  std::vector<SosSet> sos;

  // Variables are created on first mention; returns the index.
  int add_var(const std::string& var_name, VarType type = VarType::Continuous, double lb = 0.0, double ub = kInf);
  int find_var(const std::string& var_name) const;  // -1 if absent
  int var_or_add(const std::string& var_name);      // find, else add with defaults
  void rebuild_index();                             // after editing vars by hand

  int num_vars() const { return int(vars.size()); }
  int num_rows() const { return int(rows.size()); }
  int64_t num_nonzeros() const;
  int num_integer_vars() const;  // integer + binary (+ semi-integer)
  bool has_quadratic() const;    // quadratic objective or any quadratic row
  bool has_integers() const { return num_integer_vars() > 0; }
  bool has_special() const;      // SOS sets or semi-continuous/semi-integer variables

  // Dense objective coefficient per variable (0 where absent).
  std::vector<double> objective_dense() const;

 private:
  std::unordered_map<std::string, int> index_;
};

const char* to_string(VarType t);
const char* to_string(RowSense s);
const char* to_string(ObjSense s);

}  // namespace trex::lp
