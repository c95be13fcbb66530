// Response scoring: extraction, code rewriting, sandboxed execution, objective and structure checks.
#include "oreval/score.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>

#include "lp/equivalence.hpp"
#include "lp/lp_format.hpp"
#include "lp/solver.hpp"
#include "oreval/api_wrappers.hpp"
#include "oreval/extract.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/jsonl.hpp"

#ifndef TREX_SOURCE_DIR
#define TREX_SOURCE_DIR "."
#endif

namespace trex::oreval {
namespace fs = std::filesystem;

namespace {

// After the shared head (api_wrappers.hpp: runs the answer at module level inside a catch-all): finds `model`
// (else `m`), solves it if it is still unsolved; the shared tail prints one JSON line last (OR_BENCHMARKS.md §4.3).
const char* kGurobipyPart = R"PY(_trex_model = None
for _trex_name in ("model", "m"):
    _trex_obj = _trex_ns.get(_trex_name)
    if _trex_obj is not None and type(_trex_obj).__name__ == "Model" and callable(getattr(_trex_obj, "optimize", None)) \
            and (not _trex_require_objval or hasattr(_trex_obj, "ObjVal")):
        _trex_model = _trex_obj
        break
if _trex_model is None:
    _trex_out["status_name"] = "MODEL_NOT_FOUND"
else:
    try:
        try:
            _trex_model.Params.OutputFlag = 0
        except Exception:
            pass
        if _trex_model.Status == 1:
            _trex_model.optimize()
        _trex_st = _trex_model.Status
        _trex_out["status"] = _trex_st
        _trex_out["status_name"] = {1: "LOADED", 2: "OPTIMAL", 3: "INFEASIBLE", 4: "INF_OR_UNBD", 5: "UNBOUNDED", 9: "TIME_LIMIT"}.get(_trex_st, str(_trex_st))
        if _trex_st == 2:
            _trex_out["optimal_value"] = _trex_model.ObjVal
    except Exception as _trex_e:
        _trex_out["error_type"] = type(_trex_e).__name__
        _trex_out["error"] = str(_trex_e)[:500]
    _trex_layer_verdict(_trex_model)
)PY";

std::atomic<unsigned> g_workdir_counter{0};

struct WorkDir {
  fs::path path;
  bool keep;
  WorkDir(const fs::path& root, const std::string& id, bool keep_) : keep(keep_) {
    std::string safe;
    for (char c : id) safe += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') ? c : '_';
    path = root / (safe + "_" + std::to_string(::getpid()) + "_" + std::to_string(g_workdir_counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~WorkDir() {
    std::error_code ec;
    if (!keep) fs::remove_all(path, ec);
  }
  // Writes the instance as data.json and returns its absolute path.
  fs::path write_data(const Json& data) const {
    fs::path p = path / "data.json";
    write_file_atomic(p, data.dump());
    return p;
  }
};

Outcome failed(std::string kind, std::string detail = "") {
  Outcome o;
  o.kind = std::move(kind);
  o.detail = std::move(detail);
  return o;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size()) s.replace(p, from.size(), to);
}

bool contains(const std::string& s, const char* needle) { return s.find(needle) != std::string::npos; }

std::string add_imports(std::string code, bool gurobipy = true) {
  if (!contains(code, "import json") && !contains(code, "from json")) code = "import json\n" + code;
  if (gurobipy && !contains(code, "import gurobipy")) code = "import gurobipy as gp\n" + code;
  return code;
}

SandboxSpec python_spec(const ExecConfig& cfg, const fs::path& dir, const std::string& script, double wall) {
  SandboxSpec s;
  s.argv = {cfg.python.string(), script};
  s.workdir = dir;
  s.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + dir.string(), "TMPDIR=" + dir.string(), "LANG=C.UTF-8",
           "OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1", "MKL_NUM_THREADS=1", "PYTHONDONTWRITEBYTECODE=1",
           "PYTHONHASHSEED=0", "TREX_BIN=" + cfg.trex_bin.string()};
  if (cfg.executor == "trex" && !cfg.shim_dir.empty()) s.env.push_back("PYTHONPATH=" + cfg.shim_dir.string());
  s.limits.wall_seconds = wall;
  s.limits.cpu_seconds = wall;
  s.limits.memory_bytes = cfg.memory_bytes;
  return s;
}

// The fixed part of python_spec's environment, for the fork server (HOME/TMPDIR are set per run).
std::vector<std::string> interpreter_env(const ExecConfig& cfg) {
  return python_spec(cfg, cfg.work_root, "run.py", 1.0).env;
}

// Forking a server that holds numpy and pandas costs more per run (a bigger process to copy), so only answers
// that name them go there; the outcome is the same either way, only the time differs.
bool names_scientific_modules(const std::string& code) {
  return contains(code, "numpy") || contains(code, "pandas");
}

SandboxResult run_python(const ExecConfig& cfg, const SandboxSpec& spec, const std::string& code) {
  const auto& server = names_scientific_modules(code) && cfg.forkserver_scientific ? cfg.forkserver_scientific
                                                                                    : cfg.forkserver;
  if (server && server->serves(spec)) {
    SandboxResult r = server->run(spec);
    if (r.started || server->alive()) return r;
    // The server died: this run (and the following ones) take the reference path.
  }
  return run_sandboxed(spec);
}

// The last "SomeError: message" line of a Python traceback.
std::pair<std::string, std::string> last_exception(const std::string& stderr_text) {
  std::size_t end = stderr_text.size();
  while (end > 0) {
    std::size_t start = stderr_text.rfind('\n', end - 1);
    start = start == std::string::npos ? 0 : start + 1;
    std::string line = stderr_text.substr(start, end - start);
    end = start == 0 ? 0 : start - 1;
    if (line.empty() || line[0] == ' ') continue;
    std::size_t colon = line.find(':');
    std::string type = line.substr(0, colon);
    std::size_t dot = type.rfind('.');
    if (dot != std::string::npos) type = type.substr(dot + 1);
    bool ident = !type.empty();
    for (char c : type) ident = ident && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (ident && (type.find("Error") != std::string::npos || type.find("Exception") != std::string::npos ||
                  type == "KeyboardInterrupt" || type == "SystemExit"))
      return {type, colon == std::string::npos ? "" : trim(line.substr(colon + 1))};
  }
  return {"", ""};
}

Outcome sandbox_failure(const SandboxResult& r) {
  Outcome o;
  if (!r.started) {
    o.kind = "exec_error";
    o.detail = r.error;
  } else if (r.timed_out || r.cpu_limit) {
    o.kind = "timeout";
    o.detail = r.timed_out ? "wall-clock limit" : "CPU limit";
  } else if (r.term_signal != 0) {
    o.kind = r.term_signal == 9 ? "resource_limit" : "exec_error";
    o.detail = "killed by signal " + std::to_string(r.term_signal);
  } else {
    auto [type, msg] = last_exception(r.stderr_data);
    o.kind = type.empty() ? "exec_error" : failure_kind_for_exception(type, msg);
    o.detail = type.empty() ? trim(r.stderr_data.substr(r.stderr_data.size() > 300 ? r.stderr_data.size() - 300 : 0))
                            : type + ": " + msg;
  }
  return o;
}

std::optional<Json> parse_wrapper_output(const std::string& out) {
  std::string t = trim(out);
  try {
    return Json::parse(t);
  } catch (const std::exception&) {
  }
  std::size_t p = t.rfind("{\"status\":");
  if (p == std::string::npos) return std::nullopt;
  try {
    return Json::parse(t.substr(p));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

Json instance_data(const Benchmark& bench, const BenchItem& item) {
  if (bench.prompt == PromptKind::Chat || item.data.is_null()) return Json{{"question", item.problem}};
  return item.data;
}

Outcome score_objective_code(const Benchmark& bench, const BenchItem& item, const std::string& response,
                             const ExecConfig& cfg) {
  std::string code = extract_code_solver(response);
  if (trim(code).empty()) return failed("no_code");
  // The executor follows the answer's imports (extract.hpp detect_api; api_wrappers.hpp).
  const AnswerApi api = detect_api(code);
  if (!api.unsupported.empty()) return failed("unsupported_api", unsupported_api_detail(api.unsupported));
  const auto api_wrapper = api_solver_wrapper(api.api, cfg.shim_dir.parent_path());
  WorkDir wd(cfg.work_root, item.id, cfg.keep_workdirs);
  fs::path data = wd.write_data(instance_data(bench, item));
  // The report's `import gurobipy as gp` only for gurobipy answers (a coptpy / PuLP answer's interpreter need not
  // have it: PuLP's is Debian's python3, where gurobipy is only the shim).
  write_file_atomic(wd.path / "answer.py", rewrite_solver_code(code, data.string(), api.api == "gurobipy"));
  write_file_atomic(wd.path / "run.py", api_wrapper ? *api_wrapper
                                                    : std::string("_trex_require_objval = ") +
                                                          (cfg.solver_objval_quirk ? "True" : "False") + "\n" +
                                                          wrapper_head() + kGurobipyPart + wrapper_tail());
  SandboxSpec spec = python_spec(cfg, wd.path, "run.py", cfg.solve_timeout_s);
  if (auto py = api_interpreter(api.api)) spec.argv[0] = py->string();  // PuLP: Debian's python3-pulp
  SandboxResult r = run_python(cfg, spec, code);
  auto j = r.started && !r.timed_out && !r.cpu_limit ? parse_wrapper_output(r.stdout_data) : std::nullopt;
  if (!j) {
    Outcome o = sandbox_failure(r);
    if (o.kind == "exec_error" && r.started && r.exit_code == 0) o.detail = "no result line (exit() in the answer?)";
    return o;
  }
  Outcome o;
  o.status = j->value("status_name", Json()).is_string() ? (*j)["status_name"].get<std::string>() : "";
  std::string etype = j->value("error_type", Json()).is_string() ? (*j)["error_type"].get<std::string>() : "";
  std::string emsg = j->value("error", Json()).is_string() ? (*j)["error"].get<std::string>() : "";
  const Json& val = (*j)["optimal_value"];
  // trex's re-solves that checked a MILP verdict: the layers' last solve (gurobipy, coptpy), PuLP's CBC (api_wrappers)
  o.verdict_checks = j->value("verdict_checks", 0);
  o.verdict_overruled = j->value("verdict_overruled", false);
  if ((*j)["status"].is_number_integer() && (*j)["status"].get<int>() == 2 && val.is_number()) {
    o.code_pass = true;
    o.predicted = val.get<double>();
    if (item.answer && objective_matches(*o.predicted, *item.answer)) {
      o.success = true;
      o.kind = "success";
    } else {
      o.kind = "wrong_objective";
      o.detail = "predicted " + std::to_string(*o.predicted);
    }
    return o;
  }
  if (o.status == "MODEL_NOT_FOUND") {
    o.kind = etype.empty() ? "model_not_found" : failure_kind_for_exception(etype, emsg);
    o.detail = etype.empty() ? "no gurobipy model named model or m" : etype + ": " + emsg;
    return o;
  }
  if (!etype.empty()) {
    o.kind = failure_kind_for_exception(etype, emsg);
    o.detail = etype + ": " + emsg;
    return o;
  }
  o.kind = "not_optimal";
  o.detail = "status " + o.status;
  return o;
}

std::string equivalence_kind(const lp::EquivalenceResult& e) {
  if (e.reason == "var_num_check") return "var_count_mismatch";
  if (e.reason == "cons_num_check") return "constraint_count_mismatch";
  if (e.reason == "wl_check") return "wl_graph_mismatch";
  if (e.reason == "sufficient_check") return "structure_mismatch:sufficient_check";
  return "structure_mismatch:" + e.reason;
}

Outcome compare_structure(const BenchItem& item, const lp::Model& generated) {
  Outcome o;
  lp::Model reference = lp::read_lp_file(item.lp_file);  // a bad reference is the harness's error
  auto eq = lp::check_equivalence(reference, generated);
  o.code_pass = true;
  o.success = eq.equivalent;
  o.kind = eq.equivalent ? "success" : equivalence_kind(eq);
  o.detail = eq.sufficient_msg;
  return o;
}

Outcome score_structure_code(const BenchItem& item, const std::string& response, const ExecConfig& cfg) {
  std::string code = extract_code_orgeval(response);
  if (trim(code).empty()) return failed("no_code");
  if (const AnswerApi api = detect_api(code); !api.unsupported.empty() || api.api == "pulp")  // writes no LP file
    return failed("unsupported_api", unsupported_api_detail(api.name()) + " for structure targets");
  WorkDir wd(cfg.work_root, item.id, cfg.keep_workdirs);
  fs::path data = wd.write_data(item.data.is_null() ? Json::object() : item.data);
  fs::path target = wd.path / "model_output.lp";
  write_file_atomic(wd.path / "answer.py", rewrite_orgeval_code(code, data.string(), target.string(), cfg.orgeval_lb_quirk));
  SandboxResult r = run_python(cfg, python_spec(cfg, wd.path, "answer.py", cfg.orgeval_timeout_s), code);
  if (!fs::exists(target)) {
    Outcome o = sandbox_failure(r);
    if (o.kind == "exec_error" && r.started && r.exit_code == 0 && !r.timed_out) {
      o.kind = "lp_build_failure";
      o.detail = "the program wrote no LP file";
    }
    return o;
  }
  if (r.timed_out || r.cpu_limit) return failed("timeout");  // the whole attempt is limited (upstream)
  lp::Model generated;
  try {
    generated = lp::read_lp_file(target);
  } catch (const Error& e) {
    Outcome o;
    o.code_pass = true;
    o.kind = "lp_build_failure";
    o.detail = e.what();
    return o;
  }
  return compare_structure(item, generated);
}

Outcome score_lp_answer(const Benchmark& bench, const BenchItem& item, const std::string& response,
                        const ExecConfig& cfg) {
  Outcome o;
  auto block = extract_lp_block(response);
  if (!block) {
    o.kind = "no_code";
    return o;
  }
  lp::Model model;
  try {
    model = lp::read_lp_string(*block, item.id + ".lp");
  } catch (const Error& e) {
    o.kind = "lp_parse_error";
    o.detail = e.what();
    return o;
  }
  if (bench.kind == TargetKind::Structure) return compare_structure(item, model);
  lp::SolveOptions opt;
  opt.time_limit = cfg.lp_time_limit_s;
  auto res = lp::solve(model, lp::Backend::Cbc, opt);
  o.status = lp::to_string(res.status);
  o.verdict_checks = int(res.checks.size());
  o.verdict_overruled = res.overruled;
  if (res.status != lp::SolveStatus::Optimal) {
    o.kind = res.status == lp::SolveStatus::Unsupported ? "unsupported"
             : res.status == lp::SolveStatus::TimeLimit ? "timeout"
                                                        : "not_optimal";
    o.detail = res.message;
    return o;
  }
  o.code_pass = true;
  o.predicted = res.objective;
  o.success = item.answer && objective_matches(res.objective, *item.answer);
  o.kind = o.success ? "success" : "wrong_objective";
  return o;
}

}  // namespace

ExecConfig default_exec_config() {
  ExecConfig c;
  if (const char* s = std::getenv("TREX_PYTHON_SHIM"); s && *s)
    c.shim_dir = s;
  else
    c.shim_dir = fs::path(TREX_SOURCE_DIR) / "python" / "shim";
  c.forkserver_script = c.shim_dir.parent_path() / "sandbox_forkserver.py";
  if (const char* b = std::getenv("TREX_BIN"); b && *b)
    c.trex_bin = b;
  else {
    std::error_code ec;
    c.trex_bin = fs::read_symlink("/proc/self/exe", ec);
  }
  c.work_root = fs::temp_directory_path() / "trex-eval";
  return c;
}

std::shared_ptr<PythonForkServer> start_forkserver(const ExecConfig& cfg, const std::vector<std::string>& preload,
                                                   std::string* why) {
  if (cfg.executor != "trex") {
    if (why) *why = "fork server: only for trex's layer (a real gurobipy is started per answer)";
    return nullptr;
  }
  return PythonForkServer::start(cfg.python, cfg.forkserver_script, interpreter_env(cfg), preload, why);
}

bool objective_matches(double predicted, double gold) { return std::fabs(predicted - gold) <= 1e-6; }

bool objective_matches_relative(double predicted, double gold, double rel_tol) {
  return std::fabs(predicted - gold) <= std::max(1e-6, rel_tol * std::fabs(gold));
}

std::string failure_kind_for_exception(const std::string& type, const std::string& message) {
  if (type == "SyntaxError" || type == "IndentationError" || type == "TabError") return "syntax_error";
  if (type == "NameError" || type == "UnboundLocalError") return "name_error";
  if (type == "KeyError") return "key_error";
  if (type == "IndexError") return "index_error";
  if (type == "TypeError") return "type_error";
  if (type == "ValueError") return "value_error";
  if (type == "AttributeError") return "attribute_error";
  if (type == "ZeroDivisionError") return "zero_division";
  if (type == "ModuleNotFoundError" || type == "ImportError") return "missing_module";
  if (type == "MemoryError") return "resource_limit";
  if (type == "FileNotFoundError" || type == "PermissionError" || type == "OSError") return "file_error";
  if (type == "GurobiError" || type == "CoptError") {
    std::string low = message;
    for (auto& c : low) c = char(std::tolower(static_cast<unsigned char>(c)));
    return low.find("unsupported") != std::string::npos ? "unsupported" : "gurobi_api_error";
  }
  return "exec_error";
}

std::string rewrite_solver_code(std::string code, const std::string& data_json_path, bool gurobipy_import) {
  replace_all(code, "data.json", data_json_path);
  return add_imports(std::move(code), gurobipy_import);
}

std::string rewrite_orgeval_code(std::string code, const std::string& data_json_path, const std::string& target_lp,
                                 bool lb_quirk) {
  // (a) data.json substring -> the instance file.
  replace_all(code, "data.json", data_json_path);
  // (b) every `model.write(...)` / `m.write(...)` (no word boundary, no ')' inside) -> the target.
  bool wrote = false;
  std::string out;
  for (std::size_t i = 0; i < code.size();) {
    std::string_view rest(code.data() + i, code.size() - i);
    std::size_t name_len = rest.rfind("model.write(", 0) == 0 ? 5 : rest.rfind("m.write(", 0) == 0 ? 1 : 0;
    if (name_len) {
      std::size_t open = i + name_len + 7;  // past "<name>.write("
      std::size_t close = code.find(')', open);
      if (close != std::string::npos) {
        out += code.substr(i, name_len) + ".write('" + target_lp + "')";
        i = close + 1;
        wrote = true;
        continue;
      }
    }
    out += code[i++];
  }
  code = std::move(out);
  // (c) the model's name: the first model.addVars( / m.addVars(, else the first addVar(, else "model".
  auto first_name = [&](const char* call) -> std::string {
    std::size_t a = code.find(std::string("model.") + call), b = code.find(std::string("m.") + call);
    if (a == std::string::npos && b == std::string::npos) return "";
    if (a != std::string::npos && (b == std::string::npos || a + 4 <= b)) return "model";
    return "m";
  };
  std::string name = first_name("addVars(");
  if (name.empty()) name = first_name("addVar(");
  if (name.empty()) name = "model";
  // (d) no write call: append one.
  if (!wrote) code += "\n" + name + ".write('" + target_lp + "')\n";
  // (e) GRB import first.
  code = "from gurobipy import GRB\n" + code;
  // (f) lb insertion: `model.addVars(<args without ')'>)` directly followed by a newline.
  if (!lb_quirk) return add_imports(std::move(code));
  out.clear();
  const std::string call = "model.addVars(";
  std::size_t pos = 0;
  while (true) {
    std::size_t p = code.find(call, pos);
    if (p == std::string::npos) break;
    std::size_t args_start = p + call.size();
    std::size_t close = code.find(')', args_start);
    if (close == std::string::npos) break;
    out.append(code, pos, args_start - pos);
    std::string args = code.substr(args_start, close - args_start);
    bool newline_after = close + 1 < code.size() && code[close + 1] == '\n';
    if (newline_after && args.find("lb=") == std::string::npos) {
      std::string stripped = args;
      while (!stripped.empty() && std::isspace(static_cast<unsigned char>(stripped.back()))) stripped.pop_back();
      args += (!stripped.empty() && stripped.back() == ',') ? " lb=-GRB.INFINITY" : ", lb=-GRB.INFINITY";
    }
    out += args;
    out += ')';
    pos = close + 1;
  }
  out.append(code, pos, std::string::npos);
  // (g) gurobipy/json imports as for the solver targets.
  return add_imports(std::move(out));
}

Outcome score_response(const Benchmark& bench, const BenchItem& item, AnswerStyle style, const std::string& response,
                       const ExecConfig& cfg) {
  auto t0 = std::chrono::steady_clock::now();
  Outcome o;
  try {
    if (style == AnswerStyle::Lp)
      o = score_lp_answer(bench, item, response, cfg);
    else if (bench.kind == TargetKind::Structure)
      o = score_structure_code(item, response, cfg);
    else
      o = score_objective_code(bench, item, response, cfg);
  } catch (const std::exception& e) {
    o = Outcome{};
    o.kind = "harness_error";
    o.detail = e.what();
  }
  if (style != AnswerStyle::Lp) {  // which API the answer used (results.jsonl "api"; none without code)
    const std::string code =
        bench.kind == TargetKind::Structure ? extract_code_orgeval(response) : extract_code_solver(response);
    if (!trim(code).empty()) o.api = detect_api(code).name();
  }
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return o;
}

}  // namespace trex::oreval
