// run_eval: responses -> scoring -> append-only results log -> summaries.
#include "oreval/runner.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"
#include "util/log.hpp"
#include "util/progress.hpp"

namespace trex::oreval {
namespace fs = std::filesystem;

namespace {

// "B40-feasible", "B4O-Feasible", "b4o_feasible" -> "b4ofeasible".
std::string normalize_bench_name(const std::string& s) {
  std::string out;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c))) out += char(std::tolower(static_cast<unsigned char>(c)));
  if (out.rfind("b40", 0) == 0) out[2] = 'o';
  if (out.rfind("bench4opt", 0) == 0) out = "b4o" + out.substr(9);
  if (out == "b4o") out = "b4oorgeval";
  return out;
}

// Responses produced elsewhere: (benchmark, id) -> responses by attempt.
struct ResponseBook {
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> by_bench;
  std::map<std::string, std::vector<std::string>> by_id;

  void load(const fs::path& file) {
    JsonlReader r(file);
    while (auto rec = r.next()) {
      auto where = r.where();
      std::string id = require_string(*rec, "id", where);
      std::string text;
      bool found = false;
      for (const char* key : {"response", "completion", "content", "output"}) {
        auto it = rec->find(key);
        if (it == rec->end()) continue;
        if (it->is_null()) {
          found = true;
          break;
        }
        if (!it->is_string()) throw Error(where, std::string("field '") + key + "' must be a string");
        text = it->get<std::string>();
        found = true;
        break;
      }
      if (!found) throw Error(where, "no 'response' field");
      std::size_t attempt = 0;
      if (auto it = rec->find("attempt"); it != rec->end()) {
        if (!it->is_number_integer() || it->get<long>() < 0) throw Error(where, "'attempt' must be an integer >= 0");
        attempt = std::size_t(it->get<long>());
      }
      auto put = [&](std::vector<std::string>& v) {
        if (v.size() <= attempt) v.resize(attempt + 1);
        v[attempt] = text;
      };
      if (auto it = rec->find("benchmark"); it != rec->end() && it->is_string())
        put(by_bench[{normalize_bench_name(it->get<std::string>()), id}]);
      else
        put(by_id[id]);
    }
  }

  const std::vector<std::string>* find(const Benchmark& b, const std::string& id) const {
    auto it = by_bench.find({normalize_bench_name(b.key), id});
    if (it == by_bench.end()) it = by_bench.find({normalize_bench_name(b.display), id});
    if (it != by_bench.end()) return &it->second;
    auto jt = by_id.find(id);
    return jt == by_id.end() ? nullptr : &jt->second;
  }
};

// Append-only JSONL log that survives kills: each record is one write + fsync; a torn last line from
// an earlier crash is cut off before appending.
class ResultLog {
 public:
  explicit ResultLog(const fs::path& path) : path_(path) {
    std::set<std::string> seen;
    if (fs::exists(path_)) {
      std::string text = read_file(path_);
      std::size_t good = text.rfind('\n');
      good = good == std::string::npos ? 0 : good + 1;
      if (good != text.size()) fs::resize_file(path_, good);
      std::size_t pos = 0;
      long line = 0;
      while (pos < good) {
        std::size_t nl = text.find('\n', pos);
        ++line;
        std::string s = text.substr(pos, nl - pos);
        pos = nl + 1;
        if (s.empty()) continue;
        Json j = parse_json_text(s, SourceLocation{path_.string(), line, 0});
        std::string id = j.at("id").get<std::string>();
        if (seen.insert(id).second) records_.push_back(std::move(j));
      }
    }
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error(SourceLocation{path_.string()}, "cannot open results file for appending");
  }
  ~ResultLog() {
    if (fd_ >= 0) ::close(fd_);
  }
  const std::vector<Json>& existing() const { return records_; }
  void append(const Json& j) {
    std::string line = j.dump() + "\n";
    std::lock_guard<std::mutex> lock(mu_);
    if (::write(fd_, line.data(), line.size()) != ssize_t(line.size()) || ::fsync(fd_) != 0)
      throw Error(SourceLocation{path_.string()}, "write failed");
  }

