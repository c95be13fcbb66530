// `trex eval`: the OR benchmarks under the report's protocol (argument parsing only; see oreval/runner).
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "cli/command.hpp"
#include "oreval/runner.hpp"
#include "util/error.hpp"

namespace cmd_eval {  // this file's own names (the unity build joins cli files)

struct EvalArgs {
  std::string benchmarks = "report", pass_k;
  std::string data_dir, out_dir, base_url, model, responses, style = "report", api_key_env = "OPENAI_API_KEY";
  std::string ids, executor = "trex", cache_dir, python;
  bool oracle = false, json = false, no_cache = false, keep = false, no_forkserver = false;
  int attempts = 1, samples = 1, concurrency = 16, max_tokens = 9600, retries = 3;
  double rel_tol = 1e-4;
  double temperature = 0.6, top_p = 1.0, timeout = 600.0, solve_timeout = 360.0, orgeval_timeout = 180.0;
  long long seed = 42;
  std::size_t start = 0, end = SIZE_MAX;
};

std::vector<std::string> split_csv(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ','))
    if (!part.empty()) out.push_back(part);
  return out;
}

int run(const EvalArgs& a) {
  using namespace trex::oreval;
  EvalOptions o;
  o.benchmarks = expand_benchmark_selection(split_csv(a.benchmarks));
  int sources = int(!a.base_url.empty()) + int(!a.responses.empty()) + int(a.oracle);
  if (sources != 1) throw trex::Error("give exactly one of --base-url (with --model), --responses FILE or --oracle");
  o.data_dir = resolve_benchmarks_dir(a.data_dir);
  o.out_dir = a.out_dir;
  o.style = parse_answer_style(a.style);
  o.attempts = a.attempts;
  o.samples = a.samples;
  o.rel_tol = a.rel_tol;
  for (const auto& k : split_csv(a.pass_k)) {
    std::size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(k, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != k.size()) throw trex::Error("--pass-k: '" + k + "' is not an integer");
    o.pass_k.push_back(v);
  }
  o.concurrency = a.concurrency;
  o.start = a.start;
  o.end = a.end;
  o.ids = split_csv(a.ids);
  o.sampling.temperature = a.temperature;
  o.sampling.top_p = a.top_p;
  o.sampling.max_tokens = a.max_tokens;
  o.sampling.seed = a.seed;
  if (a.max_tokens < 1) throw trex::Error("--max-tokens must be positive");
  if (!a.base_url.empty()) {
    if (a.model.empty()) throw trex::Error("--model is required with --base-url");
    o.source = ResponseSource::Model;
    ClientConfig c;
    c.base_url = a.base_url;
    c.model = a.model;
    c.api_key_env = a.api_key_env;
    c.read_timeout_s = a.timeout;
    c.max_tries = a.retries;
    if (!a.no_cache) c.cache_dir = a.cache_dir.empty() ? std::filesystem::path(a.out_dir) / "cache" : std::filesystem::path(a.cache_dir);
    o.client = c;
  } else if (!a.responses.empty()) {
    o.source = ResponseSource::ResponsesFile;
    o.responses_file = a.responses;
  } else {
    o.source = ResponseSource::Oracle;
  }
  o.exec = default_exec_config();
  if (a.executor != "trex" && a.executor != "gurobipy") throw trex::Error("--executor must be trex or gurobipy");
  o.exec.executor = a.executor;
  // The interpreter of code answers: --python, else with a real gurobipy the reference environment's
  // ($TREX_REFERENCE_PYTHON, scripts/reference-env.sh --wrapper), else Debian's /usr/bin/python3.
  if (!a.python.empty()) {
    o.exec.python = a.python;
  } else if (a.executor == "gurobipy") {
    if (const char* p = std::getenv("TREX_REFERENCE_PYTHON"); p && *p) o.exec.python = p;
  }
  o.exec.solve_timeout_s = a.solve_timeout;
  o.exec.orgeval_timeout_s = a.orgeval_timeout;
  o.exec.keep_workdirs = a.keep;
  o.exec.use_forkserver = !a.no_forkserver;
  o.exec.work_root = std::filesystem::absolute(std::filesystem::path(a.out_dir) / "work");
  o.progress = !a.json;
  EvalSummary s = run_eval(o);
  if (a.json)
    std::cout << summary_json(s).dump(2) << "\n";
  else
    std::cout << summary_markdown(s);
  return 0;
}

