// Extraction rules of OR_BENCHMARKS.md §3, case by case.
#include <gtest/gtest.h>

#include "oreval/extract.hpp"

using namespace trex::oreval;

TEST(ExtractSolver, LongestPythonFenceWins) {
  std::string r = "intro\n```python\nshort()\n```\ntext\n```python\nmuch_longer_code()\n```\n```\nbare_but_even_longer_block_of_code()\n```";
  EXPECT_EQ(extract_code_solver(r), "much_longer_code()");
}

TEST(ExtractSolver, PythonTagIsCaseSensitive) {
  std::string r = "```Python\nx = 1\n```";
  // Not a ```python fence: the bare-fence rule applies and keeps the tag as code.
  EXPECT_EQ(extract_code_solver(r), "Python\nx = 1");
}

TEST(ExtractSolver, BareFencesPreferSubstantialBlocks) {
  std::string longcode(60, 'a');
  std::string r = "```\n" + longcode + "\n```\n```\nshort\n```";
  EXPECT_EQ(extract_code_solver(r), longcode);
  EXPECT_EQ(extract_code_solver("```\nab\n```\n```\nabc\n```"), "abc");
}

TEST(ExtractSolver, PythonTagsThenThinkTailThenWhole) {
  EXPECT_EQ(extract_code_solver("<think>x</think><PYTHON>\n code()\n</python>"), "code()");
  EXPECT_EQ(extract_code_solver("<think>reasoning</think>\n  final_code()  \n"), "final_code()");
  EXPECT_EQ(extract_code_solver("<think>a</think>b</redacted_reasoning> tail "), "tail");
  EXPECT_EQ(extract_code_solver("just text"), "just text");
  EXPECT_EQ(extract_code_solver(""), "");
  EXPECT_EQ(extract_code_solver("<think>only</think>   "), "<think>only</think>   ");
}

TEST(ExtractSolver, UnclosedFenceFallsThrough) {
  EXPECT_EQ(extract_code_solver("```python\nx = 1\n"), "```python\nx = 1\n");
}

TEST(ExtractOrgeval, PrefersTailAfterThink) {
  std::string r = "<think>```python\nthinking_code_that_is_long()\n```</think>\n```python\nfinal()\n```";
  EXPECT_EQ(extract_code_orgeval(r), "final()");
}

TEST(ExtractOrgeval, FallsBackToWholeResponseFences) {
  std::string r = "<think>\n```python\ncode_in_thinking()\n```\n</think>\nno code here";
  EXPECT_EQ(extract_code_orgeval(r), "code_in_thinking()");
}

TEST(ExtractOrgeval, BareFenceWithoutFilterAndTail) {
  EXPECT_EQ(extract_code_orgeval("```\nab\n```"), "ab");
  EXPECT_EQ(extract_code_orgeval("<think>t</think> plain_code() "), "plain_code()");
  EXPECT_EQ(extract_code_orgeval("plain"), "plain");
}

TEST(ExtractLp, FencedLpBlock) {
  std::string r = "<think>```lp\nMinimize\n wrong\nEnd\n```</think>Answer:\n```lp\nMinimize\n obj: x\nSubject To\n c: x >= 1\nEnd\n```";
  EXPECT_EQ(*extract_lp_block(r), "Minimize\n obj: x\nSubject To\n c: x >= 1\nEnd");
}

TEST(ExtractLp, BareFenceWithObjectiveAndUnfenced) {
  EXPECT_EQ(*extract_lp_block("```\nMaximize\n x\nEnd\n```"), "Maximize\n x\nEnd");
  EXPECT_EQ(*extract_lp_block("Here it is.\nMinimize\n x\nSubject To\n c: x >= 2\nEnd\nDone."),
            "Minimize\n x\nSubject To\n c: x >= 2\nEnd");
  EXPECT_FALSE(extract_lp_block("no model at all").has_value());
  EXPECT_FALSE(extract_lp_block("```\nprint(1)\n```").has_value());
}

// Which executor runs a code answer: the first of gurobipy / coptpy / pulp it imports; else a modelling package
// trex does not run is named; else the report's default (gurobipy).
TEST(DetectApi, ImportsPickTheExecutor) {
  EXPECT_EQ(detect_api("import coptpy as cp\nfrom coptpy import COPT\nenv = cp.Envr()\n").api, "coptpy");
  EXPECT_EQ(detect_api("from pulp import *\nprob = LpProblem('p', LpMaximize)\n").api, "pulp");
  EXPECT_EQ(detect_api("import json\nimport gurobipy as gp\n").api, "gurobipy");
  EXPECT_TRUE(detect_api("import gurobipy as gp").explicit_import);
  // Indented (inside try/def), several per line, dotted and aliased names, `;`-separated statements.
  EXPECT_EQ(detect_api("try:\n    import numpy as np, pulp as pl\nexcept ImportError:\n    pass\n").api, "pulp");
  EXPECT_EQ(detect_api("import json; import coptpy\n").api, "coptpy");
  EXPECT_EQ(detect_api("from coptpy.coptpy import COPT\n").api, "coptpy");
  // The first supported import wins.
  EXPECT_EQ(detect_api("import pulp\nimport gurobipy\n").api, "pulp");
  // Mentions that are not imports do not count: comments, strings, attribute names.
  auto none = detect_api("# import pulp\nprint('import coptpy')\nx.importpulp = 1\nm = gp.Model()\n");
  EXPECT_EQ(none.api, "gurobipy");
  EXPECT_FALSE(none.explicit_import);
  EXPECT_EQ(none.name(), "gurobipy");
}

TEST(DetectApi, UnsupportedModellingPackagesAreNamed) {
  for (const char* code : {"import pyomo.environ as pyo\n", "from pyomo.environ import *\n",
                           "from ortools.linear_solver import pywraplp\n", "import cvxpy as cp\n",
                           "from scipy.optimize import linprog\n"}) {
    AnswerApi a = detect_api(code);
    EXPECT_TRUE(a.api.empty()) << code;
    EXPECT_FALSE(a.unsupported.empty()) << code;
    EXPECT_EQ(a.name(), a.unsupported);
  }
  EXPECT_EQ(detect_api("import pyomo.environ as pyo\n").unsupported, "pyomo");
  EXPECT_EQ(detect_api("from ortools.linear_solver import pywraplp\n").unsupported, "ortools");
  // A supported API imported beside one trex does not run decides (e.g. numpy/scipy helpers next to gurobipy).
  EXPECT_EQ(detect_api("from scipy import stats\nimport gurobipy as gp\n").api, "gurobipy");
  // Unknown packages (numpy, pandas, the answer's own helpers) are no modelling API: the default applies.
  EXPECT_EQ(detect_api("import numpy as np\nimport pandas as pd\n").api, "gurobipy");
}

TEST(DetectApi, ImportedModulesInOrder) {
  EXPECT_EQ(imported_modules("import a.b as c, d\nfrom e.f import g\nfrom . import h\nimport a\n  from  i  import j\n"),
            (std::vector<std::string>{"a", "d", "e", "i"}));
  EXPECT_TRUE(imported_modules("important = 1\nfromage = 2\nimport\n").empty());
}
