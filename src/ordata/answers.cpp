// Prompts, answers, repair flaws and the LP answer check.
#include "ordata/answers.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "lp/lp_format.hpp"
#include "ordata/families.hpp"
#include "ordata/phrasing.hpp"
#include "util/error.hpp"

namespace trex::ordata {

namespace {

std::string fmt_objective(double v) {
  std::string s = fmt::format("{:.6f}", v);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

std::string symbol_head(const std::string& symbol) { return symbol.substr(0, symbol.find('[')); }

std::string checklist(const Instance& in) {
  std::string s = "Checklist:\n1. Decision variables: ";
  for (size_t i = 0; i < in.vars.size(); ++i)
    s += (i ? "; " : "") + in.vars[i].symbol + " = " + in.vars[i].description;
  s += ".\n2. Objective: " + std::string(in.sense == lp::ObjSense::Minimize ? "minimize " : "maximize ") +
       in.objective_description + " (" + in.objective_unit + ").\n3. Constraints: ";
  for (size_t i = 0; i < in.constraints.size(); ++i)
    s += (i ? "; " : "") + in.constraints[i].name + " (" + in.constraints[i].description + ")";
  s += ".\n4. Types and bounds: ";
  for (size_t i = 0; i < in.vars.size(); ++i) s += (i ? "; " : "") + in.vars[i].symbol + " " + in.vars[i].domain;
  return s + ".";
}

std::string algebraic_model(const Instance& in) {
  std::string s = "Sets:\n";
  for (const auto& set : in.sets) {
    std::vector<std::string> el;
    for (const auto& e : set.elements) el.push_back(e);
    s += "- " + set.symbol + ": " + set.description + " = {" + fmt::format("{}", fmt::join(el, ", ")) + "}\n";
  }
  s += "Parameters:\n";
  for (const auto& p : in.params) s += "- " + p.symbol + ": " + p.description + (p.unit.empty() ? "" : " (" + p.unit + ")") + "\n";
  s += "Decision variables:\n";
  for (const auto& v : in.vars) s += "- " + v.symbol + ": " + v.description + "; " + v.domain + "\n";
  s += "Objective:\n- " + in.objective_formula + "   (" + in.objective_description + ")\n";
  s += "Constraints:\n";
  for (const auto& c : in.constraints) s += "- " + c.name + ": " + c.formula + "   (" + c.description + ")\n";
  return s;
}

std::string strip_lp_comments(const std::string& lp) {
  std::string out;
  size_t pos = 0;
  while (pos < lp.size()) {
    size_t end = lp.find('\n', pos);
    if (end == std::string::npos) end = lp.size() - 1;
    if (lp[pos] != '\\') out.append(lp, pos, end - pos + 1);
    pos = end + 1;
  }
  return out;
}

bool is_integral(lp::VarType t) { return t == lp::VarType::Integer || t == lp::VarType::Binary; }

}  // namespace

// The writer's "\\ ..." comment header is dropped: answers stay short and regular.
std::string reference_lp(const Instance& inst) { return strip_lp_comments(lp::write_lp_string(inst.model)); }

std::string python_program(const Instance& inst, const Json& data, const std::vector<DataFile>* files) {
  std::string s = (files ? python_imports(*files) : std::string("import json\n")) + "import gurobipy as gp\nfrom gurobipy import GRB\n\n";
  if (files) s += python_data_loader(*files) + "\n";
  else s += "data = " + data_json_text(data) + "\n\n";
  s += detail::python_bindings(inst) + "\n" + inst.python_body;
  s += "\nmodel.optimize()\n"
       "if model.Status == GRB.OPTIMAL:\n"
       "    print(f\"optimal_value = {model.ObjVal}\")\n"
       "else:\n"
       "    print(\"optimal_value = ERROR\")\n";
  return s;
}

std::vector<DataFile> answer_files(const Instance& inst, const RenderedProblem& problem) {
  if (!problem.files.empty()) return problem.files;
  return data_files(inst, problem.data, DataLayout::JsonOnly);
}

std::string check_data_files(const std::vector<DataFile>& files, const Json& data) {
  try {
    if (read_data_files(files) != data) return "data_files_mismatch";
  } catch (const Error&) {
    return "data_files_unreadable";
  }
  return "";
}

std::string extract_fenced_block(const std::string& text, const std::string& lang) {
  std::string best;
  size_t pos = 0;
  const std::string open = "```" + lang + "\n";
  while ((pos = text.find(open, pos)) != std::string::npos) {
    size_t start = pos + open.size();
    size_t end = text.find("```", start);
    if (end == std::string::npos) break;
    if (end - start > best.size()) best = text.substr(start, end - start);
    pos = end + 3;
  }
  return best;
}

std::string extract_lp_block(const std::string& text) { return extract_fenced_block(text, "lp"); }

std::optional<Flaw> make_flaw(const Instance& in, const Verification& v, Rng& rng) {
  std::vector<std::string> kinds = {"wrong_var_type", "wrong_sense", "missing_constraint", "wrong_coefficient"};
  rng.shuffle(kinds);
  for (const auto& kind : kinds) {
    Flaw f;
    f.kind = kind;
    f.model = in.model;
    if (kind == "wrong_var_type") {
      if (in.model.has_integers()) {
        std::vector<std::string> heads;
        for (auto& var : f.model.vars)
          if (is_integral(var.type)) {
            std::string h = var.name.substr(0, var.name.find('_'));
            if (std::find(heads.begin(), heads.end(), h) == heads.end()) heads.push_back(h);
            var.type = lp::VarType::Continuous;
          }
        std::vector<std::string> syms;
        for (const auto& vd : in.vars)
          if (std::find(heads.begin(), heads.end(), symbol_head(vd.symbol)) != heads.end()) syms.push_back(vd.symbol + " (" + vd.domain + ")");
        f.diagnosis = "Wrong variable type: " + join_list(syms) +
                      " must take whole values, but the LP declares them continuous (no General/Binary section for them), "
                      "so the solver returns a fractional relaxation instead of the true optimum.";
      } else {
        for (auto& var : f.model.vars) var.type = lp::VarType::Integer;
        std::vector<std::string> syms;
        for (const auto& vd : in.vars) syms.push_back(vd.symbol);
        f.diagnosis = "Wrong variable type: " + join_list(syms) +
                      " are declared integer (General section), but the problem allows fractional amounts; "
                      "forcing integrality cuts off the true optimum. They must be continuous.";
      }
    } else if (kind == "wrong_sense") {
      bool was_min = in.sense == lp::ObjSense::Minimize;
      f.model.objective.sense = was_min ? lp::ObjSense::Maximize : lp::ObjSense::Minimize;
      f.diagnosis = std::string("Wrong objective sense: the LP ") + (was_min ? "maximizes" : "minimizes") + " the " +
                    in.objective_description + ", but the problem asks to " + (was_min ? "minimize" : "maximize") + " it.";
    } else if (kind == "missing_constraint") {
      if (in.constraints.empty()) continue;
      const ConDef& c = in.constraints[size_t(rng.uniform_int(0, int64_t(in.constraints.size()) - 1))];
      std::vector<lp::Row> kept;
      for (auto& r : f.model.rows)
        if (!(r.name == c.name || r.name.rfind(c.name + "_", 0) == 0)) kept.push_back(std::move(r));
      if (kept.size() == in.model.rows.size()) continue;
      f.model.rows = std::move(kept);
      f.diagnosis = "Missing constraint: the " + c.name + " constraints (" + c.description + ") are absent. They read " +
                    c.formula + ".";
    } else {
      std::vector<int> cand;
      for (int r = 0; r < int(in.model.rows.size()); ++r)
        if (!in.model.rows[size_t(r)].terms.empty()) cand.push_back(r);
      if (cand.empty()) continue;
      int r = cand[size_t(rng.uniform_int(0, int64_t(cand.size()) - 1))];
      auto& row = f.model.rows[size_t(r)];
      auto& term = row.terms[size_t(rng.uniform_int(0, int64_t(row.terms.size()) - 1))];
      double good = term.coef;
      static const double kFactors[] = {2.0, 3.0, 0.5, 10.0};
      double bad = good * kFactors[rng.uniform_int(0, 3)];
      term.coef = bad;
      f.diagnosis = "Wrong coefficient: in constraint " + row.name + " the coefficient of " + f.model.vars[size_t(term.var)].name +
                    " is " + fmt_objective(bad) + ", but the data give " + fmt_objective(good) + ".";
    }
    lp::SolveOptions opt;
    opt.time_limit = 20.0;
    auto r = lp::solve(f.model, lp::Backend::Cbc, opt);
    if (r.status == lp::SolveStatus::Optimal && objectives_match(round_objective(r.objective), v.objective)) continue;
    if (r.status == lp::SolveStatus::Optimal)
      f.diagnosis += " With this error the solver reports " + fmt_objective(round_objective(r.objective)) + " instead of the correct optimum.";
    else
      f.diagnosis += std::string(" With this error the model is ") + lp::to_string(r.status) + ".";
    return f;
  }
  return std::nullopt;
}

std::string lp_prompt(const RenderedProblem& problem, Rng& rng) {
  return problem.text + "\n\n" +
         expand(rng, "{Write the LP model of this problem in CPLEX LP format; do not solve it.|"
                     "Give the LP file (CPLEX LP format) for this problem without solving it.|"
                     "Formulate the problem and output only its LP file (CPLEX LP format).}");
}

TaskSample build_task(const Instance& in, const Verification& v, const RenderedProblem& problem, Task task,
                      const std::optional<Flaw>& flaw, Rng& rng) {
  TaskSample s;
  std::string unit = in.objective_unit.empty() ? "" : " " + in.objective_unit;
  switch (task) {
    case Task::FullModel: {
      if (rng.bernoulli(0.5))
        s.user = "Answer the following mathematical modeling question:\n" + problem.text + "\nPlease think step by step.";
      else
        s.user = problem.text + "\n\n" +
                 expand(rng, "{Formulate this as an optimization model|Build the mathematical model}: give a short checklist, "
                             "the algebraic model, the LP file and gurobipy code, and report the optimal objective value.");
      s.answer_lp = reference_lp(in);
      s.answer_code = python_program(in, problem.data, nullptr);
      s.assistant = "<think>\n" + checklist(in) + "\n</think>\n<model>\n" + algebraic_model(in) + "</model>\n\nLP file:\n```lp\n" +
                    s.answer_lp + "```\n\n<python>\n```python\n" + s.answer_code +
                    "```\n</python>\n\nOptimal objective value: " + fmt_objective(v.objective) + unit + ".";
      break;
    }
    case Task::CodeOnly: {
      std::vector<DataFile> files = answer_files(in, problem);
      std::string where;
      if (layout_of(files) == DataLayout::JsonOnly) {
        where = "The instance data are provided as `data.json` in the working directory, with these keys:\n";
      } else {
        std::vector<std::string> csvs;
        for (const auto& f : files)
          if (f.kind != DataFile::Json) csvs.push_back("`" + f.name + "`");
        where = "The instance data are provided in the working directory as `data.json` (sets and scalars) and the CSV files " +
                join_list(csvs) + " (first column: the row labels; header: the column names), with these keys:\n";
      }
      s.user = "# Problem Description\n" + problem.text + "\n\n# Data Description\n" + where + data_key_list(in, files) +
               "\nWrite Python code with gurobipy that reads " +
               (layout_of(files) == DataLayout::JsonOnly ? std::string("`data.json`") : std::string("these files")) +
               ", builds and solves the model, keeps it in a variable named `model` and prints `optimal_value = <value>`. "
               "Output only the code.";
      s.answer_code = python_program(in, problem.data, &files);
      s.assistant = "```python\n" + s.answer_code + "```";
      break;
    }
    case Task::LpStructure: {
      s.user = lp_prompt(problem, rng);
      s.answer_lp = reference_lp(in);
      s.assistant = "```lp\n" + s.answer_lp + "```";
      break;
    }
    case Task::Repair: {
      if (!flaw) throw Error("ordata: repair task without a flaw");
      s.user = problem.text + "\n\n" +
               expand(rng, "{The following LP model was written for this problem, but it contains an error:|"
                           "A colleague wrote this LP file for the problem; it gives a wrong result:}") +
               "\n```lp\n" + strip_lp_comments(lp::write_lp_string(flaw->model)) + "```\n" +
               expand(rng, "{Find the error, explain it and give the corrected LP file.|Diagnose the mistake and provide the corrected LP.}");
      s.answer_lp = reference_lp(in);
      s.assistant = "Diagnosis: " + flaw->diagnosis + "\n\nCorrected LP:\n```lp\n" + s.answer_lp +
                    "```\n\nThe corrected model is optimal with objective value " + fmt_objective(v.objective) + unit + ".";
      break;
    }
  }
  return s;
}

std::string check_answer(const TaskSample& sample, double objective) {
  if (sample.answer_lp.empty()) return "";
  std::string block = extract_lp_block(sample.assistant);
  if (block != sample.answer_lp) return "answer_lp_not_extractable";
  lp::Model m;
  try {
    m = lp::read_lp_string(block, "answer.lp");
  } catch (const Error& e) {
    return "answer_lp_unreadable";
  }
  auto r = lp::solve(m, lp::Backend::Cbc);
  if (r.status != lp::SolveStatus::Optimal) return "answer_lp_not_optimal";
  if (!objectives_match(round_objective(r.objective), objective)) return "answer_lp_objective_mismatch";
  return "";
}

}  // namespace trex::ordata