 private:
  fs::path path_;
  int fd_ = -1;
  std::mutex mu_;
  std::vector<Json> records_;
};

std::string oracle_response(const BenchItem& item, AnswerStyle style) {
  if (style == AnswerStyle::Lp) {
    if (item.lp_file.empty()) return "";
    return "```lp\n" + read_file(item.lp_file) + "\n```";
  }
  if (item.reference_code.empty()) return "";
  return "```python\n" + item.reference_code + "\n```";
}

// What a --responses item is scored from: the SHA-256 of its responses (every attempt, length-prefixed), kept in
// its result so that a resumed run never keeps a result scored from answers the file no longer holds.
std::string responses_fingerprint(const std::vector<std::string>* responses) {
  std::string all;
  if (responses)
    for (const auto& r : *responses) all += std::to_string(r.size()) + ":" + r;
  return sha256_hex(all);
}

Json result_record(const Benchmark& b, const BenchItem& item, const Outcome& o, int attempts_used, int64_t seed,
                   const std::string& api_error, const std::string& response_sha256, double rel_tol) {
  Json j;
  j["id"] = item.id;
  j["benchmark"] = b.display;
  j["success"] = o.success;
  j["kind"] = o.kind;
  j["code_pass"] = o.code_pass;
  j["predicted"] = o.predicted ? Json(*o.predicted) : Json();
  j["gold"] = item.answer ? Json(*item.answer) : Json();
  j["success_relative"] =
      o.success || (o.predicted && item.answer && objective_matches_relative(*o.predicted, *item.answer, rel_tol));
  j["rel_tol"] = rel_tol;
  j["status"] = o.status;
  j["detail"] = o.detail.substr(0, 500);
  if (!o.api.empty()) j["api"] = o.api;
  if (o.verdict_checks > 0) {  // an infeasible / unbounded verdict was re-solved (and perhaps overruled)
    j["verdict_checks"] = o.verdict_checks;
    j["verdict_overruled"] = o.verdict_overruled;
  }
  if (!api_error.empty()) j["api_error"] = api_error.substr(0, 300);
  j["attempts"] = attempts_used;
  j["seed"] = seed;
  j["seconds"] = std::round(o.seconds * 1000.0) / 1000.0;
  if (!response_sha256.empty()) j["response_sha256"] = response_sha256;
  return j;
}

// One of --samples' responses inside its item's result line (`samples` array; summary.hpp reads it).
Json sample_record(const BenchItem& item, const Outcome& o, int64_t seed, const std::string& api_error,
                   double rel_tol) {
  Json j = {{"seed", seed},
            {"success", o.success},
            {"kind", o.kind},
            {"code_pass", o.code_pass},
            {"predicted", o.predicted ? Json(*o.predicted) : Json()},
            {"status", o.status},
            {"detail", o.detail.substr(0, 200)},
            {"seconds", std::round(o.seconds * 1000.0) / 1000.0}};
  j["success_relative"] =
      o.success || (o.predicted && item.answer && objective_matches_relative(*o.predicted, *item.answer, rel_tol));
  if (!o.api.empty()) j["api"] = o.api;
  if (!api_error.empty()) j["api_error"] = api_error.substr(0, 300);
  return j;
}

}  // namespace

