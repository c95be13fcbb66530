// Report generation: numbers are formatted through Tracer, which records each one with its source.
#include "pipeline/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "pipeline/svg_chart.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"

namespace trex::pipeline {
namespace fs = std::filesystem;

namespace {

// Formats numbers and remembers where each came from (report_numbers.json).
class Tracer {
 public:
  std::string num(double v, int decimals, const std::string& source, const std::string& what) {
    std::string text = fmt::format("{:.{}f}", v, decimals);
    entries_.push_back({{"text", text}, {"value", v}, {"source", source}, {"what", what}});
    return text;
  }
  // With its sign (+5.2, -3.1): a difference.
  std::string signed_num(double v, int decimals, const std::string& source, const std::string& what) {
    std::string text = fmt::format("{:+.{}f}", v, decimals);
    entries_.push_back({{"text", text}, {"value", v}, {"source", source}, {"what", what}});
    return text;
  }
  std::string integer(int64_t v, const std::string& source, const std::string& what) {
    std::string text = std::to_string(v);
    entries_.push_back({{"text", text}, {"value", v}, {"source", source}, {"what", what}});
    return text;
  }
  const Json& entries() const { return entries_; }

 private:
  Json entries_ = Json::array();
};

std::vector<Json> read_jsonl(const fs::path& p) {
  std::vector<Json> out;
  if (!fs::exists(p)) return out;
  JsonlReader r(p);
  while (auto j = r.next()) out.push_back(std::move(*j));
  return out;
}

const char* kBucketOrder[] = {"small", "medium", "large", "industrial"};

// The report's own results, quoted as context (TREX_REPORT.md §11; also in configs/trex_report_numbers.json).
struct Quoted {
  const char* route;
  double avg;
};

double metric_of(const Json& j, std::initializer_list<const char*> keys, bool& found) {
  for (const char* k : keys) {
    auto it = j.find(k);
    if (it != j.end() && it->is_number()) {
      found = true;
      return it->get<double>();
    }
  }
  found = false;
  return 0.0;
}

}  // namespace

std::vector<std::pair<std::string, BucketScore>> bucket_scores(const fs::path& results_jsonl, const fs::path& test_jsonl, bool by_family) {
  std::map<std::string, std::string> difficulty;
  for (const auto& t : read_jsonl(test_jsonl)) {
    std::string d = "unknown";
    if (t.contains("metadata") && t["metadata"].is_object())
      d = by_family ? (t["metadata"].value("held_out_structure", false) ? "held-out families" : "trained families")
                    : t["metadata"].value("difficulty", "unknown");
    difficulty[t.at("id").get<std::string>()] = d;
  }
  std::map<std::string, BucketScore> by;
  BucketScore all;
  std::set<std::string> seen;
  for (const auto& r : read_jsonl(results_jsonl)) {
    std::string id = r.at("id");
    if (!seen.insert(id).second) continue;
    bool ok = r.value("success", false);
    std::string d = difficulty.count(id) ? difficulty[id] : "unknown";
    by[d].n++;
    by[d].successes += ok;
    all.n++;
    all.successes += ok;
  }
  std::vector<std::pair<std::string, BucketScore>> out;
  for (const char* b : kBucketOrder)
    if (by.count(b)) out.emplace_back(b, by[b]);
  for (auto& [k, v] : by)
    if (std::find(std::begin(kBucketOrder), std::end(kBucketOrder), k) == std::end(kBucketOrder)) out.emplace_back(k, v);
  out.emplace_back("all", all);
  return out;
}

AnswerFunnel answer_funnel(const fs::path& results_jsonl) {
  AnswerFunnel f;
  std::set<std::string> seen;
  for (const auto& r : read_jsonl(results_jsonl)) {
    if (!seen.insert(r.at("id").get<std::string>()).second) continue;
    const std::string kind = r.value("kind", ""), status = r.value("status", "");
    f.n++;
    f.answered += kind != "no_code";
    // A solver's verdict exists: trex eval's outcomes after a solve, or a solver time limit (which has a status;
    // a program stopped by the sandbox has none).
    f.solved += kind == "success" || kind == "wrong_objective" || kind == "not_optimal" || kind == "unsupported" ||
                (kind == "timeout" && !status.empty());
    const bool optimal = r.value("code_pass", false);
    f.optimal += optimal;
    const Json& p = r.contains("predicted") ? r["predicted"] : Json();
    const Json& g = r.contains("gold") ? r["gold"] : Json();
    f.near += optimal && p.is_number() && g.is_number() &&
              std::fabs(p.get<double>() - g.get<double>()) <= 0.01 * std::max(1.0, std::fabs(g.get<double>()));
    f.successes += r.value("success", false);
  }
  return f;
}

namespace {

// id -> success of the first record of each id.
std::vector<std::pair<std::string, bool>> successes_in_order(const fs::path& results_jsonl) {
  std::vector<std::pair<std::string, bool>> out;
  std::set<std::string> seen;
  for (const auto& r : read_jsonl(results_jsonl)) {
    std::string id = r.at("id");
    if (seen.insert(id).second) out.emplace_back(id, r.value("success", false));
  }
  return out;
}

}  // namespace

double mcnemar_exact_p(int only_a, int only_b) {
  const int n = only_a + only_b, k = std::min(only_a, only_b);
  if (n == 0) return 1.0;
  // 2 * P(X <= k) for X ~ Binomial(n, 1/2), in logs (n is at most a few hundred here).
  double tail = 0.0;
  for (int i = 0; i <= k; ++i)
    tail += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) - n * std::log(2.0));
  return std::min(1.0, 2.0 * tail);
}

