// The code-answer check of the synth pipeline (ordata/code_check.hpp): a long-lived Python worker runs
// programs through the gurobipy-compatible layer with solves answered in-process. A right program passes; a
// wrong coefficient, an exception, a non-zero exit, a missing or non-numeric optimal_value and an overrun
// are each caught with their reason; the worker survives bad programs (and is replaced after a timeout);
// every program sees only its own files; generated programs of every structure reproduce the objective; the
// verified solve is reused only for the very same model, and the reuse and reference (CBC) paths agree.
#include <gtest/gtest.h>

#include <filesystem>

#include "ordata/answers.hpp"
#include "ordata/code_check.hpp"
#include "ordata/families.hpp"
#include "ordata/render.hpp"
#include "ordata/verify.hpp"

using namespace trex::ordata;
namespace fs = std::filesystem;

namespace {

// max 3x + 2y  s.t.  x + y <= 4,  x + 3y <= 6,  x <= 3  ->  x = 3, y = 1, objective 11.
std::string program(const std::string& coef_x = "3") {
  return "import gurobipy as gp\nfrom gurobipy import GRB\n\nmodel = gp.Model('t')\n"
         "x = model.addVar(ub=3, name='x')\ny = model.addVar(name='y')\n"
         "model.setObjective(" + coef_x + " * x + 2 * y, GRB.MAXIMIZE)\n"
         "model.addConstr(x + y <= 4)\nmodel.addConstr(x + 3 * y <= 6)\nmodel.optimize()\n"
         "print(f\"optimal_value = {model.ObjVal}\")\n";
}

CodeRunnerConfig config(double time_limit = 30.0) {
  CodeRunnerConfig c = default_code_runner_config();
  c.time_limit_s = time_limit;
  return c;
}

}  // namespace

TEST(CodeCheck, ConfigFindsTheLayerAndTheWorker) {
  CodeRunnerConfig c = config();
  ASSERT_TRUE(fs::exists(c.worker_script)) << c.worker_script << " missing";
  EXPECT_NO_THROW(check_code_runner_config(c));
  CodeRunnerConfig bad = c;
  bad.worker_script = "/nonexistent/synth_code_worker.py";
  EXPECT_THROW(check_code_runner_config(bad), trex::Error);
  bad = c;
  bad.python = "/nonexistent/python3";
  EXPECT_THROW(check_code_runner_config(bad), trex::Error);
}

TEST(CodeCheck, RightProgramPassesAndWrongOnesAreCaught) {
  CodeRunner runner(config());
  CodeRun run;
  EXPECT_EQ(check_code_answer(runner, program(), {}, 11.0, &run), "") << run.detail;
  EXPECT_EQ(run.outcome, CodeRun::Ok);
  EXPECT_EQ(run.solves, 1);
  // A wrong coefficient: x's profit 4 instead of 3 gives 14.
  EXPECT_EQ(check_code_answer(runner, program("4"), {}, 11.0, &run), "code_objective_mismatch");
  double v = 0;
  ASSERT_TRUE(parse_optimal_value(run.stdout_text, v));
  EXPECT_DOUBLE_EQ(v, 14.0);
  // Within the LP check's tolerance: a gold value off by 1e-7 still matches; off by 1e-3 does not.
  EXPECT_EQ(check_code_answer(runner, program(), {}, 11.0 + 1e-7), "");
  EXPECT_EQ(check_code_answer(runner, program(), {}, 11.001), "code_objective_mismatch");
  EXPECT_EQ(check_code_answer(runner, "raise ValueError('boom')\n", {}, 11.0, &run), "code_failed");
  EXPECT_NE(run.detail.find("ValueError: boom"), std::string::npos) << run.detail;
  EXPECT_EQ(check_code_answer(runner, "import sys\nsys.exit(3)\n", {}, 11.0), "code_failed");
  EXPECT_EQ(check_code_answer(runner, "import sys\nprint('optimal_value = 11')\nsys.exit(0)\n", {}, 11.0), "");
  EXPECT_EQ(check_code_answer(runner, "print('done')\n", {}, 11.0), "code_no_objective");
  EXPECT_EQ(check_code_answer(runner, "print('optimal_value = ERROR')\n", {}, 11.0), "code_no_objective");
  EXPECT_EQ(check_code_answer(runner, "def f(:\n", {}, 11.0), "code_failed");
  // An infeasible model: the generated programs print ERROR when the status is not optimal.
  EXPECT_EQ(check_code_answer(runner,
                              "import gurobipy as gp\nfrom gurobipy import GRB\nm = gp.Model()\nx = m.addVar(ub=1)\n"
                              "m.addConstr(x >= 2)\nm.optimize()\nprint('optimal_value = ' + (str(m.ObjVal) if m.Status == GRB.OPTIMAL else 'ERROR'))\n",
                              {}, 11.0),
            "code_no_objective");
  // Nothing of an earlier program's globals survives into the next one.
  EXPECT_EQ(check_code_answer(runner, "secret = 5\nprint('optimal_value = 1')\n", {}, 1.0), "");
  EXPECT_EQ(check_code_answer(runner, "print('optimal_value =', secret)\n", {}, 5.0), "code_failed");
  EXPECT_EQ(runner.workers_started(), 1) << "bad programs must not cost the worker";
}

