// The algebraic problem instance (the generator IR): sets, indexed parameters, variable families,
// constraint families and the objective, the natural-language story parts, the gurobipy-style code
// body and the concrete lp::Model built from them. Every downstream stage (verification, rendering,
// answers, exports) reads only this struct.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "lp/model.hpp"
#include "ordata/phrasing.hpp"
#include "ordata/vocab.hpp"
#include "util/jsonl.hpp"

namespace trex::ordata {

struct SetDef {
  std::string symbol;       // "I"
  std::string key;          // data.json key, "plants"
  std::string description;  // "plants"
  std::vector<std::string> elements;
};

struct ParamDef {
  std::string symbol;       // "c[i,j]"
  std::string key;          // data.json key, "cost"
  std::string description;  // "shipping cost"
  std::string unit;         // "USD per ton"
  std::vector<int> dims;    // indices into Instance::sets (0, 1 or 2 of them)
  std::vector<double> values;  // row-major over dims
  int decimals = 0;         // prose precision
  double at(size_t i) const { return values[i]; }
};

struct VarDef {
  std::string symbol;       // "x[i,j]"
  std::string description;  // "tons shipped from plant i to customer j"
  std::string domain;       // "continuous, >= 0"
};

struct ConDef {
  std::string name;         // family name, also the row-name prefix ("supply")
  std::string formula;      // "sum_{j in J} x[i,j] <= s[i]   for all i in I"
  std::string description;  // "a plant cannot ship more than its supply"
};

struct Instance {
  Structure structure = Structure::GenericLpMip;
  std::string variant;
  Difficulty difficulty = Difficulty::Small;
  int domain = 0;
  uint64_t seed = 0;
  std::string name;  // model name, an identifier

  std::vector<SetDef> sets;
  std::vector<ParamDef> params;
  std::vector<VarDef> vars;
  std::vector<ConDef> constraints;
  lp::ObjSense sense = lp::ObjSense::Minimize;
  std::string objective_formula, objective_description, objective_unit;

  std::string intro;               // story paragraph (already phrased)
  std::vector<std::string> rules;  // constraints in words (already phrased)
  std::string goal;                // what to optimise, in words
  std::string python_body;         // gurobipy code after `data` is defined; ends before optimize()
  // What the generator drew of its phrasing (the manifest's diversity counts; not rendered): the narrative
  // scenario (-1: the family has one narrative) and every sentence template with its alternatives.
  int narrative = -1;
  std::vector<PhraseUse> phrasing;

  lp::Model model;

  // A family loaded from a family file (family_file.hpp): its name (the metadata's structure) and its CPT
  // pitfalls; empty for the built-in families.
  std::string family_name;
  std::vector<std::string> family_pitfalls;

  // Helpers for generators.
  int add_set(std::string symbol, std::string key, std::string description, std::vector<std::string> elements);
  int add_param(std::string symbol, std::string key, std::string description, std::string unit,
                std::vector<int> dims, std::vector<double> values, int decimals = 0);
  const ParamDef& param(const std::string& key) const;  // throws trex::Error when absent
  const SetDef& set(int i) const { return sets[size_t(i)]; }
};

// The structure name of the instance: a family file's name, else to_string(structure).
inline std::string structure_name(const Instance& inst) {
  return inst.family_name.empty() ? std::string(to_string(inst.structure)) : inst.family_name;
}

// data.json of the instance: each set as a list, each parameter as a number, {label: v} or
// {label: {label: v}}, in declaration order.
Json data_json(const Instance& inst);

// Adds a row to the model; terms with zero coefficients are dropped.
void add_row(lp::Model& m, std::string name, std::vector<lp::Term> terms, lp::RowSense sense, double rhs);

}  // namespace trex::ordata