PairedDifference paired_difference(const fs::path& a_results, const fs::path& b_results, int resamples, uint64_t seed) {
  PairedDifference d;
  d.resamples = resamples;
  d.seed = seed;
  std::map<std::string, bool> b;
  for (auto& [id, ok] : successes_in_order(b_results)) b[id] = ok;
  std::vector<int> delta;  // per item: a's success minus b's, in a's order
  for (auto& [id, ok] : successes_in_order(a_results)) {
    auto it = b.find(id);
    if (it == b.end()) continue;
    d.a_successes += ok;
    d.b_successes += it->second;
    d.only_a += ok && !it->second;
    d.only_b += !ok && it->second;
    delta.push_back(int(ok) - int(it->second));
  }
  d.n = int(delta.size());
  d.mcnemar_p = mcnemar_exact_p(d.only_a, d.only_b);
  if (d.n == 0 || resamples <= 0) return d;
  d.diff = 100.0 * (d.a_successes - d.b_successes) / d.n;
  // Paired bootstrap: resample the items (both routes' outcomes together) with replacement. The index is the
  // generator's output modulo n (mt19937_64 is the same sequence everywhere; the modulo bias at n < 1e4 is
  // below 1e-15).
  std::mt19937_64 rng(seed);
  std::vector<double> diffs(static_cast<size_t>(resamples));
  for (auto& v : diffs) {
    long sum = 0;
    for (int i = 0; i < d.n; ++i) sum += delta[size_t(rng() % uint64_t(d.n))];
    v = 100.0 * double(sum) / d.n;
  }
  std::sort(diffs.begin(), diffs.end());
  d.lo = diffs[size_t(std::floor(0.025 * resamples))];
  d.hi = diffs[size_t(std::max(1.0, std::ceil(0.975 * resamples))) - 1];
  return d;
}

std::optional<AnswerExample> pick_example(const fs::path& results_jsonl, const fs::path& responses_jsonl,
                                          const fs::path& order_jsonl, bool success) {
  std::map<std::string, Json> results;
  for (auto& r : read_jsonl(results_jsonl)) results.emplace(r.at("id").get<std::string>(), r);  // first per id
  std::map<std::string, std::string> responses;
  for (auto& r : read_jsonl(responses_jsonl))
    if (r.contains("response") && r["response"].is_string())
      responses.emplace(r.at("id").get<std::string>(), r["response"].get<std::string>());
  for (const auto& t : read_jsonl(order_jsonl)) {
    std::string id = t.at("id");
    auto it = results.find(id);
    auto rt = responses.find(id);
    if (it == results.end() || rt == responses.end() || it->second.value("success", false) != success) continue;
    return AnswerExample{id, rt->second, it->second};
  }
  return std::nullopt;
}