EvalSummary run_eval(const EvalOptions& opt) {
  auto t0 = std::chrono::steady_clock::now();
  if (opt.benchmarks.empty()) throw Error("no benchmarks selected");
  if (opt.attempts < 1) throw Error("--attempts must be at least 1");
  if (opt.samples < 1) throw Error("--samples must be at least 1");
  if (opt.samples > 1 && opt.attempts > 1)
    throw Error("--samples (Pass@k from n samples) and --attempts (acc@k, stop at the first success) exclude each other");
  if (!(opt.rel_tol > 0.0) || !std::isfinite(opt.rel_tol)) throw Error("--rel-tol must be a positive number");
  for (int k : opt.pass_k)
    if (k < 1 || k > opt.samples)
      throw Error(fmt::format("--pass-k {}: every k must lie in 1..--samples ({})", k, opt.samples));
  if (opt.concurrency < 1) throw Error("--concurrency must be at least 1");
  if (opt.source == ResponseSource::Model && !opt.client) throw Error("--base-url and --model are required");

  // Load everything first so that bad inputs fail before any output is written.
  std::vector<Benchmark> benches;
  for (const auto& key : opt.benchmarks) {
    Benchmark b = load_benchmark(key, opt.data_dir);
    slice_items(b, opt.start, opt.end, opt.ids);
    if (opt.source == ResponseSource::Oracle) {
      for (const auto& it : b.items)
        if (oracle_response(it, opt.style).empty())
          throw Error("--oracle: benchmark " + b.display + " ships no reference solution for " + it.id);
    }
    benches.push_back(std::move(b));
  }
  ResponseBook book;
  if (opt.source == ResponseSource::ResponsesFile) book.load(opt.responses_file);
  std::optional<ChatClient> client;
  if (opt.source == ResponseSource::Model) client.emplace(*opt.client);

  fs::create_directories(opt.out_dir);
  ExecConfig exec = opt.exec;
  if (opt.source == ResponseSource::Oracle) {
    exec.orgeval_lb_quirk = false;
    exec.solver_objval_quirk = false;
  }
  fs::create_directories(exec.work_root);
  if (exec.use_forkserver && !exec.forkserver && opt.style == AnswerStyle::Report && exec.executor == "trex" &&
      ::geteuid() == 0) {
    std::string why;
    exec.forkserver = start_forkserver(exec, {}, &why);
    if (exec.forkserver) exec.forkserver_scientific = start_forkserver(exec, {"numpy", "pandas"}, &why);
    if (!exec.forkserver) log::warn("{}; each answer starts python3 instead", why);
  }
  std::vector<std::string> keys;

  std::size_t total = 0;
  for (auto& b : benches) total += b.items.size();
  ProgressBar bar("eval", int64_t(total), opt.progress);
  std::atomic<int64_t> done{0}, succeeded{0};

  for (auto& b : benches) {
    keys.push_back(b.key);
    fs::path dir = opt.out_dir / b.key;
    fs::create_directories(dir);
    ResultLog log(dir / "results.jsonl");
    std::set<std::string> finished;
    for (const auto& j : log.existing()) {
      const std::string id = j.at("id").get<std::string>();
      if (opt.source == ResponseSource::ResponsesFile &&
          j.value("response_sha256", "") != responses_fingerprint(book.find(b, id)))
        throw Error(SourceLocation{(dir / "results.jsonl").string()},
                    "item '" + id + "' was scored from another response than " + opt.responses_file.string() +
                        " now holds: these results belong to another run (use another --out, or delete " +
                        opt.out_dir.string() + ")");
      const int stored = j.contains("samples") && j["samples"].is_array() ? int(j["samples"].size()) : 1;
      if (stored != opt.samples)
        throw Error(SourceLocation{(dir / "results.jsonl").string()},
                    fmt::format("item '{}' was scored with --samples {}, this run asks for {} (use another --out)", id,
                                stored, opt.samples));
      finished.insert(id);
      ++done;
      if (j.value("success", false)) ++succeeded;
    }
    std::vector<const BenchItem*> todo;
    for (const auto& it : b.items)
      if (!finished.count(it.id)) todo.push_back(&it);
    std::atomic<std::size_t> next{0};
    std::exception_ptr failure;
    std::mutex failure_mu;
    auto worker = [&] {
      for (;;) {
        std::size_t i = next++;
        if (i >= todo.size()) return;
        const BenchItem& item = *todo[i];
        try {
          // The response for attempt / sample a, scored (or the reason there is none).
          auto score_attempt = [&](int a, std::string& api_error) {
            std::string response;
            bool have = true;
            const int64_t seed = opt.sampling.seed.value_or(42) + a;
            if (opt.source == ResponseSource::Model) {
              SamplingParams sp = opt.sampling;
              sp.seed = seed;
              auto messages = build_messages(b, item, opt.style, (exec.work_root).string());
              ChatResult cr = client->complete(messages, sp);
              if (!cr.ok) {
                have = false;
                api_error = cr.error;
              } else {
                response = cr.content;
              }
            } else if (opt.source == ResponseSource::ResponsesFile) {
              const auto* rs = book.find(b, item.id);
              if (!rs || std::size_t(a) >= rs->size()) {
                have = false;
                api_error = "no response for this item";
              } else {
                response = (*rs)[std::size_t(a)];
              }
            } else {
              response = oracle_response(item, opt.style);
            }
            if (have) return score_response(b, item, opt.style, response, exec);
            Outcome none;
            none.kind = opt.source == ResponseSource::ResponsesFile ? "no_response" : "api_error";
            none.detail = api_error;
            return none;
          };
          const std::string fingerprint = opt.source == ResponseSource::ResponsesFile
                                              ? responses_fingerprint(book.find(b, item.id))
                                              : std::string();
          const int64_t seed0 = opt.sampling.seed.value_or(42);
          Outcome outcome;
          if (opt.samples > 1) {
            // Pass@k: every sample is scored; the line's own fields are sample 0's, `samples` holds them all.
            Json samples = Json::array();
            std::string first_error;
            for (int a = 0; a < opt.samples; ++a) {
              std::string api_error;
              Outcome o = score_attempt(a, api_error);
              samples.push_back(sample_record(item, o, seed0 + a, api_error, opt.rel_tol));
              if (a == 0) {
                outcome = o;
                first_error = api_error;
              }
            }
            Json rec = result_record(b, item, outcome, 1, seed0, first_error, fingerprint, opt.rel_tol);
            rec["samples"] = std::move(samples);
            log.append(rec);
          } else {
            std::string api_error;
            int used = 0;
            for (int a = 0; a < opt.attempts; ++a) {
              used = a + 1;
              api_error.clear();
              outcome = score_attempt(a, api_error);
              if (outcome.success) break;
            }
            log.append(result_record(b, item, outcome, used, seed0 + used - 1, api_error, fingerprint, opt.rel_tol));
          }
          if (outcome.success) ++succeeded;
          int64_t d = ++done;
          bar.update(d, fmt::format("acc {:.1f}%", 100.0 * double(succeeded) / double(d)));
        } catch (...) {
          std::lock_guard<std::mutex> lock(failure_mu);
          if (!failure) failure = std::current_exception();
          return;
        }
      }
    };
    std::vector<std::thread> threads;
    int n_threads = std::max(1, std::min<int>(opt.concurrency, int(todo.size())));
    for (int t = 0; t < n_threads; ++t) threads.emplace_back(worker);
    for (auto& t : threads) t.join();
    if (failure) std::rethrow_exception(failure);
  }
  bar.finish();

  SummaryOptions so;
  so.attempts = opt.attempts;
  so.samples = opt.samples;
  if (opt.samples > 1) so.pass_k = opt.pass_k.empty() ? default_pass_k(opt.samples) : opt.pass_k;
  so.rel_tol = opt.rel_tol;
  EvalSummary s = summarize(keys, opt.out_dir, so);
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  s.items_per_second = s.seconds > 0 ? double(total) / s.seconds : 0.0;
  write_file_atomic(opt.out_dir / "summary.json", summary_json(s).dump(2) + "\n");
  write_file_atomic(opt.out_dir / "summary.md", summary_markdown(s));
  return s;
}

}  // namespace trex::oreval
