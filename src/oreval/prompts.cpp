// Template texts. The wording follows the report's templates in our own words; the markers the
// protocol depends on (SYSTEM:/USER: split, <think>/<model>/<python> tags, data.json rules, the
// `optimal_value = ` print, the trailing [Problem Description]) are kept verbatim.
#include "oreval/prompts.hpp"

#include "oreval/extract.hpp"
#include "util/error.hpp"

namespace trex::oreval {
namespace {

const char* kChatTemplate =
    "SYSTEM: You are a helpful assistant with expertise in operations research and the Gurobi solver. Given an "
    "operations-research question, analyse it, build a detailed mathematical model, and write Gurobi code for the "
    "`gurobipy` package, version 12.x, installed in the current environment.\n"
    "Structure your answer in three steps:\n"
    "1. <think> Analyse the problem carefully: identify the decision variables, the objective and the constraints."
    "</think>\n"
    "2. <model> Write the complete mathematical model, stating explicitly: * Sets * Parameters * Decision Variables "
    "(and their types) * Objective Function * Constraints </model>\n"
    "3. <python> Give the Gurobi Python code that implements the model.</python>\n"
    "Answer in Markdown, with each step inside the tags above.\n\n"
    "USER: \n"
    "Answer the following mathematical modeling question:\n"
    "{{Question}}\n"
    "Please think step by step.";

const char* kB4oDataTemplate =
    "SYSTEM:\n"
    "You are a professional mathematical optimization expert. Solve the following optimization problem with Python "
    "and gurobipy, compatible with Gurobi 12.x.\n\n"
    "USER:\n"
    "# Problem Description\n"
    "{{Problem}}\n\n"
    "# Data Description\n"
    "The dataset file of this instance is {{DataPath}}.\n"
    "When your code is evaluated, the instance data is provided as a JSON file named data.json in the working "
    "directory.\n\n"
    "## IMPORTANT: File Path Base Directory\n"
    "{{WorkingDirectory}}\n\n"
    "CRITICAL INSTRUCTIONS FOR FILE READING:\n"
    "1. Read the instance data from the JSON file named data.json.\n"
    "2. Do not use absolute paths, or relative paths starting with ./, for the data file.\n"
    "3. Do not depend on any file other than data.json.\n\n"
    "Requirements:\n"
    "1. Formulate the mathematical model and write Python code that solves it.\n"
    "2. Use gurobipy with Gurobi 12.x as the solver.\n"
    "3. Use only the parameters given in the problem statement and in data.json.\n"
    "4. Keep the final Gurobi model in a variable named model.\n"
    "5. Give lower and upper bounds for every variable.\n"
    "6. Take care with the data types and dimensions of all variables and parameters.\n"
    "7. Derive any helper quantities clearly from the given data.\n"
    "8. Use Gurobi 12.x syntax; name constraints with the name= keyword, not extra positional arguments.\n"
    "9. Output Python code only, nothing else.\n\n"
    "# Output Format\n"
    "Answer with executable Python code that uses gurobipy directly.\n\n"
    "import gurobipy as gp\n"
    "from gurobipy import GRB\n\n"
    "# Read data from data.json\n"
    "# Create model\n"
    "model = gp.Model(\"optimization_problem\")\n\n"
    "# Decision variables\n"
    "# Objective\n"
    "# Constraints\n\n"
    "# Solve\n"
    "model.optimize()\n\n"
    "# Optional result printing\n"
    "if model.Status == GRB.OPTIMAL:\n"
    "\tprint(f\"optimal_value = {model.ObjVal}\")\n"
    "elif model.Status == GRB.INFEASIBLE:\n"
    "\tprint(\"optimal_value = INFEASIBLE\")\n"
    "elif model.Status == GRB.UNBOUNDED:\n"
    "\tprint(\"optimal_value = UNBOUNDED\")\n"
    "else:\n"
    "\tprint(\"optimal_value = ERROR\")\n\n"
    "Note: do not include if __name__ == \"__main__\": in your answer. Write the code directly, without wrapping it "
    "in functions.\n";

const char* kB4oLpTemplate =
    "You are an expert in optimization modeling and gurobipy. Build a model of the following optimization problem "
    "and implement it with the Gurobi Optimizer through the `gurobipy` package installed in the current environment "
    "(12.x). Requirements:\n\n"
    "1. Do not optimize or solve the model. Save the model as an `.lp` file instead.\n"
    "2. Give lower and upper bounds for every variable.\n"
    "3. Take care with the data types and dimensions of all variables and parameters.\n"
    "4. Do not use parameters that are not in the data file. If extra parameters are needed, define them clearly.\n"
    "5. Output Python code only, nothing else.\n"
    "6. Make sure the code runs as it is in Gurobi Optimizer and saves the `.lp` file.\n\n"
    "[Problem Description]";

const char* kLpSystem =
    "You are an operations-research modelling assistant. Formulate the user's optimization problem as a linear or "
    "mixed-integer program and answer with the model in LP-file format (CPLEX/Gurobi dialect) inside one ```lp "
    "block: an objective section (Minimize or Maximize), Subject To, Bounds, Generals or Binaries where needed, End.";

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size()) s.replace(p, from.size(), to);
}

}  // namespace

AnswerStyle parse_answer_style(const std::string& s) {
  if (s == "report" || s == "code") return AnswerStyle::Report;
  if (s == "lp") return AnswerStyle::Lp;
  throw Error("unknown answer style '" + s + "' (expected report or lp)");
}

const char* to_string(AnswerStyle s) { return s == AnswerStyle::Report ? "report" : "lp"; }

std::vector<ChatMessage> split_chat_template(const std::string& filled) {
  std::size_t sys = filled.find("SYSTEM:");
  std::size_t usr = filled.find("USER:");
  if (sys == std::string::npos || usr == std::string::npos || usr < sys) return {{"user", trim(filled)}};
  std::string system = trim(std::string_view(filled).substr(sys + 7, usr - sys - 7));
  std::string user = trim(std::string_view(filled).substr(usr + 5));
  return {{"system", system}, {"user", user}};
}

std::vector<ChatMessage> lp_style_messages(const std::string& problem) {
  return {{"system", kLpSystem}, {"user", problem}};
}

std::vector<ChatMessage> build_messages(const Benchmark& bench, const BenchItem& item, AnswerStyle style,
                                        const std::string& working_dir) {
  if (style == AnswerStyle::Lp) return lp_style_messages(item.problem);
  std::string t;
  switch (bench.prompt) {
    case PromptKind::Chat:
      t = kChatTemplate;
      replace_all(t, "{{Question}}", item.problem);
      return split_chat_template(t);
    case PromptKind::B4oData:
      t = kB4oDataTemplate;
      replace_all(t, "{{Problem}}", item.problem);
      replace_all(t, "{{DataPath}}", item.data_path);
      replace_all(t, "{{WorkingDirectory}}", working_dir);
      return split_chat_template(t);
    case PromptKind::B4oLp:
      t = kB4oLpTemplate;
      replace_all(t, "[Problem Description]", item.problem);
      return {{"user", t}};
  }
  return {};
}

}  // namespace trex::oreval
