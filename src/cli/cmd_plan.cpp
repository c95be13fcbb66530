// `trex plan --model CONFIG --ranks N --gbs G [--cluster NAME|FILE] [--seq S] [search-space filters] [--json]`:
// the parallelism planner (plan/planner.hpp, docs/plan.md). Prints the fastest configurations that fit in
// memory with their predicted step time, tokens/s, MFU and binding constraint; --explain prints one given
// configuration's per-stage breakdown instead. Exit 0 when a plan was printed (also when nothing fits:
// that is an answer), 2 on bad input.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "model/model_info.hpp"
#include "plan/planner.hpp"
#include "util/error.hpp"

namespace cmd_plan {  // this file's own names (the unity build joins cli files)

struct Opts {
  std::string model, cluster = "cm384";
  long ranks = 0;
  int64_t gbs = 0, seq = 4096;
  int top = 10, milp_top = 1;
  double milp_time_limit = 20;
  std::vector<int> tp, pp, vpp, ep, etp, mbs;
  std::vector<std::string> recompute, optimizer;
  double dispatch_bytes = 2, combine_bytes = 2, imbalance = 1.0;
  bool json = false, explain = false;
};

trex::plan::Recompute parse_recompute(const std::string& s) {
  if (s == "none") return trex::plan::Recompute::None;
  if (s == "selective") return trex::plan::Recompute::Selective;
  if (s == "full") return trex::plan::Recompute::Full;
  throw trex::Error("--recompute: expected none, selective or full, got '" + s + "'");
}

trex::plan::OptimizerPlacement parse_optimizer(const std::string& s) {
  if (s == "replicated") return trex::plan::OptimizerPlacement::Replicated;
  if (s == "sharded") return trex::plan::OptimizerPlacement::Sharded;
  if (s == "host_swap") return trex::plan::OptimizerPlacement::HostSwap;
  throw trex::Error("--optimizer: expected replicated, sharded or host_swap, got '" + s + "'");
}

int run(const Opts& o) {
  trex::plan::PlanRequest req;
  bool dense = false;
  for (const auto& g : trex::plan::dense_gpt_presets())
    if (g.name == o.model) {
      req.model = trex::plan::profile_dense_gpt(g, o.seq);
      dense = true;
    }
  if (!dense) req.model = trex::plan::profile_model(trex::model::load_model_config(o.model), o.seq, o.model);
  req.cluster = trex::plan::load_cluster(o.cluster);
  req.workload.ranks = o.ranks;
  req.workload.gbs = o.gbs;
  req.workload.dispatch_bytes = o.dispatch_bytes;
  req.workload.combine_bytes = o.combine_bytes;
  req.workload.expert_imbalance = o.imbalance;
  req.top = o.top;
  req.milp_top = o.milp_top;
  req.milp_time_limit = o.milp_time_limit;
  auto& sp = req.space;
  if (!o.tp.empty()) sp.tp = o.tp;
  if (!o.pp.empty()) sp.pp = o.pp;
  if (!o.vpp.empty()) sp.vpp = o.vpp;
  if (!o.ep.empty()) sp.ep = o.ep;
  if (!o.etp.empty()) sp.etp = o.etp;
  if (!o.mbs.empty()) sp.mbs = o.mbs;
  if (!o.recompute.empty()) {
    sp.recompute.clear();
    for (const auto& r : o.recompute) sp.recompute.push_back(parse_recompute(r));
  }
  if (!o.optimizer.empty()) {
    sp.optimizer.clear();
    for (const auto& r : o.optimizer) sp.optimizer.push_back(parse_optimizer(r));
  }
  if (req.model.experts == 0) {  // a dense model: no expert dimensions to choose
    if (sp.ep.empty()) sp.ep = {1};
    if (o.etp.empty()) sp.etp = {1};
  }
  if (o.explain) {
    // One configuration: every dimension must be pinned to a single value.
    auto one = [](const std::vector<int>& v, const char* flag) {
      if (v.size() != 1) throw trex::Error(std::string("--explain needs exactly one value for ") + flag);
      return v[0];
    };
    trex::plan::Candidate k;
    k.tp = one(sp.tp, "--tp");
    k.pp = one(sp.pp, "--pp");
    k.vpp = one(sp.vpp, "--vpp");
    k.ep = one(sp.ep, "--ep");
    k.etp = one(sp.etp, "--etp");
    k.mbs = one(sp.mbs, "--mbs");
    if (sp.recompute.size() != 1 || sp.optimizer.size() != 1)
      throw trex::Error("--explain needs exactly one value for --recompute and --optimizer");
    k.recompute = sp.recompute[0];
    k.optimizer = sp.optimizer[0];
    const std::string why = trex::plan::rule_violation(k, req.model, req.cluster, req.workload);
    if (!why.empty()) throw trex::Error(k.str() + ": not a valid configuration: " + why);
    trex::plan::complete_candidate(k, req.workload);
    trex::plan::Estimate unfit;
    const auto rp = trex::plan::plan_candidate(req, k, &unfit);
    const trex::plan::Estimate& e = rp ? rp->estimate : unfit;
    if (o.json) {
      trex::plan::PlanResult r;
      r.tuples = r.valid = 1;
      if (rp) {
        r.fit = 1;
        r.ranked.push_back(*rp);
      } else {
        trex::plan::RankedPlan u;
        u.estimate = unfit;
        r.fastest_unfit = u;
      }
      std::printf("%s\n", trex::plan::plan_to_json(req, r).dump(2).c_str());
    } else {
      if (!rp) std::printf("no stage cut fits in memory; with the layers spread evenly:\n");
      std::printf("%s", trex::plan::estimate_breakdown(e).c_str());
      std::printf("  tokens/s %.0f, MFU %.1f %% (3F) / %.1f %% (4F, recompute counted)\n", e.tokens_per_s,
                  100 * e.mfu_3f, 100 * e.mfu_4f);
    }
    return 0;
  }
  const auto r = trex::plan::run_plan(req);
  if (o.json)
    std::printf("%s\n", trex::plan::plan_to_json(req, r).dump(2).c_str());
  else
    std::printf("%s", trex::plan::plan_to_text(req, r).c_str());
  return 0;
}

trex::cli::CommandRegistrar reg(
    "plan", "Parallelism planner: rank TP/PP/VPP/EP/ETP/recompute/optimizer configurations by predicted step time",
    [](CLI::App& sub) -> trex::cli::Action {
      auto o = std::make_shared<Opts>();
      sub.add_option("--model", o->model, "A V4 preset (tiny, bench, small), a config.json (configs/deepseek-v4-pro.json), or a dense GPT "
                                      "(gpt-175b, gpt-530b, gpt-1t)")
          ->required();
      sub.add_option("--cluster", o->cluster, "Cluster preset (cm384, h800, h100, h200, cpu2) or a JSON file")
          ->capture_default_str();
      sub.add_option("--ranks", o->ranks, "Number of ranks (devices)")->required()->check(CLI::PositiveNumber);
      sub.add_option("--gbs", o->gbs, "Global batch size in sequences")->required()->check(CLI::PositiveNumber);
      sub.add_option("--seq", o->seq, "Sequence length")->check(CLI::PositiveNumber)->capture_default_str();
      sub.add_option("--top", o->top, "How many configurations to list")->check(CLI::Range(1, 100000))->capture_default_str();
      sub.add_option("--milp-top", o->milp_top, "How many of them get their stage cut re-solved as a MILP on CBC")
          ->check(CLI::Range(0, 1000))
          ->capture_default_str();
      sub.add_option("--milp-time-limit", o->milp_time_limit, "Seconds per MILP")->check(CLI::PositiveNumber)
          ->capture_default_str();
      sub.add_option("--tp", o->tp, "Tensor-parallel sizes to try (default 1 2 4 8)")->check(CLI::PositiveNumber);
      sub.add_option("--pp", o->pp, "Pipeline stages to try (default: every divisor of --ranks up to the layer count)")
          ->check(CLI::PositiveNumber);
      sub.add_option("--vpp", o->vpp, "Virtual chunks per stage (default 1 2 4)")->check(CLI::PositiveNumber);
      sub.add_option("--ep", o->ep, "Expert-parallel sizes (default: powers of two dividing the expert count)")
          ->check(CLI::PositiveNumber);
      sub.add_option("--etp", o->etp, "Expert tensor-parallel sizes (default 1 2 4 8)")->check(CLI::PositiveNumber);
      sub.add_option("--mbs", o->mbs, "Micro-batch sizes (default 1 2 4)")->check(CLI::PositiveNumber);
      sub.add_option("--recompute", o->recompute, "none, selective, full (default: all)");
      sub.add_option("--optimizer", o->optimizer, "replicated, sharded, host_swap (default: all)");
      sub.add_option("--dispatch-bytes", o->dispatch_bytes, "Bytes per element of the EP dispatch (1 = FP8/INT8)")
          ->check(CLI::PositiveNumber)
          ->capture_default_str();
      sub.add_option("--combine-bytes", o->combine_bytes, "Bytes per element of the EP combine")
          ->check(CLI::PositiveNumber)
          ->capture_default_str();
      sub.add_option("--imbalance", o->imbalance, "Expert load imbalance γ = max-rank / mean load (>= 1)")
          ->check(CLI::Range(1.0, 1e6))
          ->capture_default_str();
      sub.add_flag("--explain", o->explain, "Break down one configuration (every filter given once)");
      sub.add_flag("--json", o->json, "Print one JSON object");
      return [o]() -> int { return run(*o); };
    });

}  // namespace cmd_plan
