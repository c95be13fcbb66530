// Fork server (oreval/forkserver.hpp): the sandbox tests of sandbox_test.cpp again, for answers forked from
// the pre-imported Python server; runs behave like `python3 SCRIPT` and are independent of each other; the
// solve channel answers what `trex solve --json --values` prints; and `trex eval` scores the same items
// identically with and without the server (--no-forkserver is the reference path).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "oreval/forkserver.hpp"
#include "sandbox_test_util.hpp"
#include "util/atomic_file.hpp"
#include "util/jsonl.hpp"
#include "benchmarks_dir.hpp"

namespace fs = std::filesystem;
using trex::oreval::PythonForkServer;
using trex::oreval::run_sandboxed;
using trex::oreval::SandboxResult;
using trex::oreval::SandboxSpec;

namespace {

const std::string kPython = "/usr/bin/python3";

std::vector<std::string> fixed_env() {
  return {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1", "PYTHONHASHSEED=0",
          "OPENBLAS_NUM_THREADS=1", "PYTHONPATH=" + (fs::path(TREX_SOURCE_DIR) / "python" / "shim").string(),
          std::string("TREX_BIN=") + TREX_BIN_PATH};
}

// One server for the whole file (starting it is what the server exists to avoid), with numpy pre-imported like
// trex eval's second server.
std::shared_ptr<PythonForkServer> server() {
  static std::shared_ptr<PythonForkServer> s = [] {
    std::string why;
    auto p = PythonForkServer::start(kPython, fs::path(TREX_SOURCE_DIR) / "python" / "sandbox_forkserver.py",
                                     fixed_env(), {"numpy"}, &why);
    if (!p && ::geteuid() == 0) ADD_FAILURE() << "fork server did not start: " << why;
    return p;
  }();
  return s;
}

#define NEED_SERVER()                                                                      \
  if (::geteuid() != 0) GTEST_SKIP() << "the fork server needs root (namespaces)";         \
  auto srv = server();                                                                     \
  ASSERT_TRUE(srv)

struct ForkServerDir : trex::oreval::testing::TempDir {
  ForkServerDir() : trex::oreval::testing::TempDir("trex_fks_test_") {}
};

SandboxSpec python(const ForkServerDir& dir, const std::string& code, double wall = 20, double cpu = 10) {
  return trex::oreval::testing::python_spec(dir, code, fixed_env(), wall, cpu);
}

}  // namespace

TEST(ForkServer, RunsLikeThePythonInterpreter) {
  NEED_SERVER();
  ForkServerDir d;
  const std::string code =
      "import os, sys, tempfile\nprint(__name__, sys.argv, os.getcwd() == os.environ['HOME'])\n"
      "print(sys.path[0] == os.getcwd(), tempfile.gettempdir() == os.environ['TMPDIR'])\n"
      "print('err', file=sys.stderr)\nopen('out.txt', 'w').write('x')\n";
  auto r = srv->run(python(d, code));
  ASSERT_TRUE(r.started) << r.error;
  EXPECT_EQ(r.exit_code, 0) << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "__main__ ['main.py'] True\nTrue True\n");
  EXPECT_EQ(r.stderr_data, "err\n");
  EXPECT_TRUE(fs::exists(d.path / "out.txt"));
  // The same program started as a process prints the same.
  ForkServerDir e;
  auto ref = run_sandboxed(python(e, code));
  EXPECT_EQ(ref.stdout_data, r.stdout_data);
}