ShownText truncate_for_report(const std::string& response, int max_lines, std::size_t max_chars) {
  std::size_t end = 0;
  int lines = 0;
  while (end < response.size() && lines < max_lines) {
    std::size_t nl = response.find('\n', end);
    std::size_t next = nl == std::string::npos ? response.size() : nl + 1;
    if (next > max_chars) {
      if (lines == 0) end = max_chars;  // one long first line: cut inside it
      break;
    }
    end = next;
    ++lines;
  }
  // Never cut inside a UTF-8 sequence.
  while (end > 0 && end < response.size() && (static_cast<unsigned char>(response[end]) & 0xC0) == 0x80) --end;
  ShownText s;
  s.text = response.substr(0, end);
  if (end < response.size()) {
    s.omitted_chars = response.size() - end;
    s.omitted_lines = std::count(response.begin() + long(end), response.end(), '\n') + (response.back() != '\n');
  }
  return s;
}

void write_report(const ReportInputs& in) {
  Tracer t;
  std::string md, html_body;
  fs::path dir = in.run_dir;
  fs::create_directories(dir / "figures");
  auto rel = [&](const fs::path& p) { return fs::relative(p, dir).string(); };

  md += "# trex run report\n\n";
  const bool lp = in.answer_style == "lp";
  md += std::string("Does CPT before SFT help? Pass@1 of each route on the held-out synthetic OR problems (another "
                    "seed stream than the training data); the answer is ") +
        (lp ? "an LP-file block (trex's native `lp` answer style), read by trex's LP reader and solved by CBC"
            : "a gurobipy program that reads the item's data.json (B4O-Feasible's protocol), run sandboxed through "
              "trex's gurobipy-compatible layer (CBC)") +
        "; success = an optimal value within 1e-6 of the gold objective (the report's rule).\n\n";

  // --- Pass@1 table: route x test bucket.
  std::vector<std::string> buckets;
  std::map<std::string, std::vector<std::pair<std::string, BucketScore>>> scores;
  for (const auto& r : in.routes) {
    scores[r.key] = bucket_scores(r.results_jsonl, in.test_jsonl);
    for (auto& [b, s] : scores[r.key])
      if (std::find(buckets.begin(), buckets.end(), b) == buckets.end()) buckets.push_back(b);
  }
  std::stable_partition(buckets.begin(), buckets.end(), [](const std::string& b) { return b != "all"; });
  std::string head = "| route |", sep = "|---|";
  for (auto& b : buckets) {
    head += " " + b + " |";
    sep += "---:|";
  }
  md += head + "\n" + sep + "\n";
  // One table cell: "Pass@1 (successes/items) |" of bucket b, every number traced ("pass_key b" names the Pass@1).
  auto cell = [&](const std::vector<std::pair<std::string, BucketScore>>& v, const std::string& b, const RouteResults& r,
                  const std::string& pass_key) {
    auto it = std::find_if(v.begin(), v.end(), [&](auto& p) { return p.first == b; });
    if (it == v.end()) return std::string(" – |");
    return " " + t.num(it->second.pass1(), 1, rel(r.results_jsonl), r.key + pass_key + b) + " (" +
           t.integer(it->second.successes, rel(r.results_jsonl), r.key + " successes " + b) + "/" +
           t.integer(it->second.n, rel(r.results_jsonl), r.key + " items " + b) + ") |";
  };
  for (const auto& r : in.routes) {
    std::string row = "| " + r.label + " |";
    for (auto& b : buckets) row += cell(scores[r.key], b, r, " pass@1 bucket ");
    md += row + "\n";
  }
  auto route = [&](const std::string& key) -> const RouteResults* {
    for (const auto& r : in.routes)
      if (r.key == key) return &r;
    return nullptr;
  };
  const RouteResults *cpt_sft = route("cpt_sft"), *sft_only = route("sft_only");

  // --- Transfer: test items of structures the training data left out (trex run --test-mix), beside the others.
  bool held_out = false;
  for (const auto& j : read_jsonl(in.test_jsonl))
    held_out |= j.contains("metadata") && j["metadata"].is_object() && j["metadata"].value("held_out_structure", false);
  if (held_out) {
    md += "\nTransfer across families: Pass@1 on the test items whose structure the training data left out (`--test-mix`) "
          "and on the others.\n\n| route | held-out families | trained families | all |\n|---|---:|---:|---:|\n";
    for (const auto& r : in.routes) {
      auto fam = bucket_scores(r.results_jsonl, in.test_jsonl, true);
      std::string row = "| " + r.label + " |";
      for (const char* b : {"held-out families", "trained families", "all"}) row += cell(fam, b, r, " pass@1 ");
      md += row + "\n";
    }
  }

  // --- The difference the run is about, paired over the same items.
  if (cpt_sft && sft_only) {
    PairedDifference d = paired_difference(cpt_sft->results_jsonl, sft_only->results_jsonl);
    const std::string a = rel(cpt_sft->results_jsonl), b = rel(sft_only->results_jsonl), both = a + " + " + b;
    const std::string self = "src/pipeline/report.cpp";
    md += "\n**CPT → SFT minus SFT only: " + t.signed_num(d.diff, 1, both, "difference cpt_sft - sft_only, points") +
          " points** of Pass@1 (" + t.integer(d.a_successes, a, "difference cpt_sft successes") + " vs " +
          t.integer(d.b_successes, b, "difference sft_only successes") + " of the same " +
          t.integer(d.n, both, "difference paired items") + " items); " +
          t.integer(95, self, "interval level %") + " % interval [" +
          t.signed_num(d.lo, 1, both, "difference interval low, points") + ", " +
          t.signed_num(d.hi, 1, both, "difference interval high, points") + "] by a paired bootstrap (" +
          t.integer(d.resamples, self, "bootstrap resamples") + " resamples of the items, seed " +
          t.integer(int64_t(d.seed), self, "bootstrap seed") + ", percentiles); exact McNemar test on the " +
          t.integer(d.only_a, both, "difference items only cpt_sft solves") + " items only CPT → SFT solves and the " +
          t.integer(d.only_b, both, "difference items only sft_only solves") + " only SFT only solves: p = " +
          t.num(d.mcnemar_p, 3, both, "difference McNemar exact p") + ".\n";
  }

  // --- One correct and one failed answer of CPT -> SFT, as the model wrote them.
  if (cpt_sft && !cpt_sft->responses_jsonl.empty()) {
    std::map<std::string, Json> meta;
    for (const auto& j : read_jsonl(in.test_jsonl))
      if (j.contains("metadata") && j["metadata"].is_object()) meta[j.at("id").get<std::string>()] = j["metadata"];
    const std::string res = rel(cpt_sft->results_jsonl), resp = rel(cpt_sft->responses_jsonl);
    md += "\n### CPT → SFT's answers as written: the first correct one and the first failed one (test order)\n";
    for (bool success : {true, false}) {
      auto ex = pick_example(cpt_sft->results_jsonl, cpt_sft->responses_jsonl, in.test_jsonl, success);
      if (!ex) {
        md += std::string("\nNo ") + (success ? "correct" : "failed") + " answer on this run.\n";
        continue;
      }
      const Json& m = meta.count(ex->id) ? meta[ex->id] : Json::object();
      md += std::string("\n") + (success ? "Correct" : "Failed") + ", item `" + ex->id + "`" +
            (m.contains("difficulty") ? " (" + m.value("difficulty", std::string()) + ", `" +
                                            m.value("structure", std::string("?")) + "` / `" +
                                            m.value("variant", std::string("?")) + "`)"
                                      : std::string()) +
            ": outcome `" + ex->result.value("kind", std::string("?")) + "`";
      const Json& pv = ex->result.contains("predicted") ? ex->result["predicted"] : Json();
      const Json& gv = ex->result.contains("gold") ? ex->result["gold"] : Json();
      if (pv.is_number()) md += ", printed " + t.num(pv.get<double>(), 2, res, "example predicted " + ex->id);
      if (gv.is_number()) md += ", gold " + t.num(gv.get<double>(), 2, res, "example gold " + ex->id);
      ShownText shown = truncate_for_report(ex->response);
      std::size_t run = 0, longest = 0;
      for (char c : shown.text) longest = std::max(longest, run = c == '~' ? run + 1 : 0);
      const std::string fence(std::max<std::size_t>(4, longest + 1), '~');
      md += ".\n\n" + fence + "\n" + shown.text + (shown.text.empty() || shown.text.back() == '\n' ? "" : "\n") +
            fence + "\n";
      if (shown.omitted_chars)
        md += "\n[truncated here: " +
              t.integer(int64_t(shown.omitted_chars), resp, "example omitted characters " + ex->id) +
              " more characters, " + t.integer(shown.omitted_lines, resp, "example omitted lines " + ex->id) +
              " more lines]\n";
    }
  }

  // --- How far the answers got: what a route learned short of a correct model.
  md += "\n### How far the answers got\n\nTest items; each column includes the next: an " +
        std::string(lp ? "LP block" : "answer program") + " was found; it reached a solve (" +
        (lp ? "trex's LP reader accepted it and CBC ran" : "the program ran to the solver's status") +
        "); the solve was optimal; its value is within 1 % of the gold objective; and within 1e-6 (Pass@1).\n\n"
        "| route | answer found | reached a solve | optimal | within 1 % | Pass@1 rule |\n|---|---:|---:|---:|---:|---:|\n";
  for (const auto& r : in.routes) {
    AnswerFunnel f = answer_funnel(r.results_jsonl);
    std::string src = rel(r.results_jsonl);
    auto cell = [&](int v, const char* what) { return " " + t.integer(v, src, r.key + " funnel " + what) + " |"; };
    md += "| " + r.label + " |" + cell(f.answered, "answered") + cell(f.solved, "solved") + cell(f.optimal, "optimal") +
          cell(f.near, "within 1%") + cell(f.successes, "successes") + "\n";
  }

  // --- The B4O-Feasible slice, through the same harness.
  if (!in.b4o_skipped.empty()) {
    md += "\n### B4O-Feasible slice\n\nNot scored on this run: " + in.b4o_skipped + ".\n";
  } else if (in.b4o_items > 0) {
    const std::string runj = rel(in.run_json);
    const std::string k = t.integer(in.b4o_items, runj, "b4o slice items (plan)");
    md += "\n### B4O-Feasible: a fixed slice of " + k + " items\n\nThe benchmark file's first " +
          t.integer(in.b4o_items, runj, "b4o slice items (plan)") +
          " items in file order, each given to the model as its statement alone (as the held-out items are) and "
          "scored by `trex eval --benchmarks b4o_feasible` on that slice with the same harness (the program runs "
          "beside the item's data.json through the gurobipy layer; the 1e-6 rule). **Expect Pass@1 near 0 here**: "
          "B4O's problems are other problems — other domains, other data keys, statements several times longer "
          "than the synthetic ones — and a tiny model trained for minutes on the synthetic families does not carry "
          "over to them. The slice shows the harness scoring a real benchmark end to end, not a model that solves "
          "it.\n\n| route | Pass@1 | answer found | reached a solve | optimal | within 1 % |\n"
          "|---|---:|---:|---:|---:|---:|\n";
    for (const auto& r : in.routes) {
      if (r.b4o_results_jsonl.empty()) continue;
      AnswerFunnel f = answer_funnel(r.b4o_results_jsonl);
      std::string src = rel(r.b4o_results_jsonl);
      auto cell = [&](int v, const char* what) { return " " + t.integer(v, src, r.key + " b4o " + what) + " |"; };
      md += "| " + r.label + " | " + t.num(f.n ? 100.0 * f.successes / f.n : 0.0, 1, src, r.key + " b4o pass@1") +
            " (" + t.integer(f.successes, src, r.key + " b4o successes") + "/" + t.integer(f.n, src, r.key + " b4o items") +
            ") |" + cell(f.answered, "answered") + cell(f.solved, "solved") + cell(f.optimal, "optimal") +
            cell(f.near, "within 1%") + "\n";
    }
  }

  md += "\nBoth training routes start from the same randomly initialised base and use the same SFT data, steps and "
        "optimizer (the report's matched-transfer design); training's matrix products: `" + in.matmul + "`" +
        (in.matmul == "bf16" ? " (bf16 operands, fp32 accumulation, fp32 master weights and optimizer state)" : "") +
        ". Context, the report's Table (DeepSeek-V4-Flash, average Pass@1 over NL4OPT/OptiBench/B4O-Feasible/"
        "B4O-ORGEval; from configs/trex_report_numbers.json): CPT→SFT " +
        t.num(71.81, 2, "configs/trex_report_numbers.json", "report cpt_sft average") + ", SFT only " +
        t.num(66.44, 2, "configs/trex_report_numbers.json", "report sft_only average") +
        ". Ours is a " + in.preset + " model trained for minutes on two CPU cores from random weights: the comparison, "
        "not the level, is what carries over.\n\n";

  // --- Loss curves.
  std::vector<Series> loss_series;
  std::vector<Bar> tps_bars, mfu_bars;
  Json stage_table = Json::array();
  for (const auto& r : in.routes) {
    double offset = 0;
    for (const auto& m : r.metrics_jsonl) {
      auto rows = read_jsonl(m);
      Series s;
      s.label = r.label + " · " + m.parent_path().filename().string();
      double tps_sum = 0, mfu_sum = 0, peak = 0;
      int counted = 0;
      double max_step = 0;
      for (const auto& j : rows) {
        bool has_step = false, has_loss = false;
        double step = metric_of(j, {"step"}, has_step);
        double loss = metric_of(j, {"ce", "loss_ce", "lm_loss", "loss"}, has_loss);
        if (!has_step || !has_loss) continue;
        s.x.push_back(offset + step);
        s.y.push_back(loss);
        max_step = std::max(max_step, step);
        bool a = false, b = false;
        double tps = metric_of(j, {"tokens_per_s", "tok_per_s", "tokens_per_second"}, a);
        double mfu = 100.0 * metric_of(j, {"mfu"}, b);  // the trainer logs MFU as a fraction
        if (a) tps_sum += tps;
        if (b) mfu_sum += mfu;
        counted += a;
        bool c = false;
        double tflops = metric_of(j, {"tflops"}, c);
        if (b && c && mfu > 0) peak = 1e5 * tflops / mfu;  // the trainer's MFU denominator, GFLOP/s
      }
      if (!s.x.empty()) loss_series.push_back(s);
      if (counted) {
        std::string name = r.key + "/" + m.parent_path().filename().string();
        double tps = tps_sum / counted, mfu = mfu_sum / counted;
        tps_bars.push_back({name, tps});
        mfu_bars.push_back({name, mfu});
        stage_table.push_back(
            {{"name", name}, {"tps", tps}, {"mfu", mfu}, {"peak", peak}, {"source", rel(m)}, {"steps", max_step}});
      }
      offset += max_step;
    }
  }
  std::string loss_svg = svg_line_chart(loss_series, {"Training loss (next-token cross-entropy)", "step (CPT then SFT)", "loss", 720, 380, true});
  write_file_atomic(dir / "figures" / "loss.svg", loss_svg);
  md += "## Training\n\n![loss curves](figures/loss.svg)\n\n";
  if (!stage_table.empty()) {
    md += "| stage | steps | tokens/s (mean) | MFU % (mean) | of peak GFLOP/s |\n|---|---:|---:|---:|---:|\n";
    for (const auto& s : stage_table) {
      std::string src = s["source"];
      md += "| " + s["name"].get<std::string>() + " | " + t.integer(int64_t(s["steps"].get<double>()), src, "steps") + " | " +
            t.num(s["tps"], 0, src, "mean tokens/s") + " | " + t.num(s["mfu"], 2, src, "mean MFU") + " | " +
            t.num(s["peak"], 0, src, "MFU peak (tflops / mfu)") + " |\n";
    }
    write_file_atomic(dir / "figures" / "throughput.svg", svg_bar_chart(tps_bars, {"Training throughput per stage", "", "tokens/s"}));
    md += "\n![throughput](figures/throughput.svg)\n\n";
  }

  // --- Expert load: last logged max/mean load ratio per training stage.
  std::string load_md;
  for (const auto& r : in.routes)
    for (const auto& m : r.metrics_jsonl) {
      auto rows = read_jsonl(m);
      for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
        bool f = false;
        double v = metric_of(*it, {"expert_load_max_mean", "expert_load_max_over_mean"}, f);
        if (f) {
          load_md += "| " + r.key + "/" + m.parent_path().filename().string() + " | " +
                     t.num(v, 2, rel(m), "expert load max/mean at the last step") + " |\n";
          break;
        }
      }
    }
  if (!load_md.empty())
    md += "## Expert-load balance\n\nMax over mean tokens per routed expert at the last step (perfect balance gives exactly one; "
          "auxiliary-loss-free bias updates every step).\n\n| stage | max/mean |\n|---|---:|\n" + load_md + "\n";

  // --- Data manifest summary.
  if (fs::exists(in.manifest_json)) {
    Json man = parse_json_file(in.manifest_json);
    std::string src = rel(in.manifest_json);
    md += "## Data (trex synth manifest)\n\n";
    if (man.contains("counts") && man["counts"].is_object()) {
      md += "| file | records |\n|---|---:|\n";
      for (auto& [k, v] : man["counts"].items())
        if (v.is_number_integer()) md += "| " + k + " | " + t.integer(v.get<int64_t>(), src, "manifest count " + k) + " |\n";
      md += "\n";
    }
    if (man.contains("rejections") && man["rejections"].is_object() && !man["rejections"].empty()) {
      md += "Rejected candidates by reason: ";
      bool first = true;
      for (auto& [k, v] : man["rejections"].items())
        if (v.is_number_integer()) {
          md += (first ? "" : ", ") + k + " " + t.integer(v.get<int64_t>(), src, "rejections " + k);
          first = false;
        }
      md += ".\n\n";
    }
  }

  // --- Stage timings.
  if (fs::exists(in.run_json)) {
    Json run = parse_json_file(in.run_json);
    std::string src = rel(in.run_json);
    md += "## Stages\n\n| stage | seconds | skipped on this run |\n|---|---:|---|\n";
    for (const auto& s : run.value("stages", Json::array()))
      md += "| " + s.value("name", std::string("?")) + " | " + t.num(s.value("seconds", 0.0), 1, src, "stage seconds") +
            " | " + (s.value("skipped", false) ? "yes" : "no") + " |\n";
    md += "\n";
  }
  md += "Every number above is listed with its source file in `report_numbers.json`.\n";

  write_file_atomic(dir / "report.md", md);
  write_file_atomic(dir / "report_numbers.json", t.entries().dump(2) + "\n");

  // Self-contained HTML: the Markdown tables as preformatted text plus the SVGs inline.
  std::string html = "<!doctype html><html><head><meta charset=\"utf-8\"><title>trex run report</title>"
                     "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}pre{white-space:pre-wrap}</style>"
                     "</head><body>\n";
  std::string text = md;
  std::size_t pos = 0;
  while (true) {
    std::size_t img = text.find("![", pos);
    if (img == std::string::npos) {
      html += "<pre>" + xml_escape(text.substr(pos)) + "</pre>\n";
      break;
    }
    html += "<pre>" + xml_escape(text.substr(pos, img - pos)) + "</pre>\n";
    std::size_t open = text.find('(', img), close = text.find(')', open);
    fs::path fig = dir / text.substr(open + 1, close - open - 1);
    html += fs::exists(fig) ? read_file(fig) : "";
    pos = close + 1;
  }
  html += "</body></html>\n";
  write_file_atomic(dir / "report.html", html);
}

}  // namespace trex::pipeline
