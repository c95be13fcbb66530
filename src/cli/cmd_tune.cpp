// `trex tune cpu|gemm`: the kernel tiling tuner (tune/, docs/tune.md). `cpu` prints the hardware model (detected
// from sysfs or a preset) and the BLIS analytical blocking; `gemm` chooses the bf16 GEMM's cache blocking for a
// set of shapes with an integer program on CBC and, with --measure / --exhaustive, times the choice on this
// machine against the kernel's default, the BLIS blocking and every blocking of the space. Exit 0 on success,
// 2 on bad input (a malformed --shapes item, an unknown preset, a CPU without AVX512_BF16 for --measure).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "model/model_info.hpp"
#include "tune/blis_model.hpp"
#include "tune/gemm_tuner.hpp"
#include "util/error.hpp"
#include "util/progress.hpp"
#include "util/sorted_unique.hpp"

namespace cmd_tune {  // this file's own names (the unity build joins cli files)

using trex::nn::Bf16Blocking;
using namespace trex::tune;

struct Opts {
  std::string cpu = "detect", shapes, model = "bench", rules = "stream";
  int64_t tokens = 4096;
  int top = 5, reps = 3;
  bool measure = false, exhaustive = false, json = false;
  std::vector<int64_t> kc, mc, nc;
};

CpuModel load_cpu(const std::string& name) { return name == "detect" ? detect_cpu() : cpu_preset(name); }

nlohmann::ordered_json blis_json(const BlisBlocking& b) {
  return {{"mr", b.mr}, {"nr", b.nr}, {"kc", b.kc}, {"mc", b.mc}, {"nc", b.nc},
          {"accumulator_regs", b.accumulator_regs}, {"l1_ways_a", b.l1_ways_a}, {"l3_ways_a", b.l3_ways_a}};
}

// The BLIS blocking moved onto the kernel's grid (kc even, mc a multiple of 8, nc of 32).
Bf16Blocking blis_for_kernel(const BlisBlocking& b) {
  return {std::max<int64_t>(2, b.kc / 2 * 2), std::max<int64_t>(8, b.mc / 8 * 8), std::max<int64_t>(32, b.nc / 32 * 32)};
}

int run_cpu(const Opts& o) {
  const CpuModel cpu = load_cpu(o.cpu);
  const BlisBlocking f32 = blis_blocking(cpu, 4), bf16 = blis_blocking(cpu, 2, 4, 2);
  if (o.json) {
    nlohmann::ordered_json j;
    j["cpu"] = cpu_to_json(cpu);
    j["blis_fp32"] = blis_json(f32);
    j["blis_bf16"] = blis_json(bf16);
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("%s: %d-bit vectors, %d FMA pipe(s), latency %d, %d registers, %.2f GHz, FP32 peak %.0f GFLOP/s per core\n",
              cpu.name.c_str(), cpu.vector_bits, cpu.fma_pipes, cpu.fma_latency, cpu.vregs, cpu.ghz,
              cpu.peak_fp32_gflops());
  for (const auto& l : cpu.caches)
    std::printf("  L%d: %lld KiB, %d-way, %d B lines, %lld sets, shared by %d CPU(s)\n", l.level,
                static_cast<long long>(l.bytes / 1024), l.ways, l.line, static_cast<long long>(l.sets), l.shared_by);
  for (const auto& [name, b] : {std::pair{"fp32", f32}, std::pair{"bf16", bf16}})
    std::printf("BLIS analytical blocking, %s: micro-tile %lld x %lld (%d accumulators), kc %lld, mc %lld, nc %lld\n", name,
                static_cast<long long>(b.mr), static_cast<long long>(b.nr), b.accumulator_regs,
                static_cast<long long>(b.kc), static_cast<long long>(b.mc), static_cast<long long>(b.nc));
  return 0;
}

int run_gemm(const Opts& o) {
  const CpuModel cpu = load_cpu(o.cpu);
  const auto shapes = o.shapes.empty() ? model_gemm_shapes(trex::model::load_model_config(o.model), o.tokens)
                                       : parse_shapes(o.shapes);
  TuneSpace space;
  if (!o.kc.empty()) space.kc = trex::sorted_unique(o.kc);  // counted once, as the tuner does
  if (!o.mc.empty()) space.mc = trex::sorted_unique(o.mc);
  if (!o.nc.empty()) space.nc = trex::sorted_unique(o.nc);
  for (int64_t kc : space.kc)
    for (int64_t mc : space.mc)
      for (int64_t nc : space.nc) Bf16Blocking{kc, mc, nc}.validate();  // refuses a bad --kc/--mc/--nc value
  TuneCostParams params;
  params.blis_l1_rule = o.rules == "blis";
  const auto ranked = rank_by_model(cpu, shapes, space, params);
  if (ranked.empty()) throw trex::Error("trex tune gemm: no blocking of the space satisfies the capacity rules");
  const MilpChoice milp = choose_blocking_milp(cpu, shapes, space, params);
  if (!milp.solved) throw trex::Error("trex tune gemm: the MILP did not solve: " + milp.status);

  // What gets timed: the model's top choices, the default and the BLIS blocking; or the whole space.
  std::vector<ScoredBlocking> timed;
  auto add = [&](const Bf16Blocking& b) {
    for (const auto& t : timed)
      if (t.blocking == b) return;
    timed.push_back({b, predict_seconds(cpu, shapes, b, params), -1, capacity_violation(cpu, b, params).empty()});
  };
  for (int i = 0; i < std::min<int>(o.top, int(ranked.size())); ++i) add(ranked[size_t(i)].blocking);
  add(Bf16Blocking{});
  add(blis_for_kernel(blis_blocking(cpu, 2, 4, 2)));
  if (o.exhaustive)
    for (int64_t kc : space.kc)
      for (int64_t mc : space.mc)
        for (int64_t nc : space.nc) add({kc, mc, nc});
  if (o.measure || o.exhaustive) {
    trex::ProgressBar bar("timing blockings", int64_t(timed.size()));
    for (auto& t : timed) {
      t.measured_s = measure_seconds(shapes, t.blocking, o.reps);
      bar.advance(1);
    }
    bar.finish();
  }
  const Bf16Blocking choice = milp.best.blocking;
  std::vector<ScoredBlocking> by_measured = timed;
  std::sort(by_measured.begin(), by_measured.end(),
            [](const ScoredBlocking& a, const ScoredBlocking& b) { return a.measured_s < b.measured_s; });
  int choice_rank = 0;
  double choice_measured = -1, default_measured = -1;
  for (size_t i = 0; i < by_measured.size(); ++i) {
    if (by_measured[i].blocking == choice) {
      choice_rank = int(i) + 1;
      choice_measured = by_measured[i].measured_s;
    }
    if (by_measured[i].blocking == Bf16Blocking{}) default_measured = by_measured[i].measured_s;
  }
  const bool measured = o.measure || o.exhaustive;
  double flops = 0;
  for (const auto& s : shapes) flops += s.weight * 2.0 * double(s.m) * double(s.n) * double(s.k);

  if (o.json) {
    nlohmann::ordered_json j;
    j["cpu"] = cpu_to_json(cpu);
    auto sh = nlohmann::ordered_json::array();
    for (const auto& s : shapes) sh.push_back({{"name", s.name}, {"m", s.m}, {"n", s.n}, {"k", s.k}, {"weight", s.weight}});
    j["shapes"] = sh;
    j["space_size"] = space.kc.size() * space.mc.size() * space.nc.size();
    j["fits"] = ranked.size();
    j["l1_rule"] = o.rules;
    j["milp"] = {{"status", milp.status}, {"seconds", milp.solve_seconds}, {"variables", milp.variables},
                 {"rows", milp.rows}, {"kc", choice.kc}, {"mc", choice.mc}, {"nc", choice.nc},
                 {"predicted_s", milp.best.predicted_s}, {"objective_s", milp.objective_s}};
    j["model_best_predicted_s"] = ranked.front().predicted_s;
    auto rows = nlohmann::ordered_json::array();
    for (const auto& t : (measured ? by_measured : timed))
      rows.push_back({{"kc", t.blocking.kc}, {"mc", t.blocking.mc}, {"nc", t.blocking.nc}, {"fits", t.fits},
                      {"predicted_s", t.predicted_s}, {"measured_s", t.measured_s}});
    j["blockings"] = rows;
    if (measured) {
      j["choice_measured_rank"] = choice_rank;
      j["choice_over_best_measured"] = choice_measured / by_measured.front().measured_s;
      j["default_over_choice_measured"] = default_measured / choice_measured;
    }
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("trex tune gemm on %s: %zu shapes (%.2f GFLOP per step), space %zu blockings, %zu within the rules (L1: %s)\n",
              cpu.name.c_str(), shapes.size(), flops / 1e9, space.kc.size() * space.mc.size() * space.nc.size(),
              ranked.size(), o.rules.c_str());
  std::printf("MILP on CBC (%d variables, %d rows): %s in %.2f s -> kc %lld, mc %lld, nc %lld, predicted %.3f ms "
              "(exhaustive model minimum %.3f ms)\n",
              milp.variables, milp.rows, milp.status.c_str(), milp.solve_seconds, static_cast<long long>(choice.kc),
              static_cast<long long>(choice.mc), static_cast<long long>(choice.nc), 1e3 * milp.best.predicted_s,
              1e3 * ranked.front().predicted_s);
  std::printf("%6s %6s %6s %6s %14s %14s %10s\n", "kc", "mc", "nc", "rules", "predicted ms", "measured ms", "GFLOP/s");
  const auto& rows = measured ? by_measured : timed;
  const size_t shown = o.exhaustive ? std::min<size_t>(rows.size(), 15) : rows.size();
  for (size_t i = 0; i < shown; ++i) {
    const auto& t = rows[i];
    std::printf("%6lld %6lld %6lld %6s %14.3f %14s %10s%s%s\n", static_cast<long long>(t.blocking.kc),
                static_cast<long long>(t.blocking.mc), static_cast<long long>(t.blocking.nc), t.fits ? "ok" : "break",
                1e3 * t.predicted_s, t.measured_s < 0 ? "-" : fmt::format("{:.3f}", 1e3 * t.measured_s).c_str(),
                t.measured_s < 0 ? "-" : fmt::format("{:.1f}", flops / t.measured_s / 1e9).c_str(),
                t.blocking == choice ? "  <- MILP choice" : "", t.blocking == Bf16Blocking{} ? "  <- default" : "");
  }
  if (measured)
    std::printf("MILP choice: measured rank %d of %zu timed, %.3fx the fastest measured; the default takes %.3fx the choice\n",
                choice_rank, by_measured.size(), choice_measured / by_measured.front().measured_s,
                default_measured / choice_measured);
  return 0;
}

trex::cli::CommandRegistrar reg("tune", "Kernel tiling tuner: CPU model, BLIS blocking, bf16 GEMM blocking by MILP + timing",
                                [](CLI::App& sub) -> trex::cli::Action {
  sub.require_subcommand(1);
  auto o = std::make_shared<Opts>();
  CLI::App* cpu = sub.add_subcommand("cpu", "The hardware model (sysfs or preset) and the BLIS analytical blocking");
  CLI::App* gemm = sub.add_subcommand("gemm", "Choose the bf16 GEMM cache blocking (MILP on CBC), optionally timed");
  for (CLI::App* c : {cpu, gemm}) {
    c->add_option("--cpu", o->cpu, "detect (sysfs) or a preset: zen5, zen4")->capture_default_str();
    c->add_flag("--json", o->json, "Print one JSON object");
  }
  gemm->add_option("--shapes", o->shapes, "MxNxK[*weight],... (default: one training step of --model)");
  gemm->add_option("--model", o->model, "Preset or config.json whose step's products are tuned")->capture_default_str();
  gemm->add_option("--tokens", o->tokens, "Tokens per step for --model")->check(CLI::PositiveNumber)->capture_default_str();
  gemm->add_option("--kc", o->kc, "kc values to search (even)");
  gemm->add_option("--mc", o->mc, "mc values to search (multiples of 8)");
  gemm->add_option("--nc", o->nc, "nc values to search (multiples of 32)");
  gemm->add_option("--rules", o->rules, "L1 rule: stream (operands arrive from L2 as fast as the FMAs use them) or "
                                        "blis (both micro-panels fit in L1)")
      ->check(CLI::IsMember({"stream", "blis"}))
      ->capture_default_str();
  gemm->add_option("--top", o->top, "How many of the model's best blockings to time")->check(CLI::Range(1, 1000))
      ->capture_default_str();
  gemm->add_option("--reps", o->reps, "Timed runs per shape (best kept)")->check(CLI::Range(1, 1000))->capture_default_str();
  gemm->add_flag("--measure", o->measure, "Time the model's top blockings, the default and the BLIS blocking");
  gemm->add_flag("--exhaustive", o->exhaustive, "Time every blocking of the space (the check's reference)");
  return [o, cpu, gemm]() -> int {
    if (cpu->parsed()) return run_cpu(*o);
    if (gemm->parsed()) return run_gemm(*o);
    return 2;
  };
});

}  // namespace cmd_tune