TEST(ForkServer, ExitStatusAndUncaughtExceptions) {
  NEED_SERVER();
  ForkServerDir d;
  auto r = srv->run(python(d, "raise SystemExit(3)\n"));
  EXPECT_EQ(r.exit_code, 3);
  r = srv->run(python(d, "import sys\nsys.exit('bye')\n"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.stderr_data, "bye\n");
  r = srv->run(python(d, "print('before')\nraise ValueError('boom')\n"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.stdout_data, "before\n");
  EXPECT_NE(r.stderr_data.find("Traceback (most recent call last)"), std::string::npos);
  EXPECT_NE(r.stderr_data.find("ValueError: boom\n"), std::string::npos);
  r = srv->run(python(d, "import atexit\natexit.register(lambda: print('at exit'))\n"));
  EXPECT_EQ(r.stdout_data, "at exit\n");
}

TEST(ForkServer, RandomStateAndThreadsAsInAFreshInterpreter) {
  NEED_SERVER();
  ForkServerDir d;
  const std::string code = "import random, numpy\nprint(random.random(), numpy.random.random())\n";
  auto a = srv->run(python(d, code));
  auto b = srv->run(python(d, code));
  ASSERT_EQ(a.exit_code, 0) << a.stderr_data;
  EXPECT_NE(a.stdout_data, b.stdout_data) << "every run must get its own random seed";
  auto r = srv->run(python(d, "import threading, time\n"
                              "def late():\n    time.sleep(0.3)\n    print('thread done', flush=True)\n"
                              "threading.Thread(target=late).start()\nprint('main done', flush=True)\n"));
  EXPECT_EQ(r.stdout_data, "main done\nthread done\n") << r.stderr_data;
}

TEST(ForkServer, RunsDoNotSeeEachOther) {
  NEED_SERVER();
  ForkServerDir d;
  auto r = srv->run(python(d, "import json, gurobipy\njson.MARK = 1\ngurobipy.MARK = 1\nprint('set')\n"));
  EXPECT_EQ(r.stdout_data, "set\n");
  r = srv->run(python(d, "import json, gurobipy, os\nprint(hasattr(json, 'MARK'), hasattr(gurobipy, 'MARK'),"
                         " sorted(os.listdir('/proc/self/fd')))\n"));
  // Only stdin/stdout/stderr, the solve channel (3) and the listing's own descriptor are open.
  EXPECT_EQ(r.stdout_data, "False False ['0', '1', '2', '3', '4']\n") << r.stderr_data;
}

TEST(ForkServer, InfiniteLoopHitsCpuLimit) {
  NEED_SERVER();
  ForkServerDir d;
  auto r = srv->run(python(d, "while True:\n    pass\n", /*wall=*/20, /*cpu=*/1));
  ASSERT_TRUE(r.started);
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.cpu_limit) << "signal " << r.term_signal;
  EXPECT_LT(r.wall_seconds, 15.0);
}

TEST(ForkServer, SleepingProgramHitsWallLimit) {
  NEED_SERVER();
  ForkServerDir d;
  auto r = srv->run(python(d, "import time\ntime.sleep(60)\n", /*wall=*/1));
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_LT(r.wall_seconds, 5.0);
}

TEST(ForkServer, UnboundedAllocationIsStopped) {
  NEED_SERVER();
  ForkServerDir d;
  auto r = srv->run(python(d, "x = []\nwhile True:\n    x.append(bytearray(50_000_000))\n"));
  ASSERT_TRUE(r.started);
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.timed_out);
  EXPECT_NE(r.stderr_data.find("MemoryError"), std::string::npos) << r.stderr_data;
}

TEST(ForkServer, ForkBombIsContained) {
  NEED_SERVER();
  ForkServerDir d;
  auto r = srv->run(python(d, "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",
                           /*wall=*/3, /*cpu=*/3));
  ASSERT_TRUE(r.started);
  EXPECT_FALSE(r.ok());
  EXPECT_LT(r.wall_seconds, 10.0);
  int survivors = 0;
  for (auto& e : fs::directory_iterator("/proc")) {
    std::error_code ec;
    auto cwd = fs::read_symlink(e.path() / "cwd", ec);
    if (!ec && cwd == fs::canonical(d.path)) ++survivors;
  }
  EXPECT_EQ(survivors, 0);
  // The server still serves.
  ForkServerDir e;
  EXPECT_EQ(srv->run(python(e, "print(1)\n")).stdout_data, "1\n");
}