trex::cli::CommandRegistrar reg("eval", "Evaluate a model (or given responses) on the OR benchmarks", [](CLI::App& sub) {
  auto a = std::make_shared<EvalArgs>();
  sub.add_option("--benchmarks", a->benchmarks,
                 "Comma-separated: all, report (nl4opt,optibench,b4o_feasible,b4o_orgeval), industryor, mamo_easy, "
                 "mamo_complex, complexor, logior, nlp4lp, optmath_bench, or .jsonl files")
      ->capture_default_str();
  sub.add_option("--data", a->data_dir, "Benchmark folder (default: $TREX_BENCHMARKS, else ../shared/benchmarks)");
  sub.add_option("--out", a->out_dir, "Output folder (results.jsonl per benchmark, summary.json, summary.md)")->required();
  sub.add_option("--base-url", a->base_url, "OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1");
  sub.add_option("--model", a->model, "Model name sent to the endpoint");
  sub.add_option("--api-key-env", a->api_key_env, "Environment variable holding the API key")->capture_default_str();
  sub.add_option("--responses", a->responses, "Score answers produced elsewhere (JSONL: id, response[, benchmark, attempt])");
  sub.add_flag("--oracle", a->oracle, "Score the benchmarks' own reference solutions");
  sub.add_option("--style", a->style, "Answer style: report (gurobipy code, the report's prompts) or lp (LP-file block)")
      ->capture_default_str();
  sub.add_option("--attempts", a->attempts, "acc@k: up to k attempts with seeds seed..seed+k-1")->capture_default_str();
  sub.add_option("--samples", a->samples,
                 "Pass@k: score n responses per item (seeds seed..seed+n-1, or the responses' attempt 0..n-1)")
      ->capture_default_str();
  sub.add_option("--pass-k", a->pass_k, "Comma-separated k reported with --samples (default: 1 and n)");
  sub.add_option("--rel-tol", a->rel_tol,
                 "Relative rule beside the absolute 1e-6: |pred - gold| <= max(1e-6, rel-tol * |gold|)")
      ->capture_default_str();
  sub.add_option("--concurrency", a->concurrency, "Items in flight")->capture_default_str();
  sub.add_option("--temperature", a->temperature)->capture_default_str();
  sub.add_option("--top-p", a->top_p)->capture_default_str();
  sub.add_option("--max-tokens", a->max_tokens)->capture_default_str();
  sub.add_option("--seed", a->seed)->capture_default_str();
  sub.add_option("--timeout", a->timeout, "HTTP read timeout per request (s)")->capture_default_str();
  sub.add_option("--retries", a->retries, "Tries per request on connection errors, 429 and 5xx")->capture_default_str();
  sub.add_option("--cache-dir", a->cache_dir, "Request cache (default: OUT/cache)");
  sub.add_flag("--no-cache", a->no_cache, "Do not cache responses");
  sub.add_option("--start", a->start, "First item index (per benchmark)");
  sub.add_option("--end", a->end, "One past the last item index (per benchmark)");
  sub.add_option("--ids", a->ids, "Only these comma-separated ids");
  sub.add_option("--executor", a->executor, "Run code answers with trex (our gurobipy layer) or gurobipy (a real one)")
      ->capture_default_str();
  sub.add_option("--python", a->python,
                 "Interpreter for code answers (default: $TREX_REFERENCE_PYTHON with --executor gurobipy, else "
                 "/usr/bin/python3)");
  sub.add_option("--solve-timeout", a->solve_timeout, "Wall limit of one answer program (s)")->capture_default_str();
  sub.add_option("--orgeval-timeout", a->orgeval_timeout, "Limit of one ORGEval attempt (s)")->capture_default_str();
  sub.add_flag("--no-forkserver", a->no_forkserver,
               "Start python3 for every answer instead of forking a pre-imported server (same sandbox, slower)");
  sub.add_flag("--keep-workdirs", a->keep, "Keep each attempt's working folder under OUT/work");
  sub.add_flag("--json", a->json, "Print summary.json instead of the Markdown table");
  return [a] { return run(*a); };
});

}  // namespace cmd_eval
