// The bf16 GEMM blocking tuner: shapes, cost model, exhaustive reference, MILP and measurement (gemm_tuner.hpp).
#include "tune/gemm_tuner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>

#include "lp/model.hpp"
#include "lp/solver.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"
#include "util/sorted_unique.hpp"

namespace trex::tune {

namespace {
constexpr int64_t kMr = nn::Bf16Blocking::kMicroRows, kNr = nn::Bf16Blocking::kMicroCols;
constexpr int64_t kElem = 2;  // packed bf16

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

double l1_budget(const CpuModel& c) { const auto& l = c.level(1); return double(l.ways - 1) / l.ways * double(l.bytes); }
double l2_budget(const CpuModel& c) { const auto& l = c.level(2); return double(l.ways - 2) / l.ways * double(l.bytes); }
double l3_budget(const CpuModel& c) {
  const auto& l = c.level(3);
  return 0.5 * double(l.ways - 1) / l.ways * double(l.share_per_cpu());
}

// The separable pieces of predict_seconds (per shape), so the MILP and the reference use the same numbers.
double cycles_to_s(const CpuModel& c, double cycles) { return cycles / (c.ghz * 1e9); }
double compute_part(const CpuModel& c, const GemmShape& s, const TuneCostParams& p) {
  const double mp = double(ceil_div(s.m, kMr) * kMr), np = double(ceil_div(s.n, kNr) * kNr);
  return 2.0 * mp * np * double(s.k) / (c.peak_bf16_gflops() * 1e9 * p.kernel_efficiency) +
         cycles_to_s(c, double(s.k) * double(s.n) * 6.0 / p.pack_bytes_per_cycle);  // B packed once
}
double kc_part(const CpuModel& c, const GemmShape& s, int64_t kc, const TuneCostParams& p) {
  return cycles_to_s(c, double(ceil_div(s.m, kMr) * ceil_div(s.n, kNr) * ceil_div(s.k, kc)) * p.call_cycles);
}
double nc_part(const CpuModel& c, const GemmShape& s, int64_t nc, const TuneCostParams& p) {
  return cycles_to_s(c, double(s.m) * double(s.k) * double(ceil_div(s.n, nc)) * 6.0 / p.pack_bytes_per_cycle);
}
double mc_part(const CpuModel& c, const GemmShape& s, int64_t mc, const TuneCostParams& p) {
  const double bytes = double(ceil_div(s.m, mc)) * double(s.k) * double(ceil_div(s.n, kNr) * kNr) * kElem;
  return p.b_reload_exposed * cycles_to_s(c, bytes / p.l3_bytes_per_cycle);
}

double weighted(const std::vector<GemmShape>& shapes, const std::function<double(const GemmShape&)>& f) {
  double t = 0;
  for (const auto& s : shapes) t += s.weight * f(s);
  return t;
}

// Each value once, however often the caller lists it (a repeated kc would be one blocking counted twice and,
// in the MILP, two binaries of one name).
TuneSpace distinct(const TuneSpace& s) {
  return {sorted_unique(s.kc), sorted_unique(s.mc), sorted_unique(s.nc)};
}

bool tie_less(const nn::Bf16Blocking& a, const nn::Bf16Blocking& b) {
  if (a.kc != b.kc) return a.kc < b.kc;
  if (a.mc != b.mc) return a.mc < b.mc;
  return a.nc < b.nc;
}

}  // namespace

std::vector<GemmShape> parse_shapes(const std::string& text) {
  std::vector<GemmShape> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    GemmShape s;
    double w = 1.0;
    long long m = 0, n = 0, k = 0;
    int used = 0;
    const int got = std::sscanf(item.c_str(), "%lldx%lldx%lld%n", &m, &n, &k, &used);
    bool ok = got == 3 && m > 0 && n > 0 && k > 0;
    if (ok && size_t(used) < item.size()) {
      int used_w = 0;
      ok = std::sscanf(item.c_str() + used, "*%lf%n", &w, &used_w) == 1 && size_t(used + used_w) == item.size() && w > 0;
    }
    if (!ok) throw Error(fmt::format("--shapes: '{}' is not MxNxK or MxNxK*W with positive numbers", item));
    s.m = m;
    s.n = n;
    s.k = k;
    s.weight = w;
    s.name = item;
    out.push_back(s);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<GemmShape> model_gemm_shapes(const model::ModelConfig& c, int64_t tokens) {
  if (tokens <= 0) throw Error("model_gemm_shapes: tokens must be positive");
  std::vector<GemmShape> out;
  const double layers = double(c.num_hidden_layers + c.num_nextn_predict_layers);
  auto add = [&](const std::string& name, int64_t m, int64_t n, int64_t k, double count) {
    if (m <= 0 || n <= 0 || k <= 0) return;
    out.push_back({m, n, k, count, name + " fwd"});                  // Y = X W
    out.push_back({m, k, n, count, name + " dX"});                   // dX = dY Wᵀ
    out.push_back({k, n, m, count, name + " dW"});                   // dW = Xᵀ dY
  };
  const int64_t d = c.hidden_size, f = c.moe_intermediate_size;
  add("wq_a", tokens, c.q_lora_rank, d, layers);
  add("wq_b", tokens, c.num_attention_heads * c.head_dim, c.q_lora_rank, layers);
  add("shared up", tokens, 2 * f, d, layers * double(c.n_shared_experts));
  add("shared down", tokens, d, f, layers * double(c.n_shared_experts));
  const int64_t rows = std::max<int64_t>(1, tokens * c.num_experts_per_tok / std::max<int64_t>(1, c.n_routed_experts));
  add("expert up", rows, 2 * f, d, layers * double(c.n_routed_experts));
  add("expert down", rows, d, f, layers * double(c.n_routed_experts));
  add("head", tokens, c.vocab_size, d, 1.0 + double(c.num_nextn_predict_layers));
  return out;
}

namespace {
std::string l1_violation(const CpuModel& cpu, int64_t kc, const TuneCostParams& p) {
  const double panels = double(kc * (kMr + kNr) * kElem);
  if (p.blis_l1_rule)
    return panels > l1_budget(cpu) ? fmt::format("L1: micro-panels {:.0f} B > {:.0f} B", panels, l1_budget(cpu)) : "";
  const double from_l2 = double(kc * kMr * kElem) + (panels > l1_budget(cpu) ? double(kc * kNr * kElem) : 0.0);
  const double call_cycles = 2.0 * kMr * kNr * double(kc) / (cpu.peak_bf16_gflops() / cpu.ghz * p.kernel_efficiency);
  if (from_l2 / call_cycles > p.l2_bytes_per_cycle)
    return fmt::format("L1: a call needs {:.1f} B/cycle from L2 > {:.1f}", from_l2 / call_cycles, p.l2_bytes_per_cycle);
  return "";
}
}  // namespace

std::string capacity_violation(const CpuModel& cpu, const nn::Bf16Blocking& b, const TuneCostParams& p) {
  if (auto why = l1_violation(cpu, b.kc, p); !why.empty()) return why;
  if (double(b.mc * b.kc * kElem) > l2_budget(cpu))
    return fmt::format("L2: A block {} B > {:.0f} B", b.mc * b.kc * kElem, l2_budget(cpu));
  if (double(b.kc * b.nc * kElem) > l3_budget(cpu))
    return fmt::format("L3: B block {} B > {:.0f} B", b.kc * b.nc * kElem, l3_budget(cpu));
  return "";
}

double predict_seconds(const CpuModel& cpu, const GemmShape& s, const nn::Bf16Blocking& b, const TuneCostParams& p) {
  return compute_part(cpu, s, p) + kc_part(cpu, s, b.kc, p) + nc_part(cpu, s, b.nc, p) + mc_part(cpu, s, b.mc, p);
}

double predict_seconds(const CpuModel& cpu, const std::vector<GemmShape>& shapes, const nn::Bf16Blocking& b,
                       const TuneCostParams& p) {
  return weighted(shapes, [&](const GemmShape& s) { return predict_seconds(cpu, s, b, p); });
}

std::vector<ScoredBlocking> rank_by_model(const CpuModel& cpu, const std::vector<GemmShape>& shapes,
                                          const TuneSpace& space_in, const TuneCostParams& p) {
  const TuneSpace space = distinct(space_in);
  std::vector<ScoredBlocking> out;
  for (int64_t kc : space.kc)
    for (int64_t mc : space.mc)
      for (int64_t nc : space.nc) {
        const nn::Bf16Blocking b{kc, mc, nc};
        b.validate();
        if (!capacity_violation(cpu, b, p).empty()) continue;
        out.push_back({b, predict_seconds(cpu, shapes, b, p), -1, true});
      }
  std::sort(out.begin(), out.end(), [](const ScoredBlocking& a, const ScoredBlocking& b) {
    if (a.predicted_s != b.predicted_s) return a.predicted_s < b.predicted_s;
    return tie_less(a.blocking, b.blocking);
  });
  return out;
}

MilpChoice choose_blocking_milp(const CpuModel& cpu, const std::vector<GemmShape>& shapes, const TuneSpace& space_in,
                                const TuneCostParams& p, double time_limit_s) {
  const TuneSpace space = distinct(space_in);
  // Objective in microseconds keeps the coefficients well inside the solver's tolerances.
  constexpr double kUs = 1e6;
  lp::Model m;
  m.name = "gemm_blocking";
  m.objective.sense = lp::ObjSense::Minimize;
  m.objective.constant = kUs * weighted(shapes, [&](const GemmShape& s) { return compute_part(cpu, s, p); });
  std::vector<int> u, v, w;
  lp::Row one_kc{"one_kc", {}, {}, lp::RowSense::EQ, 1.0, 0.0}, one_mc{"one_mc", {}, {}, lp::RowSense::EQ, 1.0, 0.0},
      one_nc{"one_nc", {}, {}, lp::RowSense::EQ, 1.0, 0.0};
  lp::Row l1{"l1_rule", {}, {}, lp::RowSense::LE, 0.0, 0.0};  // no kc value that breaks the L1 rule
  for (int64_t kc : space.kc) {
    u.push_back(m.add_var(fmt::format("kc_{}", kc), lp::VarType::Binary, 0.0, 1.0));
    one_kc.terms.push_back({u.back(), 1.0});
    if (!l1_violation(cpu, kc, p).empty()) l1.terms.push_back({u.back(), 1.0});
    m.objective.terms.push_back({u.back(), kUs * weighted(shapes, [&](const GemmShape& s) { return kc_part(cpu, s, kc, p); })});
  }
  for (int64_t mc : space.mc) {
    v.push_back(m.add_var(fmt::format("mc_{}", mc), lp::VarType::Binary, 0.0, 1.0));
    one_mc.terms.push_back({v.back(), 1.0});
    m.objective.terms.push_back({v.back(), kUs * weighted(shapes, [&](const GemmShape& s) { return mc_part(cpu, s, mc, p); })});
  }
  for (int64_t nc : space.nc) {
    w.push_back(m.add_var(fmt::format("nc_{}", nc), lp::VarType::Binary, 0.0, 1.0));
    one_nc.terms.push_back({w.back(), 1.0});
    m.objective.terms.push_back({w.back(), kUs * weighted(shapes, [&](const GemmShape& s) { return nc_part(cpu, s, nc, p); })});
  }
  m.rows = {one_kc, one_mc, one_nc};
  if (!l1.terms.empty()) m.rows.push_back(l1);
  // Products: a pair binary per feasible (kc, mc) and (kc, nc); each one-hot value is the sum of its pairs.
  auto pairs = [&](const std::vector<int64_t>& other, const std::vector<int>& ov, const char* tag, double budget) {
    std::vector<lp::Row> by_kc(space.kc.size()), by_other(other.size());
    for (size_t i = 0; i < space.kc.size(); ++i)
      by_kc[i] = {fmt::format("{}_kc_{}", tag, space.kc[i]), {{u[i], -1.0}}, {}, lp::RowSense::EQ, 0.0, 0.0};
    for (size_t j = 0; j < other.size(); ++j)
      by_other[j] = {fmt::format("{}_{}_{}", tag, tag, other[j]), {{ov[j], -1.0}}, {}, lp::RowSense::EQ, 0.0, 0.0};
    for (size_t i = 0; i < space.kc.size(); ++i)
      for (size_t j = 0; j < other.size(); ++j) {
        if (double(space.kc[i] * other[j] * kElem) > budget) continue;
        const int x = m.add_var(fmt::format("{}_{}_{}", tag, space.kc[i], other[j]), lp::VarType::Binary, 0.0, 1.0);
        by_kc[i].terms.push_back({x, 1.0});
        by_other[j].terms.push_back({x, 1.0});
      }
    for (auto& r : by_kc) m.rows.push_back(std::move(r));
    for (auto& r : by_other) m.rows.push_back(std::move(r));
  };
  pairs(space.mc, v, "mc", l2_budget(cpu));
  pairs(space.nc, w, "nc", l3_budget(cpu));
  m.rebuild_index();
  lp::SolveOptions opt;
  opt.time_limit = time_limit_s;
  const auto r = lp::solve(m, lp::Backend::Cbc, opt);
  MilpChoice out;
  out.status = lp::to_string(r.status);
  out.solve_seconds = r.seconds;
  out.variables = m.num_vars();
  out.rows = m.num_rows();
  if (r.status != lp::SolveStatus::Optimal) return out;
  auto pick = [&](const std::vector<int64_t>& vals, const std::vector<int>& vars) {
    for (size_t i = 0; i < vars.size(); ++i)
      if (r.x[size_t(vars[i])] > 0.5) return vals[i];
    throw Error("gemm tuner: the MILP solution sets no value");
  };
  out.solved = true;
  out.best.blocking = {pick(space.kc, u), pick(space.mc, v), pick(space.nc, w)};
  out.best.predicted_s = predict_seconds(cpu, shapes, out.best.blocking, p);
  out.objective_s = r.objective / kUs;
  return out;
}

double measure_seconds(const std::vector<GemmShape>& shapes, const nn::Bf16Blocking& b, int reps) {
  if (!nn::bf16_matmul_supported()) throw Error("trex tune: this CPU lacks AVX512_BF16, the kernel cannot be timed");
  b.validate();
  double total = 0;
  trex::Rng rng(7);
  for (const auto& s : shapes) {
    std::vector<float> a(size_t(s.m * s.k)), bm(size_t(s.k * s.n)), c(size_t(s.m * s.n));
    for (auto& x : a) x = float(rng.normal());
    for (auto& x : bm) x = float(rng.normal());
    const nn::GemmCall g{false, false, s.m, s.n, s.k, 1.0f, a.data(), s.k, bm.data(), s.n, 0.0f, c.data(), s.n};
    nn::gemm_bf16(g, b);  // warm-up: pack buffers grown, pages touched
    double best = 1e300;
    for (int r = 0; r < std::max(1, reps); ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      nn::gemm_bf16(g, b);
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    total += s.weight * best;
  }
  return total;
}

}  // namespace trex::tune
