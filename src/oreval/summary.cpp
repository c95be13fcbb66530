// Result summaries: pass@k, Wilson intervals, the absolute and relative rules side by side, summary.json/.md.
#include "oreval/summary.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <set>

#include "oreval/benchmarks.hpp"
#include "oreval/score.hpp"
#include "util/error.hpp"

namespace trex::oreval {
namespace fs = std::filesystem;

double pass_at_k(int n, int c, int k) {
  if (n < 1 || c < 0 || c > n || k < 1 || k > n)
    throw Error(fmt::format("pass@k needs 0 <= c <= n and 1 <= k <= n (n={}, c={}, k={})", n, c, k));
  if (n - c < k) return 1.0;  // every k-subset holds a correct sample
  // C(n−c, k) / C(n, k) = Π_{i=n−c+1..n} (1 − k/i)
  double miss = 1.0;
  for (int i = n - c + 1; i <= n; ++i) miss *= 1.0 - double(k) / double(i);
  return 1.0 - miss;
}

Interval wilson_interval(double successes, int n, double z) {
  if (n <= 0) return {0.0, 1.0};
  const double nn = double(n), p = std::clamp(successes / nn, 0.0, 1.0), z2 = z * z;
  const double denom = 1.0 + z2 / nn;
  const double center = (p + z2 / (2.0 * nn)) / denom;
  const double half = z / denom * std::sqrt(p * (1.0 - p) / nn + z2 / (4.0 * nn * nn));
  return {std::max(0.0, center - half), std::min(1.0, center + half)};
}

std::vector<int> default_pass_k(int samples) {
  std::vector<int> k = {1};
  if (samples > 1) k.push_back(samples);
  return k;
}

namespace {

struct SampleView {
  bool success = false, success_relative = false, code_pass = false;
  std::string kind;
};

SampleView view_sample(const Json& s, const Json& gold, double rel_tol) {
  SampleView v;
  v.success = s.value("success", false);
  v.code_pass = s.value("code_pass", false);
  v.kind = s.value("kind", std::string("unknown"));
  auto it = s.find("predicted");
  const bool graded = it != s.end() && it->is_number() && gold.is_number();
  v.success_relative =
      v.success || (graded && objective_matches_relative(it->get<double>(), gold.get<double>(), rel_tol));
  return v;
}

// One result line's samples: its `samples` array (--samples), else the line itself.
std::vector<SampleView> samples_of(const Json& j, double rel_tol) {
  const Json gold = j.value("gold", Json());
  std::vector<SampleView> out;
  if (auto it = j.find("samples"); it != j.end() && it->is_array() && !it->empty()) {
    for (const auto& s : *it) out.push_back(view_sample(s, gold, rel_tol));
  } else {
    out.push_back(view_sample(j, gold, rel_tol));
  }
  return out;
}

std::string percent(double v) { return fmt::format("{:.2f}", 100.0 * v); }

std::string interval_text(const Interval& i) { return fmt::format("[{:.1f}, {:.1f}]", 100.0 * i.lo, 100.0 * i.hi); }

// 1e-4 rather than 0.0001 for a power of ten.
std::string tol_text(double t) {
  const double e = std::log10(t);
  if (t > 0 && std::fabs(e - std::round(e)) < 1e-9) return fmt::format("1e{}", int(std::round(e)));
  return fmt::format("{:g}", t);
}

Json interval_json(const Interval& i) { return Json::array({i.lo, i.hi}); }

}  // namespace

EvalSummary summarize(const std::vector<std::string>& keys, const fs::path& out_dir, const SummaryOptions& opt) {
  EvalSummary s;
  s.options = opt;
  if (s.options.samples > 1 && s.options.pass_k.empty()) s.options.pass_k = default_pass_k(s.options.samples);
  const std::vector<int>& ks = s.options.pass_k;
  for (const auto& key : keys) {
    BenchmarkSummary bs;
    bs.key = key;
    bs.display = key;  // a generic file's stem; a built-in key has its column name even with no results
    for (const auto& builtin : builtin_benchmark_table())
      if (key == builtin.key) bs.display = builtin.display;
    std::vector<double> sum_k(ks.size(), 0.0), sum_k_rel(ks.size(), 0.0);
    double sum1 = 0.0, sum1_rel = 0.0, sum_code = 0.0;
    fs::path file = out_dir / key / "results.jsonl";
    if (fs::exists(file)) {
      JsonlReader r(file);
      std::set<std::string> seen;
      while (auto j = r.next()) {
        if (!seen.insert(j->at("id").get<std::string>()).second) continue;
        bs.display = j->value("benchmark", key);
        const auto samples = samples_of(*j, s.options.rel_tol);
        const int n = int(samples.size());
        int c = 0, c_rel = 0, code = 0;
        for (const auto& v : samples) {
          c += v.success;
          c_rel += v.success_relative;
          code += v.code_pass;
          bs.outcomes[v.kind]++;
        }
        ++bs.n;
        bs.samples_scored += n;
        bs.successes += c;
        bs.successes_relative += c_rel;
        bs.code_pass += code;
        sum1 += double(c) / n;
        sum1_rel += double(c_rel) / n;
        sum_code += double(code) / n;
        for (std::size_t i = 0; i < ks.size(); ++i) {
          if (ks[i] > n)
            throw Error(r.where(), fmt::format("item '{}' holds {} sample(s), fewer than k = {} (rerun with "
                                               "--samples {} into another --out)",
                                               j->at("id").get<std::string>(), n, ks[i], ks[i]));
          sum_k[i] += pass_at_k(n, c, ks[i]);
          sum_k_rel[i] += pass_at_k(n, c_rel, ks[i]);
        }
      }
    }
    if (bs.n > 0) {
      bs.accuracy = sum1 / bs.n;
      bs.accuracy_relative = sum1_rel / bs.n;
      bs.code_pass_rate = sum_code / bs.n;
    }
    bs.interval = wilson_interval(sum1, bs.n);
    bs.interval_relative = wilson_interval(sum1_rel, bs.n);
    for (std::size_t i = 0; i < ks.size(); ++i) {
      RateAtK r;
      r.k = ks[i];
      r.value = bs.n ? sum_k[i] / bs.n : 0.0;
      r.value_relative = bs.n ? sum_k_rel[i] / bs.n : 0.0;
      r.interval = wilson_interval(sum_k[i], bs.n);
      r.interval_relative = wilson_interval(sum_k_rel[i], bs.n);
      bs.pass_at_k.push_back(r);
    }
    s.benchmarks.push_back(bs);
  }
  const double nb = double(s.benchmarks.size());
  for (const auto& b : s.benchmarks) {
    s.average += b.accuracy / nb;
    s.average_relative += b.accuracy_relative / nb;
    for (const auto& r : b.pass_at_k) {
      s.average_at_k[r.k].first += r.value / nb;
      s.average_at_k[r.k].second += r.value_relative / nb;
    }
  }
  return s;
}

namespace {

std::string metric_name(const SummaryOptions& o) {
  if (o.samples > 1) return "Pass@1";
  return o.attempts == 1 ? "Pass@1" : fmt::format("acc@{}", o.attempts);
}

}  // namespace

Json summary_json(const EvalSummary& s) {
  const SummaryOptions& o = s.options;
  Json j;
  j["metric"] = o.samples > 1 ? "pass@1" : o.attempts == 1 ? "pass@1" : fmt::format("acc@{}", o.attempts);
  j["attempts"] = o.attempts;
  j["samples"] = o.samples;
  j["rel_tol"] = o.rel_tol;
  j["interval"] = "95 % Wilson score interval over the items";
  j["average"] = s.average;
  j["average_relative"] = s.average_relative;
  j["seconds"] = s.seconds;
  j["items_per_second"] = s.items_per_second;
  if (!s.average_at_k.empty()) {
    Json avg = Json::object();
    for (const auto& [k, v] : s.average_at_k) avg[std::to_string(k)] = {{"absolute", v.first}, {"relative", v.second}};
    j["average_pass_at_k"] = avg;
  }
  j["benchmarks"] = Json::array();
  for (const auto& b : s.benchmarks) {
    Json e = {{"key", b.key},
              {"name", b.display},
              {"n", b.n},
              {"samples_scored", b.samples_scored},
              {"successes", b.successes},
              {"successes_relative", b.successes_relative},
              {"accuracy", b.accuracy},
              {"accuracy_relative", b.accuracy_relative},
              {"interval_95", interval_json(b.interval)},
              {"interval_95_relative", interval_json(b.interval_relative)},
              {"code_pass_rate", b.code_pass_rate},
              {"outcomes", b.outcomes}};
    if (!b.pass_at_k.empty()) {
      Json pk = Json::object();
      for (const auto& r : b.pass_at_k)
        pk[std::to_string(r.k)] = {{"absolute", r.value},
                                   {"relative", r.value_relative},
                                   {"interval_95", interval_json(r.interval)},
                                   {"interval_95_relative", interval_json(r.interval_relative)}};
      e["pass_at_k"] = pk;
    }
    j["benchmarks"].push_back(e);
  }
  return j;
}

std::string summary_markdown(const EvalSummary& s) {
  const SummaryOptions& o = s.options;
  const std::string abs_rule = "abs. 1e-6", rel_rule = "rel. " + tol_text(o.rel_tol);
  std::string metric = metric_name(o);
  if (o.samples > 1) metric += fmt::format(", {} samples", o.samples);
  std::string head = "| " + metric + " (%) |", sep = "|---|";
  for (const auto& b : s.benchmarks) {
    head += " " + b.display + " |";
    sep += "---:|";
  }
  head += " Avg |";
  sep += "---:|";
  auto row = [&](const std::string& label, auto value_of, double avg) {
    std::string r = "| " + label + " |";
    for (const auto& b : s.benchmarks) r += " " + percent(value_of(b)) + " |";
    return r + " " + percent(avg) + " |\n";
  };
  std::string md = "# Evaluation summary\n\n" + head + "\n" + sep + "\n";
  md += row("trex, " + abs_rule, [](const BenchmarkSummary& b) { return b.accuracy; }, s.average);
  md += row("trex, " + rel_rule, [](const BenchmarkSummary& b) { return b.accuracy_relative; }, s.average_relative);
  for (std::size_t i = 0; i < o.pass_k.size(); ++i) {
    const int k = o.pass_k[i];
    if (k == 1) continue;  // the rows above
    auto avg = s.average_at_k.count(k) ? s.average_at_k.at(k) : std::pair<double, double>{0.0, 0.0};
    md += row(fmt::format("Pass@{}, {}", k, abs_rule),
              [i](const BenchmarkSummary& b) { return b.pass_at_k[i].value; }, avg.first);
    md += row(fmt::format("Pass@{}, {}", k, rel_rule),
              [i](const BenchmarkSummary& b) { return b.pass_at_k[i].value_relative; }, avg.second);
  }
  md += "\n";
  md += "Success: an OPTIMAL solve within 1e-6 absolute of the gold objective (the report's rule), or ORGEval "
        "structural equivalence (structure targets). " +
        rel_rule + ": |pred − gold| ≤ max(1e-6, " + tol_text(o.rel_tol) +
        "·|gold|) (the tolerance these benchmarks' authors use; `--rel-tol`). Intervals: 95 % Wilson score "
        "interval over the items.";
  if (o.samples > 1)
    md += fmt::format(" Pass@k: the unbiased estimator 1 − C(n−c, k)/C(n, k) (Chen et al. 2021) from n = {} "
                      "samples per item, averaged over the items.",
                      o.samples);
  else if (o.attempts > 1)
    md += fmt::format(" acc@{}: an item succeeds when one of up to {} attempts does.", o.attempts, o.attempts);
  md += "\n\n";
  md += "| benchmark | n | successes | " + abs_rule + " (%) | 95 % interval | " + rel_rule +
        " (%) | 95 % interval | code pass (%) | outcomes |\n|---|---:|---:|---:|---|---:|---|---:|---|\n";
  for (const auto& b : s.benchmarks) {
    std::string outs;
    for (const auto& [k, v] : b.outcomes) outs += (outs.empty() ? "" : ", ") + k + " " + std::to_string(v);
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", b.display, b.n, b.successes,
                      percent(b.accuracy), interval_text(b.interval), percent(b.accuracy_relative),
                      interval_text(b.interval_relative), percent(b.code_pass_rate), outs);
  }
  if (o.samples > 1) {
    md += "\n| benchmark |";
    std::string sep2 = "|---|";
    for (int k : o.pass_k) {
      md += fmt::format(" Pass@{} {} (%) | 95 % interval | Pass@{} {} (%) | 95 % interval |", k, abs_rule, k, rel_rule);
      sep2 += "---:|---|---:|---|";
    }
    md += "\n" + sep2 + "\n";
    for (const auto& b : s.benchmarks) {
      md += "| " + b.display + " |";
      for (const auto& r : b.pass_at_k)
        md += " " + percent(r.value) + " | " + interval_text(r.interval) + " | " + percent(r.value_relative) + " | " +
              interval_text(r.interval_relative) + " |";
      md += "\n";
    }
  }
  if (s.seconds > 0) md += fmt::format("\n{:.1f} s, {:.1f} items/s\n", s.seconds, s.items_per_second);
  return md;
}

}  // namespace trex::oreval