TEST(CodeCheck, ProgramsReadOnlyTheirOwnFiles) {
  CodeRunner runner(config());
  std::vector<DataFile> files = {{DataFile::Json, "data.json", "", "{\"cap\": 4}\n"}};
  std::string reader =
      "import json\nimport gurobipy as gp\nfrom gurobipy import GRB\n"
      "with open('data.json') as f:\n    data = json.load(f)\n"
      "model = gp.Model()\nx = model.addVar()\nmodel.setObjective(2 * x, GRB.MAXIMIZE)\n"
      "model.addConstr(x <= data['cap'])\nmodel.optimize()\nprint(f\"optimal_value = {model.ObjVal}\")\n";
  EXPECT_EQ(check_code_answer(runner, reader, files, 8.0), "");
  CodeRun run;
  EXPECT_EQ(check_code_answer(runner, reader, {}, 8.0, &run), "code_failed");  // a fresh folder: no data.json
  EXPECT_NE(run.detail.find("FileNotFoundError"), std::string::npos) << run.detail;
  EXPECT_EQ(check_code_answer(runner, "import os\nprint('optimal_value =', len(os.listdir('.')))\n", files, 1.0), "");
}

TEST(CodeCheck, OverrunIsKilledAndTheWorkerReplaced) {
  CodeRunner runner(config(1.0));
  EXPECT_EQ(check_code_answer(runner, program(), {}, 11.0), "");
  CodeRun run;
  EXPECT_EQ(check_code_answer(runner, "while True:\n    pass\n", {}, 11.0, &run), "code_timeout");
  EXPECT_GE(run.seconds, 0.9);
  EXPECT_LT(run.seconds, 20.0);
  EXPECT_EQ(check_code_answer(runner, program(), {}, 11.0), "");
  EXPECT_EQ(runner.workers_started(), 2);
  // A program that ends the worker itself is a crash; the next program gets a new worker.
  EXPECT_EQ(check_code_answer(runner, "import os\nos._exit(0)\n", {}, 11.0), "code_crashed");
  EXPECT_EQ(check_code_answer(runner, program(), {}, 11.0), "");
  EXPECT_EQ(runner.workers_started(), 3);
}

TEST(CodeCheck, ParseOptimalValue) {
  double v = 0;
  EXPECT_TRUE(parse_optimal_value("optimal_value = 12.5\n", v));
  EXPECT_DOUBLE_EQ(v, 12.5);
  EXPECT_TRUE(parse_optimal_value("log\noptimal_value = 1\noptimal_value = -3e-2\n", v));  // the last line counts
  EXPECT_DOUBLE_EQ(v, -0.03);
  EXPECT_FALSE(parse_optimal_value("optimal_value = ERROR\n", v));
  EXPECT_FALSE(parse_optimal_value("optimal_value = 12 tons\n", v));
  EXPECT_FALSE(parse_optimal_value("optimal_value = inf\n", v));
  EXPECT_FALSE(parse_optimal_value("x optimal_value = 3\n", v));
  EXPECT_FALSE(parse_optimal_value("", v));
}

// The generated programs of every structure (data embedded, and reading data.json + CSV files) reproduce
// the verified objective on this path.
TEST(CodeCheck, GeneratedProgramsOfEveryStructurePass) {
  CodeRunner runner(config());
  trex::Rng rng(11);
  for (int st = 0; st < kNumStructures; ++st) {
    Verification v;
    Instance in;
    for (uint64_t seed = 1;; ++seed) {
      in = generate(Structure(st), Difficulty::Medium, st % num_domains(), seed);
      v = verify_instance(in);
      if (v.accepted) break;
    }
    RenderedProblem p = render_problem(in, Mode::DP, rng);
    CodeRun run;
    EXPECT_EQ(check_code_answer(runner, python_program(in, p.data, nullptr), {}, v.objective, &run), "")
        << to_string(Structure(st)) << ": " << run.detail << run.stdout_text;
    for (DataLayout layout : {DataLayout::JsonOnly, DataLayout::JsonCsv}) {
      std::vector<DataFile> files = data_files(in, p.data, layout);
      EXPECT_EQ(check_code_answer(runner, python_program(in, p.data, &files), files, v.objective, &run), "")
          << to_string(Structure(st)) << " " << to_string(layout) << ": " << run.detail << run.stdout_text;
    }
  }
  EXPECT_EQ(runner.workers_started(), 1);
}

