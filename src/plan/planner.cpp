// The planner's search (planner.hpp): enumeration with named rejections, DP screening, ranking, MILP check,
// and the text / JSON reports.
#include "plan/planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "util/error.hpp"
#include "util/sorted_unique.hpp"
#include "util/timer.hpp"

namespace trex::plan {

namespace {

std::vector<int> divisors_up_to(long n, long limit) {
  std::vector<int> out;
  for (long d = 1; d <= std::min(n, limit); ++d)
    if (n % d == 0) out.push_back(int(d));
  return out;
}

std::vector<int> powers_of_two_dividing(int64_t n) {
  std::vector<int> out;
  for (int64_t d = 1; d <= n; d *= 2)
    if (n % d == 0) out.push_back(int(d));
  return out;
}

std::vector<int64_t> even_cut(int64_t layers, int stages) {
  std::vector<int64_t> first;
  for (int s = 0; s <= stages; ++s) first.push_back(layers * s / stages);
  return first;
}

bool faster(const Estimate& a, const Estimate& b) {
  if (a.step_s != b.step_s) return a.step_s < b.step_s;
  return a.peak_memory_gb < b.peak_memory_gb;
}

std::string cut_text(const std::vector<int64_t>& first) {
  std::string s;
  for (size_t i = 0; i + 1 < first.size(); ++i)
    s += fmt::format("{}{}-{}", i ? " | " : "", first[i], first[i + 1] - 1);
  return s;
}

nlohmann::ordered_json candidate_json(const Candidate& k) {
  nlohmann::ordered_json j;
  j["tp"] = k.tp;
  j["cp"] = k.cp;
  j["pp"] = k.pp;
  j["vpp"] = k.vpp;
  j["ep"] = k.ep;
  j["etp"] = k.etp;
  j["dp"] = k.dp;
  j["edp"] = k.edp;
  j["mbs"] = k.mbs;
  j["micro_batches"] = k.micro_batches;
  j["recompute"] = to_string(k.recompute);
  j["optimizer"] = to_string(k.optimizer);
  return j;
}

nlohmann::ordered_json estimate_json(const Estimate& e) {
  nlohmann::ordered_json j;
  j["candidate"] = candidate_json(e.cand);
  j["fits"] = e.memory_ok;
  j["binding"] = e.binding;
  j["step_s"] = e.step_s;
  j["tokens_per_s"] = e.tokens_per_s;
  j["mfu_3f"] = e.mfu_3f;
  j["mfu_4f"] = e.mfu_4f;
  j["peak_memory_gb"] = e.peak_memory_gb;
  j["memory_cap_gb"] = e.memory_cap_gb;
  j["parts_s"] = {{"pipeline", e.pipeline_s}, {"bubble", e.bubble_s}, {"tp", e.tp_s}, {"ep_exposed", e.ep_s},
                  {"pp", e.pp_s}, {"dp_exposed", e.dp_exposed_s}, {"optimizer", e.optimizer_s}};
  auto stages = nlohmann::ordered_json::array();
  for (const auto& s : e.stages)
    stages.push_back({{"layers", {s.first_layer, s.end_layer}}, {"memory_gb", s.memory_gb},
                      {"weights_gb", s.weights_gb}, {"grads_gb", s.grads_gb}, {"optimizer_gb", s.optimizer_gb},
                      {"activations_gb", s.activations_gb}, {"micro_batch_s", s.compute_s + s.comm_s}});
  j["stages"] = stages;
  return j;
}

}  // namespace

bool complete_candidate(Candidate& k, const Workload& w) {
  const long inner = long(k.tp) * k.cp * k.pp;
  if (inner <= 0 || w.ranks % inner != 0) return false;
  k.dp = int(w.ranks / inner);
  const long expert_inner = long(k.ep) * k.etp * k.pp;
  if (w.ranks % expert_inner != 0) return false;
  k.edp = int(w.ranks / expert_inner);
  const int64_t per_step = int64_t(k.dp) * k.mbs;
  if (w.gbs % per_step != 0) return false;
  k.micro_batches = w.gbs / per_step;
  return true;
}

std::string rule_violation(const Candidate& k, const ModelProfile& m, const Cluster& c, const Workload& w) {
  if (w.ranks % (long(k.tp) * k.cp * k.pp) != 0) return "ranks % (tp·cp·pp) != 0";
  if ((w.ranks / k.pp) % (long(k.ep) * k.etp) != 0) return "ranks/pp % (ep·etp) != 0";
  if (m.heads % k.tp != 0) return "heads % tp != 0";
  if (m.experts > 0 && m.experts % k.ep != 0) return "experts % ep != 0";
  if (m.experts > 0 && m.expert_ffn % k.etp != 0) return "expert ffn % etp != 0";
  if (m.experts == 0 && (k.ep > 1 || k.etp > 1)) return "ep, etp > 1 in a dense model";
  if (long(k.tp) * k.cp > c.tiers.front().ranks) return "tp·cp beyond the fastest tier";
  if (k.etp > c.tiers.front().ranks) return "etp beyond the fastest tier";
  if (k.pp == 1 && k.vpp > 1) return "vpp without pp";
  if (int64_t(m.layers.size()) < int64_t(k.pp) * k.vpp) return "layers < pp·vpp";
  const long dp = w.ranks / (long(k.tp) * k.cp * k.pp);
  if (w.gbs % (dp * k.mbs) != 0) return "gbs % (dp·mbs) != 0";
  if (k.vpp > 1 && (w.gbs / (dp * k.mbs)) % k.pp != 0) return "interleaving needs m % pp == 0";
  return "";
}

std::optional<RankedPlan> plan_candidate(const PlanRequest& req, const Candidate& k, Estimate* unfit) {
  const LayerCosts lc = layer_costs(req.model, req.cluster, req.workload, k);
  RankedPlan rp;
  rp.dp = assign_stages_dp(stage_problem(lc, req.cluster, k));
  if (!rp.dp.feasible) {
    if (unfit)
      *unfit = estimate(req.model, req.cluster, req.workload, k, lc, even_cut(int64_t(req.model.layers.size()), k.pp));
    return std::nullopt;
  }
  rp.estimate = estimate(req.model, req.cluster, req.workload, k, lc, rp.dp.first);
  return rp;
}

PlanResult run_plan(const PlanRequest& req) {
  Timer timer;
  const auto& m = req.model;
  const auto& w = req.workload;
  req.cluster.validate();
  if (w.ranks < 1) throw Error("plan: --ranks must be at least 1");
  if (w.gbs < 1) throw Error("plan: --gbs must be at least 1");
  // Each value once, however often the request lists it.
  SearchSpace space;
  space.tp = sorted_unique(req.space.tp);
  space.vpp = sorted_unique(req.space.vpp);
  space.etp = sorted_unique(req.space.etp);
  space.mbs = sorted_unique(req.space.mbs);
  space.pp = sorted_unique(req.space.pp);
  space.ep = sorted_unique(req.space.ep);
  space.recompute = sorted_unique(req.space.recompute);
  space.optimizer = sorted_unique(req.space.optimizer);
  const auto pps = space.pp.empty() ? divisors_up_to(w.ranks, long(m.layers.size())) : space.pp;
  const bool moe = m.experts > 0;  // a dense model has no expert dimensions to split
  const auto eps = !moe ? std::vector<int>{1} : space.ep.empty() ? powers_of_two_dividing(m.experts) : space.ep;
  const auto etps = moe ? space.etp : std::vector<int>{1};
  PlanResult r;
  std::vector<RankedPlan> fit;
  std::optional<Estimate> best_unfit;
  for (int tp : space.tp)
    for (int pp : pps)
      for (int vpp : space.vpp)
        for (int ep : eps)
          for (int etp : etps)
            for (int mbs : space.mbs) {
              Candidate base;
              base.tp = tp;
              base.pp = pp;
              base.vpp = vpp;
              base.ep = ep;
              base.etp = etp;
              base.mbs = mbs;
              const int64_t variants = int64_t(space.recompute.size() * space.optimizer.size());
              r.tuples += variants;
              const std::string why = rule_violation(base, m, req.cluster, w);
              if (!why.empty() || !complete_candidate(base, w)) {
                r.rejected[why.empty() ? "does not divide" : why] += variants;
                continue;
              }
              for (auto rc : space.recompute)
                for (auto opt : space.optimizer) {
                  Candidate k = base;
                  k.recompute = rc;
                  k.optimizer = opt;
                  ++r.valid;
                  Estimate unfit;
                  auto rp = plan_candidate(req, k, &unfit);
                  if (rp) {
                    fit.push_back(std::move(*rp));
                  } else if (!best_unfit || faster(unfit, *best_unfit)) {
                    best_unfit = unfit;
                  }
                }
            }
  r.fit = int64_t(fit.size());
  std::sort(fit.begin(), fit.end(), [](const RankedPlan& a, const RankedPlan& b) { return faster(a.estimate, b.estimate); });
  if (int64_t(fit.size()) > req.top) fit.resize(size_t(std::max(0, req.top)));
  for (int i = 0; i < std::min<int>(req.milp_top, int(fit.size())); ++i) {
    const auto& k = fit[size_t(i)].estimate.cand;
    const StageProblem prob = stage_problem(layer_costs(m, req.cluster, w, k), req.cluster, k);
    fit[size_t(i)].milp = assign_stages_milp(prob, req.milp_time_limit);
  }
  r.ranked = std::move(fit);
  if (best_unfit) {
    RankedPlan u;
    u.estimate = *best_unfit;
    u.dp.status = "infeasible";
    r.fastest_unfit = u;
  }
  r.seconds = timer.seconds();
  return r;
}

std::string estimate_breakdown(const Estimate& e) {
  std::string s = fmt::format("{}: step {:.3f} s = pipeline {:.3f} (bubble {:.3f}) + exposed dp {:.3f} + optimizer {:.3f}\n",
                              e.cand.str(), e.step_s, e.pipeline_s, e.bubble_s, e.dp_exposed_s, e.optimizer_s);
  s += fmt::format("  critical stage per step: tp {:.3f} s, exposed ep {:.3f} s, pp sends {:.3f} s; binding: {}\n",
                   e.tp_s, e.ep_s, e.pp_s, e.binding);
  s += fmt::format("  {:>5} {:>9} {:>9} {:>8} {:>9} {:>9} {:>9} {:>11}\n", "stage", "layers", "memory", "weights",
                   "grads", "optim", "activ", "µbatch s");
  for (size_t i = 0; i < e.stages.size(); ++i) {
    const auto& st = e.stages[i];
    s += fmt::format("  {:>5} {:>9} {:>9.2f} {:>8.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>11.4f}\n", i,
                     fmt::format("{}-{}", st.first_layer, st.end_layer - 1), st.memory_gb, st.weights_gb, st.grads_gb,
                     st.optimizer_gb, st.activations_gb, st.compute_s + st.comm_s);
  }
  s += fmt::format("  memory per rank usable: {:.1f} GB ({})\n", e.memory_cap_gb, e.memory_ok ? "fits" : "does not fit");
  return s;
}

std::string plan_to_text(const PlanRequest& req, const PlanResult& r) {
  const auto& w = req.workload;
  std::string s = fmt::format(
      "trex plan: {} (seq {}, GBS {}, {:.2f}M tokens/step) on {} × {} ({}, {:.4g} TFLOPS, {:.4g} GB)\n",
      req.model.name, req.model.seq_len, w.gbs, double(w.gbs) * double(req.model.seq_len) / 1e6, req.cluster.name,
      w.ranks, req.cluster.device, req.cluster.peak_tflops, req.cluster.hbm_gb);
  s += fmt::format("searched {} configurations in {:.1f} s: {} valid, {} fit in memory\n", r.tuples, r.seconds, r.valid,
                   r.fit);
  for (const auto& [why, n] : r.rejected) s += fmt::format("  rejected {:>8}  {}\n", n, why);
  if (r.ranked.empty()) {
    s += "no configuration fits in memory";
    if (r.fastest_unfit) s += "; the fastest without the memory limit:\n" + estimate_breakdown(r.fastest_unfit->estimate);
    else s += "\n";
    return s;
  }
  s += fmt::format("{:>4} {:>3} {:>3} {:>3} {:>4} {:>3} {:>4} {:>4} {:>3} {:>5} {:>9} {:>10} {:>9} {:>10} {:>6} {:>6} {:>7} {:>7}  {}\n",
                   "rank", "TP", "PP", "VPP", "EP", "ETP", "DP", "EDP", "MBS", "m", "recompute", "optimizer", "step s",
                   "tok/s", "MFU3F", "MFU4F", "mem GB", "bubble", "binding");
  for (size_t i = 0; i < r.ranked.size(); ++i) {
    const auto& e = r.ranked[i].estimate;
    const auto& k = e.cand;
    s += fmt::format("{:>4} {:>3} {:>3} {:>3} {:>4} {:>3} {:>4} {:>4} {:>3} {:>5} {:>9} {:>10} {:>9.3f} {:>10.0f} {:>5.1f}% {:>5.1f}% {:>7.1f} {:>6.1f}%  {}\n",
                     i + 1, k.tp, k.pp, k.vpp, k.ep, k.etp, k.dp, k.edp, k.mbs, k.micro_batches, to_string(k.recompute),
                     to_string(k.optimizer), e.step_s, e.tokens_per_s, 100 * e.mfu_3f, 100 * e.mfu_4f, e.peak_memory_gb,
                     100 * e.bubble_s / e.step_s, e.binding);
  }
  for (size_t i = 0; i < r.ranked.size(); ++i) {
    const auto& rp = r.ranked[i];
    if (!rp.milp) continue;
    const auto& mi = *rp.milp;
    std::string verdict;
    if (!mi.feasible)
      verdict = "not solved to optimality; the DP's cut stands";
    else if (std::abs(mi.max_seconds - rp.dp.max_seconds) <= 1e-6 * rp.dp.max_seconds)
      verdict = "same slowest stage as the DP";
    else
      verdict = "DIFFERS from the DP";  // would be a bug in one of them: both solve the same problem exactly
    s += fmt::format("#{} stages {} (MILP on CBC: {}, {:.2f} s; {})\n", i + 1, cut_text(rp.dp.first), mi.status,
                     mi.solve_seconds, verdict);
  }
  s += "\n" + estimate_breakdown(r.ranked.front().estimate);
  return s;
}

nlohmann::ordered_json plan_to_json(const PlanRequest& req, const PlanResult& r) {
  nlohmann::ordered_json j;
  j["model"] = req.model.name;
  j["seq_len"] = req.model.seq_len;
  j["gbs"] = req.workload.gbs;
  j["ranks"] = req.workload.ranks;
  j["cluster"] = cluster_to_json(req.cluster);
  j["searched"] = r.tuples;
  j["valid"] = r.valid;
  j["fit"] = r.fit;
  j["rejected"] = r.rejected;
  j["seconds"] = r.seconds;
  auto ranked = nlohmann::ordered_json::array();
  for (const auto& rp : r.ranked) {
    auto e = estimate_json(rp.estimate);
    e["stage_cut_dp"] = rp.dp.first;
    if (rp.milp) {
      e["milp"] = {{"status", rp.milp->status}, {"seconds", rp.milp->solve_seconds},
                   {"max_stage_s", rp.milp->max_seconds}, {"stage_cut", rp.milp->first}};
    }
    ranked.push_back(e);
  }
  j["ranked"] = ranked;
  if (r.fastest_unfit) j["fastest_unfit"] = estimate_json(r.fastest_unfit->estimate);
  return j;
}

}  // namespace trex::plan