TEST(ForkServer, NoNetwork) {
  NEED_SERVER();
  int sock = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(sock, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(sock, 4), 0);
  socklen_t len = sizeof a;
  ::getsockname(sock, reinterpret_cast<sockaddr*>(&a), &len);
  ForkServerDir d;
  auto r = srv->run(python(d, "import socket\ns = socket.create_connection(('127.0.0.1', " +
                                  std::to_string(ntohs(a.sin_port)) + "), timeout=3)\nprint('connected')\n"));
  ::close(sock);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.stdout_data.find("connected"), std::string::npos);
}

TEST(ForkServer, WritesOutsideItsFolderAreRefused) {
  NEED_SERVER();
  ForkServerDir d;
  fs::path outside = fs::temp_directory_path() / ("trex_fks_escape_" + std::to_string(::getpid()));
  fs::remove(outside);
  auto r = srv->run(python(d, "open('" + outside.string() + "', 'w').write('escaped')\n"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_FALSE(fs::exists(outside));
  EXPECT_NE(r.stderr_data.find("Read-only file system"), std::string::npos) << r.stderr_data;
  fs::remove(outside);
}

TEST(ForkServer, FullIsolationAndNoCapabilities) {
  NEED_SERVER();
  ForkServerDir d;
  auto r = srv->run(python(d, "import os\nprint(os.getpid() > 1, open('/proc/self/status').read().split('CapEff:')[1].split()[0])\n"));
  EXPECT_EQ(r.stdout_data, "True 0000000000000000\n") << r.stderr_data;
  auto has = [&](const char* p) { return std::find(r.protections.begin(), r.protections.end(), p) != r.protections.end(); };
  for (const char* p : {"pid-namespace", "no-network", "read-only-fs", "cgroup-pids", "no-capabilities"})
    EXPECT_TRUE(has(p)) << p;
}

TEST(ForkServer, OnlyServesPythonScriptsWithItsSettings) {
  NEED_SERVER();
  ForkServerDir d;
  SandboxSpec s = python(d, "print(1)\n");
  EXPECT_TRUE(srv->serves(s));
  s.env.push_back("PYTHONHASHSEED=1");
  EXPECT_FALSE(srv->serves(s));
  s = python(d, "print(1)\n");
  s.argv = {"/bin/sh", "-c", "echo 1"};
  EXPECT_FALSE(srv->serves(s));
  EXPECT_FALSE(srv->run(s).started);
}

// The solve channel gives the layer the same answers as a `trex solve` subprocess (the reference path).
TEST(ForkServer, SolveChannelMatchesTrexSolveSubprocess) {
  NEED_SERVER();
  const std::string code =
      "import gurobipy as gp\nfrom gurobipy import GRB\nimport os\n"
      "m = gp.Model('t')\nx = m.addVars(3, vtype=GRB.INTEGER, ub=10, name='x')\ny = m.addVar(name='y')\n"
      "m.addConstr(2 * x[0] + 3 * x[1] + 4 * x[2] + y <= 17.5)\nm.addConstr(x[0] - x[1] >= -2)\n"
      "m.setObjective(3 * x[0] + 4 * x[1] + 5 * x[2] + 0.5 * y + 7, GRB.MAXIMIZE)\nm.optimize()\n"
      "print('service' if os.environ.get('TREX_SOLVE_FD') else 'subprocess')\n"
      "print(m.Status, repr(m.ObjVal), [repr(v.X) for v in m.getVars()])\n"
      "m.addConstr(y >= 100)\nm.optimize()\nprint(m.Status)\n";
  ForkServerDir a, b;
  auto fast = srv->run(python(a, code));
  auto ref = run_sandboxed(python(b, code));
  ASSERT_EQ(fast.exit_code, 0) << fast.stderr_data;
  ASSERT_EQ(ref.exit_code, 0) << ref.stderr_data;
  auto body = [](const std::string& s) { return s.substr(s.find('\n') + 1); };
  EXPECT_EQ(fast.stdout_data.substr(0, 8), "service\n");
  EXPECT_EQ(ref.stdout_data.substr(0, 11), "subprocess\n");
  EXPECT_EQ(body(fast.stdout_data), body(ref.stdout_data));
  EXPECT_NE(body(fast.stdout_data).find("\n3\n"), std::string::npos) << "second solve must be infeasible";
}

TEST(ForkServer, SolveRepliesAreTrexSolveJsonAndCached) {
  NEED_SERVER();
  ForkServerDir d;
  const std::string lp = "Maximize\n 3 x + 2 y\nSubject To\n c: x + y <= 4\n d: x + 3 y <= 6\nBounds\n x <= 3\nEnd\n";
  trex::write_file_atomic(d.path / "m.lp", lp);
  std::string cmd = std::string(TREX_BIN_PATH) + " solve " + (d.path / "m.lp").string() + " --json --values";
  std::string cli;
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) cli.append(buf, n);
  ASSERT_EQ(::pclose(p), 0);
  trex::Json want = trex::Json::parse(cli);
  std::size_t hits = srv->solves_cached();
  trex::Json got = trex::Json::parse(srv->solve_reply(trex::Json{{"lp", lp}, {"time_limit", 0.0}}.dump(), 60.0));
  for (const char* k : {"status", "objective", "sense", "vars", "rows", "nonzeros", "integers", "quadratic", "values"})
    EXPECT_EQ(got[k], want[k]) << k;
  std::string again = srv->solve_reply(trex::Json{{"lp", lp}, {"time_limit", 0.0}}.dump(), 60.0);
  EXPECT_EQ(trex::Json::parse(again)["values"], want["values"]);
  EXPECT_EQ(srv->solves_cached(), hits + 1);
  trex::Json bad = trex::Json::parse(srv->solve_reply("{\"lp\": \"Minimize\\n x +\\nEnd\\n\"}", 60.0));
  EXPECT_EQ(bad["status"], "error");
  EXPECT_EQ(trex::Json::parse(srv->solve_reply("not json", 60.0))["status"], "error");
}

// A program that abuses the solve channel (garbage, a giant header) only loses the channel.
TEST(ForkServer, GarbageOnTheSolveChannelIsHarmless) {
  NEED_SERVER();
  ForkServerDir d;
  auto r = srv->run(python(d, "import os\nos.write(3, b'x' * 100)\nprint(os.read(3, 10))\n"));
  EXPECT_EQ(r.stdout_data, "b''\n") << r.stderr_data;
  r = srv->run(python(d, "import os\nos.write(3, b'99999999999999\\n{')\nprint(os.read(3, 10))\n"));
  EXPECT_EQ(r.stdout_data, "b''\n") << r.stderr_data;
  r = srv->run(python(d, "import gurobipy as gp\nm = gp.Model()\nx = m.addVar()\nm.setObjective(x)\nm.optimize()\n"
                         "print(m.ObjVal)\n"));
  EXPECT_EQ(r.stdout_data, "0.0\n") << r.stderr_data;
}

namespace {

int run_eval(const std::vector<std::string>& args) {
  std::string cmd = std::string(TREX_BIN_PATH);
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += " > /dev/null 2>&1";
  return std::system(cmd.c_str());
}

std::map<std::string, trex::Json> results(const fs::path& out) {
  std::map<std::string, trex::Json> m;
  for (const char* b : {"nl4opt", "b4o_feasible", "b4o_orgeval"}) {
    trex::JsonlReader r(out / b / "results.jsonl");
    while (auto j = r.next()) {
      j->erase("seconds");
      m[(*j)["benchmark"].get<std::string>() + "/" + (*j)["id"].get<std::string>()] = *j;
    }
  }
  return m;
}

}  // namespace

// Same responses, same per-item results with the fork server and with a process per answer.
TEST(ForkServer, EvalScoresIdenticallyWithAndWithoutTheServer) {
  if (::geteuid() != 0) GTEST_SKIP() << "the fork server needs root (namespaces)";
  const std::string data = trex::testing::benchmarks_dir().string();
  ASSERT_TRUE(fs::exists(fs::path(data) / "bench4opt_orgeval.jsonl")) << "benchmark data missing in " << data;
  ForkServerDir d;
  // For every benchmark: its reference program where it has one, else (and also) hand-written answers that
  // succeed, miss, raise, import numpy, print, exit and loop.
  std::string responses;
  auto add = [&](const std::string& bench, const std::string& id, const std::string& code) {
    responses += trex::Json{{"id", id}, {"benchmark", bench}, {"response", "```python\n" + code + "\n```"}}.dump() + "\n";
  };
  const std::string ok = "m = gp.Model()\nx = m.addVar(name='x')\nm.addConstr(x >= {})\nm.setObjective(x)\nm.optimize()\n";
  std::vector<std::string> nl = {"NL4OPT_0", "NL4OPT_1", "NL4OPT_2", "NL4OPT_3", "NL4OPT_4", "NL4OPT_5"};
  std::ifstream f(fs::path(data) / "nl4opt.jsonl");
  std::string line;
  std::map<std::string, double> gold;
  while (std::getline(f, line)) {
    auto j = trex::Json::parse(line);
    gold[j["id"]] = j["answer"];
  }
  auto fill = [&](std::string s, double v) { return s.replace(s.find("{}"), 2, std::to_string(v)); };
  add("nl4opt", nl[0], fill(ok, gold[nl[0]]));
  add("nl4opt", nl[1], fill(ok, gold[nl[1]] + 1));
  add("nl4opt", nl[2], "import numpy as np\n" + fill(ok, gold[nl[2]]) + "print(np.arange(3).sum())\n");
  add("nl4opt", nl[3], "raise KeyError('k')\n");
  add("nl4opt", nl[4], "import sys\nsys.exit(0)\n");
  add("nl4opt", nl[5], "while True:\n    pass\n");
  std::string ids = "NL4OPT_0,NL4OPT_1,NL4OPT_2,NL4OPT_3,NL4OPT_4,NL4OPT_5";
  for (const char* name : {"bench4opt_feasible.jsonl", "bench4opt_orgeval.jsonl"}) {
    std::ifstream g(fs::path(data) / name);
    for (int k = 0; k < 6 && std::getline(g, line); ++k) {
      auto j = trex::Json::parse(line);
      add(std::string(name).find("feasible") != std::string::npos ? "b4o_feasible" : "b4o_orgeval", j["id"],
          j["reference_code"].get<std::string>());
      ids += "," + j["id"].get<std::string>();
    }
  }
  trex::write_file_atomic(d.path / "responses.jsonl", responses);
  std::vector<std::string> common = {"eval", "--responses", (d.path / "responses.jsonl").string(), "--data", data,
                                     "--benchmarks", "nl4opt,b4o_feasible,b4o_orgeval", "--ids", ids,
                                     "--concurrency", "2", "--solve-timeout", "4", "--json"};
  auto with = common, without = common;
  with.insert(with.end(), {"--out", (d.path / "fast").string()});
  without.insert(without.end(), {"--out", (d.path / "ref").string(), "--no-forkserver"});
  ASSERT_EQ(run_eval(with), 0);
  ASSERT_EQ(run_eval(without), 0);
  auto fast = results(d.path / "fast"), ref = results(d.path / "ref");
  ASSERT_GE(ref.size(), 18u);  // the id filter applies to every benchmark: a few B4O ids occur in both
  ASSERT_EQ(fast.size(), ref.size());
  for (auto& [key, want] : ref) {
    auto got = fast[key];
    if (want["kind"] == "timeout") {  // wall vs CPU limit may differ in the detail text
      EXPECT_EQ(got["kind"], "timeout") << key;
      continue;
    }
    EXPECT_EQ(got, want) << key;
  }
  EXPECT_EQ(fast["NL4OPT/NL4OPT_0"]["kind"], "success");
  EXPECT_EQ(fast["NL4OPT/NL4OPT_1"]["kind"], "wrong_objective");
  EXPECT_EQ(fast["NL4OPT/NL4OPT_2"]["kind"], "success");
  EXPECT_EQ(fast["NL4OPT/NL4OPT_3"]["kind"], "key_error");
  EXPECT_EQ(fast["NL4OPT/NL4OPT_4"]["kind"], "exec_error");
  EXPECT_EQ(fast["NL4OPT/NL4OPT_5"]["kind"], "timeout");
}