// The verified solve is reused only for the very same model (names aside): the layer's LP of program()
// matches a hand-built copy of the model, so its solve is answered from the KnownSolve (a planted wrong point
// shows it is); variables created in another order, or another coefficient, do not match and are solved
// with CBC; with reuse off (the reference path) the match is still reported but CBC solves it.
TEST(CodeCheck, VerifiedSolveIsReusedOnlyForTheSameModel) {
  trex::lp::Model ref;
  int x = ref.add_var("x", trex::lp::VarType::Continuous, 0.0, 3.0);
  int y = ref.add_var("y");
  ref.objective.sense = trex::lp::ObjSense::Maximize;
  ref.objective.terms = {{x, 3.0}, {y, 2.0}};
  ref.rows.push_back({"c0", {{x, 1.0}, {y, 1.0}}, {}, trex::lp::RowSense::LE, 4.0, 0.0});
  ref.rows.push_back({"c1", {{x, 1.0}, {y, 3.0}}, {}, trex::lp::RowSense::LE, 6.0, 0.0});
  std::vector<double> optimum = {3.0, 1.0}, planted = {1.0, 1.0};
  CodeRunner runner(config());
  CodeRun run;
  KnownSolve known{&ref, &optimum, true};
  EXPECT_EQ(check_code_answer(runner, program(), {}, 11.0, &run, &known), "") << run.detail;
  EXPECT_EQ(run.same_model, 1);
  EXPECT_EQ(run.reused, 1);
  KnownSolve wrong{&ref, &planted, true};  // 3 * 1 + 2 * 1 = 5: proves the reply came from the KnownSolve
  EXPECT_EQ(check_code_answer(runner, program(), {}, 11.0, &run, &wrong), "code_objective_mismatch");
  EXPECT_EQ(run.reused, 1);
  KnownSolve reference{&ref, &planted, false};  // reference path: solved with CBC whatever the KnownSolve says
  EXPECT_EQ(check_code_answer(runner, program(), {}, 11.0, &run, &reference), "");
  EXPECT_EQ(run.same_model, 1);
  EXPECT_EQ(run.reused, 0);
  // Another coefficient: no match, solved, caught.
  EXPECT_EQ(check_code_answer(runner, program("4"), {}, 11.0, &run, &wrong), "code_objective_mismatch");
  EXPECT_EQ(run.same_model, 0);
  EXPECT_EQ(run.reused, 0);
  // The same model with the variables created the other way round: C0 is y, so no match; CBC solves it.
  std::string swapped = program();
  size_t px = swapped.find("x = model.addVar(ub=3, name='x')\n");
  ASSERT_NE(px, std::string::npos);
  swapped.erase(px, std::string("x = model.addVar(ub=3, name='x')\n").size());
  swapped.insert(swapped.find("model.setObjective"), "x = model.addVar(ub=3, name='x')\n");
  EXPECT_EQ(check_code_answer(runner, swapped, {}, 11.0, &run, &wrong), "") << swapped;
  EXPECT_EQ(run.same_model, 0);
  EXPECT_EQ(run.reused, 0);
}

// Generated programs against their instance's verified solve: the fast path (reuse) and the reference path
// (CBC) give the same verdicts, and most generated programs build exactly the verified model.
TEST(CodeCheck, ReuseAndReferencePathsAgreeOnGeneratedPrograms) {
  CodeRunner runner(config());
  trex::Rng rng(5);
  int same = 0, total = 0;
  for (int st = 0; st < kNumStructures; ++st) {
    for (uint64_t seed = 1, found = 0; found < 2; ++seed) {
      Instance in = generate(Structure(st), Difficulty(seed % kNumDifficulties), 0, seed);
      Verification v = verify_instance(in);
      if (!v.accepted) continue;
      ++found;
      RenderedProblem p = render_problem(in, Mode::DP, rng);
      std::vector<DataFile> files = data_files(in, p.data, DataLayout::JsonCsv);
      for (const std::string& code : {python_program(in, p.data, nullptr), python_program(in, p.data, &files)}) {
        for (const std::string& bad : {std::string(), std::string("model.setObjective(2 * model.getObjective() + 1, model.ModelSense)\n")}) {
          std::string prog = code;
          if (!bad.empty()) prog.insert(prog.find("\nmodel.optimize()\n") + 1, bad);
          CodeRun fast, ref;
          KnownSolve reuse{&in.model, &v.x, true}, solve{&in.model, &v.x, false};
          std::string a = check_code_answer(runner, prog, files, v.objective, &fast, &reuse);
          std::string b = check_code_answer(runner, prog, files, v.objective, &ref, &solve);
          EXPECT_EQ(a, b) << to_string(Structure(st)) << " seed " << seed;
          EXPECT_EQ(a, bad.empty() ? "" : "code_objective_mismatch") << to_string(Structure(st)) << " seed " << seed << fast.detail;
          EXPECT_EQ(fast.same_model, ref.same_model);
          EXPECT_EQ(ref.reused, 0);
          if (bad.empty()) {
            ++total;
            same += fast.same_model;
          } else {
            EXPECT_EQ(fast.same_model, 0);
          }
        }
      }
    }
  }
  EXPECT_GE(same, total / 2) << same << " of " << total << " generated programs built the verified model";
}
