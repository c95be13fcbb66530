// Declarative problem families (issue 26 point 4): a TOML family file (docs/family-files.md) declares
// sets with per-difficulty sizes and label pools, parameters with random value expressions, variables,
// constraint and objective templates in a small algebraic language, and phrasing templates. This file
// holds the parsed form (FamilySpec), the expression AST shared by parser and interpreter, and the
// loader; every error is a trex::Error reading "FILE:LINE: what is wrong". The interpreter that draws an
// Instance from a spec is family_file_generate.cpp (generate_from_file).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ordata/instance.hpp"
#include "ordata/vocab.hpp"

namespace trex::ordata {

// Expression AST of parameter values, bounds, constraints and objectives.
struct Expr {
  enum Kind { Num, Ref, Call, Agg, Unary, Binary, Paren } kind = Num;
  double value = 0;                 // Num
  std::string text;                 // Num: the literal as written; Ref/Call: the name; Unary/Binary: the operator; Agg: sum|max|min
  std::vector<std::string> index;   // Ref: index variables ("x[i,j]")
  std::vector<std::shared_ptr<Expr>> args;  // Call arguments, Unary/Binary operands, Paren/Agg body (last)
  std::vector<std::pair<std::string, std::string>> binders;  // Agg: (index variable, set symbol)
  std::shared_ptr<Expr> filter;     // Agg: optional "if" condition
  int line = 0;                     // the file line of the expression's key (errors name it)
};
using ExprPtr = std::shared_ptr<Expr>;

struct FamilySetSpec {
  std::string symbol, index, key, description;
  std::array<int, 4> sizes{};
  int jitter = 1;
  std::vector<std::string> labels;  // the label pool (explicit, or a domain pool resolved at draw time)
  std::string domain_pool;          // products|resources|jobs|ingredients|attributes|assets|cities|people, or ""
  std::vector<std::string> variants;
  int line = 0;
};

struct FamilyParamSpec {
  std::string symbol, key, description, unit;
  std::vector<std::string> over;  // set symbols
  ExprPtr value;
  int decimals = 0;
  bool exported = true;           // false: a helper quantity, drawn but not in the data
  std::vector<std::string> variants;
  int line = 0;
};

// Parameters drawn element by element together (a loop over `over` drawing every member in turn).
struct FamilyGroupSpec {
  std::vector<std::string> over, members;
  int line = 0;
};

struct FamilyVarSpec {
  std::string symbol, description, type;  // type: continuous|integer|binary
  std::vector<std::string> over;
  ExprPtr lower, upper;                     // null upper: +inf (binary: 1)
  std::vector<std::string> variants;
  int line = 0;
};

struct FamilyConstraintSpec {
  std::string name, description;
  std::vector<std::pair<std::string, std::string>> forall;  // (index variable, set symbol)
  ExprPtr condition;                                        // optional "if"
  ExprPtr lhs, rhs;
  std::string sense;                                        // <=, >=, =
  std::vector<std::string> variants;
  int line = 0;
};

struct FamilyObjectiveSpec {
  std::string sense, description, unit;  // sense: minimize|maximize
  ExprPtr expr;
  std::vector<std::string> variants;
  int line = 0;
};

struct FamilyTextSpec {
  std::string text;
  std::vector<std::string> variants;
  int line = 0;
};

struct FamilySpec {
  std::string file, sha256;  // the file as named on the command line and the SHA-256 of its bytes
  std::string name, model_name, task_family;
  std::vector<std::string> variants, pitfalls;
  std::vector<FamilySetSpec> sets;
  std::vector<FamilyParamSpec> params;
  std::vector<FamilyGroupSpec> groups;
  std::vector<std::string> data_order;  // optional order of the exported parameters' keys
  std::vector<FamilyVarSpec> vars;
  std::vector<FamilyConstraintSpec> constraints;
  std::vector<FamilyObjectiveSpec> objectives;
  std::vector<FamilyTextSpec> intros, rules, goals;
  int line_of_name = 1;
};

// Reads and validates a family file (syntax, names, references, templates, a few trial draws per
// difficulty). Throws trex::Error "FILE:LINE: ..." on any problem.
std::shared_ptr<const FamilySpec> load_family_file(const std::string& path);
// The same from text (tests; `file` names it in errors).
std::shared_ptr<const FamilySpec> parse_family_text(const std::string& text, const std::string& file);

// Draws an instance of the family (family_file_generate.cpp); the counterpart of generate().
Instance generate_from_file(const FamilySpec& spec, Difficulty difficulty, int domain, uint64_t seed);
// One formulation line per variant (objective; constraints), for --list-families.
std::vector<std::string> file_family_formulations(const FamilySpec& spec);

}  // namespace trex::ordata
