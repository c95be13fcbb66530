// The four task categories (report §8/§9): the user prompt and the verified assistant answer for
// (1) full modelling (checklist -> algebraic model -> LP file -> gurobipy code -> optimal value),
// (2) code only (a gurobipy program reading data.json), (3) LP structure (the LP file, no solve) and
// (4) repair (a flawed LP with wrong variable type / objective sense / missing constraint / wrong
// coefficient; diagnosis and corrected LP). check_answer() re-reads the answer's LP and re-solves it.
#pragma once
#include <optional>
#include <string>

#include "ordata/render.hpp"
#include "ordata/verify.hpp"

namespace trex::ordata {

struct Flaw {
  std::string kind;       // wrong_var_type, wrong_sense, missing_constraint, wrong_coefficient
  std::string diagnosis;  // what is wrong and why
  lp::Model model;        // the flawed model
};

// A flaw whose solve result differs from the verified one (so the error is observable), or nullopt.
std::optional<Flaw> make_flaw(const Instance& inst, const Verification& v, Rng& rng);

struct TaskSample {
  std::string user, assistant;
  std::string answer_lp;    // the LP file inside the answer (empty for code only)
  std::string answer_code;  // the gurobipy program inside the answer (full model, code only; else empty)
};

// The gurobipy program: reads the data files (data.json, and the CSV tables of a JSON + CSV layout) when
// `files` is given, else embeds the data as a literal.
std::string python_program(const Instance& inst, const Json& data, const std::vector<DataFile>* files);

// The files a code answer reads: the problem's attachments (DPS), else data.json with all data.
std::vector<DataFile> answer_files(const Instance& inst, const RenderedProblem& problem);

// The reference LP file of the instance (lp::write_lp_string of its model).
std::string reference_lp(const Instance& inst);

TaskSample build_task(const Instance& inst, const Verification& v, const RenderedProblem& problem, Task task,
                      const std::optional<Flaw>& flaw, Rng& rng);

// Prompt of the held-out test items: the LP-structure prompt (the `lp` answer style).
std::string lp_prompt(const RenderedProblem& problem, Rng& rng);

// Pipeline check of an answer: its LP block (if any) read back with read_lp_string and solved with
// CBC must reproduce `objective`. Returns an empty string when fine, else the reason.
std::string check_answer(const TaskSample& sample, double objective);

// Pipeline check of the files a code answer reads: read back with read_data_files (the rules of the
// program's loader) they must give exactly the instance data. Empty when fine, else the reason.
std::string check_data_files(const std::vector<DataFile>& files, const Json& data);

// Longest ```lp fenced block of a text (empty when none): how the tests and the eval extract LPs.
// The longest ```<lang> fenced block in text ("" when there is none).
std::string extract_fenced_block(const std::string& text, const std::string& lang);
std::string extract_lp_block(const std::string& text);

}  // namespace trex::ordata
