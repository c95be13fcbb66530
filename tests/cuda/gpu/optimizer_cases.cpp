// The optimizer op checks (optimizer_cases.hpp): train::Optimizer and the CUDA updates on the same inputs.
#include "optimizer_cases.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/optimizer.hpp"
#include "nn/gemm_bf16.hpp"
#include "optimizer_ref.hpp"
#include "train/optimizer.hpp"

namespace trex::cuda::check {

namespace {
constexpr double kU = 1.0 / 16777216.0;  // 2^-24

std::string shape_str(int64_t rows, int64_t cols, int steps) {
  return "rows=" + std::to_string(rows) + " cols=" + std::to_string(cols) + " steps=" + std::to_string(steps);
}

Compare same_bits(const std::string& what, const std::vector<float>& a, const std::vector<float>& b) {
  Compare c;
  c.what = what + " (bitwise)";
  c.n = int64_t(a.size());
  if (a.size() != b.size()) c.bad = c.n > 0 ? c.n : 1;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (std::memcmp(&a[i], &b[i], 4) != 0) ++c.bad;
  return c;
}

double max_abs(const std::vector<float>& v) {
  double m = 0;
  for (float x : v) m = std::max(m, std::fabs(double(x)));
  return m;
}

// The fp32 Newton–Schulz bound (optimizer_cases.hpp) for a matrix whose orthogonalised entries reach max_x.
double ns_fp32_tol(int64_t rows, int64_t cols, double max_x) {
  return 64 * kU * std::sqrt(double(std::max(rows, cols))) * max_x;
}
}  // namespace

OpReport check_adamw(Harness& h, int64_t rows, int64_t cols, int steps, bool bf16_copy) {
  OpReport rep;
  rep.op = bf16_copy ? "adamw_bf16_copy" : "adamw";
  rep.shape = shape_str(rows, cols, steps);
  const int64_t nw = rows * cols, total = nw + cols;
  std::vector<train::TensorSlot> slots{{"layers.0.ffn.w1.weight", 0, nw, rows, cols, 2, true},
                                       {"layers.0.ffn_norm.weight", nw, cols, 1, cols, 1, true}};
  train::OptimizerConfig cfg;
  cfg.kind = train::OptimizerKind::AdamW;
  cfg.weight_decay = 0.1;
  train::Optimizer opt(slots, total, cfg);

  Rng rng(500 + uint64_t(rows * 3 + cols + steps));
  std::vector<float> p = randn(rng, size_t(total), 0.05);
  std::vector<float> grads = randn(rng, size_t(total) * size_t(steps), 0.01);
  for (size_t i = 0; i < grads.size(); i += 97) grads[i] = 0.0f;  // zero gradients: v may stay 0, denom = eps
  for (size_t i = 5; i < grads.size(); i += 1013) grads[i] *= 300.0f;  // outliers (clipped steps in the model)
  const float gs = 0.8f;  // the clip factor, applied as the gradient is read
  auto lr_of = [&](int s) { return train::lr_at(s, 2, steps, 1e-2, 1e-3); };

  // device state: p (fp32 master), compact m and v (every tensor is trainable and on AdamW: offsets = p's)
  DeviceBuffer dp = h.upload(p), dg = h.upload(grads), dm(size_t(total) * 4), dv(size_t(total) * 4),
               d16(size_t(total) * 2);
  const std::vector<float> zeros(size_t(total), 0.0f);
  dm.upload(zeros.data(), zeros.size() * 4);
  dv.upload(zeros.data(), zeros.size() * 4);
  auto wd_of = [&](const train::TensorSlot& t) { return (t.ndim >= 2 || cfg.decay_1d) ? cfg.weight_decay : 0.0; };
  auto gpu_step = [&](int s) {
    for (const train::TensorSlot& t : slots) {
      const AdamWConstants c = adamw_constants(lr_of(s), s + 1, cfg.beta1, cfg.beta2, cfg.eps, wd_of(t));
      adamw_update(dp.as<float>() + t.offset, dg.as<float>() + int64_t(s) * total + t.offset,
                   dm.as<float>() + t.offset, dv.as<float>() + t.offset, t.numel, gs, c,
                   bf16_copy ? d16.as<uint16_t>() + t.offset : nullptr, h.stream());
    }
  };

  std::vector<AdamWBound> bounds;
  for (const train::TensorSlot& t : slots) bounds.emplace_back(size_t(t.numel));
  for (int s = 0; s < steps; ++s) {
    for (size_t i = 0; i < slots.size(); ++i) {
      const train::TensorSlot& t = slots[i];
      const AdamWConstants c = adamw_constants(lr_of(s), s + 1, cfg.beta1, cfg.beta2, cfg.eps, wd_of(t));
      bounds[i].step(p.data() + t.offset, opt.moment(i, 0).data(), opt.moment(i, 1).data(),
                     grads.data() + size_t(s) * size_t(total) + size_t(t.offset), gs, c.decay, c.beta1, c.beta2,
                     c.step, c.inv_sqrt_bc2, c.eps);
    }
    opt.step(p, std::span<const float>(grads).subspan(size_t(s) * size_t(total), size_t(total)), lr_of(s), gs);
    gpu_step(s);
  }
  // concatenated over the tensors, in slot order (= the flat layout here)
  std::vector<float> m_ref, v_ref;
  std::vector<double> pb, mb, vb;
  for (size_t i = 0; i < slots.size(); ++i) {
    const auto m = opt.moment(i, 0), v = opt.moment(i, 1);
    m_ref.insert(m_ref.end(), m.begin(), m.end());
    v_ref.insert(v_ref.end(), v.begin(), v.end());
    const std::vector<double> b1 = bounds[i].p_bound(), b2 = bounds[i].m_bound(), b3 = bounds[i].v_bound(v.data());
    pb.insert(pb.end(), b1.begin(), b1.end());
    mb.insert(mb.end(), b2.begin(), b2.end());
    vb.insert(vb.end(), b3.begin(), b3.end());
  }
  const std::vector<float> gp = h.download<float>(dp, size_t(total));
  rep.checks.push_back(compare_bound("p", gp, p, pb));
  rep.checks.push_back(compare_bound("m", h.download<float>(dm, size_t(total)), m_ref, mb));
  rep.checks.push_back(compare_bound("v", h.download<float>(dv, size_t(total)), v_ref, vb));
  if (bf16_copy) {
    const std::vector<uint16_t> got16 = h.download<uint16_t>(d16, size_t(total));
    std::vector<uint16_t> own(gp.size());
    for (size_t i = 0; i < gp.size(); ++i) own[i] = nn::float_to_bf16(gp[i]);
    rep.checks.push_back(compare_bits("p bf16 = bf16(device p)", got16, own));
    std::vector<float> f16(got16.size());
    std::vector<double> b16(got16.size());
    for (size_t i = 0; i < got16.size(); ++i) {
      f16[i] = nn::bf16_to_float(got16[i]);
      b16[i] = std::fabs(double(p[i])) / 256 + pb[i];  // round to nearest: half a bf16 ulp, 2^-8 relative
    }
    rep.checks.push_back(compare_bound("p bf16 vs CPU p", f16, p, b16));
  }
  if (h.perf()) {
    rep.ms = h.time_ms([&] { gpu_step(0); });
    rep.bytes = double(total) * (4 * 2 + 4 + 8 + 8 + (bf16_copy ? 2 : 0));
  }
  return rep;
}

OpReport check_newton_schulz(Harness& h, Blas& blas, GemmType type, int64_t rows, int64_t cols) {
  OpReport rep;
  const int steps = 10;
  rep.op = type == GemmType::bf16 ? "newton_schulz_bf16" : "newton_schulz_fp32";
  rep.shape = shape_str(rows, cols, steps);
  Rng rng(700 + uint64_t(rows * 5 + cols));
  const std::vector<float> x = randn(rng, size_t(rows * cols), 0.02);
  const int64_t r = std::min(rows, cols), c = std::max(rows, cols);
  // the oracle itself where its plain double loops take well under a second, else its dgemm twin
  std::vector<float> ref = x;
  const bool small = double(r) * double(r) * double(c) <= double(1 << 24);
  if (small)
    train::newton_schulz_reference(ref, rows, cols, steps);
  else
    ref = newton_schulz_double(x, rows, cols, steps);
  double tol = ns_fp32_tol(rows, cols, max_abs(ref));
  std::string what = small ? "X vs newton_schulz_reference" : "X vs newton_schulz_double";
  if (type == GemmType::bf16) {
    const std::vector<float> sim = newton_schulz_bf16_operands(x, rows, cols, steps);
    double d = 0;
    for (size_t i = 0; i < sim.size(); ++i) d = std::max(d, std::fabs(double(sim[i]) - double(ref[i])));
    tol += 3 * d;
    what += " (bf16 operands)";
  }
  DeviceBuffer dx = h.upload(x);
  newton_schulz(blas, dx.as<float>(), rows, cols, steps, type, h.scratch(), h.stream());
  const std::vector<float> got = h.download<float>(dx, x.size());
  rep.checks.push_back(compare(what, got, ref, tol, 0));
  dx.upload(x.data(), x.size() * 4);
  newton_schulz(blas, dx.as<float>(), rows, cols, steps, type, h.scratch(), h.stream());
  rep.checks.push_back(same_bits("X again", h.download<float>(dx, x.size()), got));
  if (h.perf()) {
    rep.ms = h.time_ms([&] { newton_schulz(blas, dx.as<float>(), rows, cols, steps, type, h.scratch(), h.stream()); });
    rep.flops = double(steps) * (4.0 * double(r) * double(r) * double(c) + 2.0 * double(r) * double(r) * double(r));
    // per step, fp32 words the products and the two copies must move at least: X read twice and A written
    // (A = X X^T), A read twice and B read and written (+ the copy B = A), B and X read and Y read and written
    // (+ the copy Y = X)
    rep.bytes = double(steps) * 4.0 * (7.0 * double(r * c) + 8.0 * double(r * r));
  }
  return rep;
}

OpReport check_muon(Harness& h, Blas& blas, int64_t rows, int64_t cols, int steps) {
  OpReport rep;
  rep.op = "muon";
  rep.shape = shape_str(rows, cols, steps);
  const int64_t n = rows * cols;
  std::vector<train::TensorSlot> slots{{"layers.0.ffn.w1.weight", 0, n, rows, cols, 2, true}};
  train::OptimizerConfig cfg;
  cfg.kind = train::OptimizerKind::Muon;
  train::Optimizer opt(slots, n, cfg);
  if (!opt.is_muon(0)) {  // the slot must take Muon's path, or this compares AdamW
    Compare c;
    c.what = "slot on Muon's path";
    c.n = c.bad = 1;
    rep.checks.push_back(c);
    return rep;
  }
  MuonSettings st;
  st.momentum = cfg.muon_momentum;
  st.weight_decay = cfg.muon_weight_decay;
  st.nesterov = cfg.muon_nesterov;
  st.scale = cfg.muon_scale;
  st.ns_steps = cfg.muon_ns_steps;

  Rng rng(900 + uint64_t(rows * 7 + cols + steps));
  std::vector<float> p = randn(rng, size_t(n), 0.05);
  const std::vector<float> grads = randn(rng, size_t(n) * size_t(steps), 0.01);
  const float gs = 0.9f;
  auto lr_of = [&](int s) { return train::lr_at(s, 1, steps, 2e-2, 2e-3); };
  DeviceBuffer dp = h.upload(p), dg = h.upload(grads), dm(size_t(n) * 4);
  const std::vector<float> zeros(size_t(n), 0.0f);
  dm.upload(zeros.data(), zeros.size() * 4);
  auto gpu_step = [&](int s) {
    muon_update(blas, dp.as<float>(), dg.as<float>() + int64_t(s) * n, dm.as<float>(), rows, cols, lr_of(s), gs, st,
                GemmType::fp32, nullptr, h.scratch(), h.stream());
  };

  std::vector<double> ep(size_t(n), 0.0), em(size_t(n), 0.0);
  const float mu = float(cfg.muon_momentum);
  for (int s = 0; s < steps; ++s) {
    const std::vector<float> before = p;
    const std::vector<float> m0(opt.moment(0, 0).begin(), opt.moment(0, 0).end());
    const float* g = grads.data() + size_t(s) * size_t(n);
    opt.step(p, std::span<const float>(grads).subspan(size_t(s) * size_t(n), size_t(n)), lr_of(s), gs);
    gpu_step(s);
    const float flr = float(lr_of(s)), scale = float(std::sqrt(double(std::max(rows, cols))) * cfg.muon_scale);
    const float decay = float(1.0 - lr_of(s) * cfg.muon_weight_decay);
    // the CPU's orthogonalised X, recovered from its update, for the size of its entries
    double max_x = 0;
    for (int64_t i = 0; i < n; ++i)
      max_x = std::max(max_x, std::fabs((double(before[size_t(i)]) * decay - double(p[size_t(i)])) /
                                        (double(flr) * double(scale))));
    const double ex = 2 * ns_fp32_tol(rows, cols, max_x);
    for (int64_t i = 0; i < n; ++i) {
      const size_t k = size_t(i);
      em[k] = double(mu) * em[k] + 4 * kU * (std::fabs(double(mu) * m0[k]) + std::fabs(double(g[k] * gs)));
      const double pd = std::fabs(double(before[k]) * decay);
      ep[k] = double(decay) * ep[k] + 2 * kU * pd + double(flr) * double(scale) * ex + 2 * kU * std::fabs(p[k]);
    }
  }
  std::vector<double> pb(static_cast<size_t>(n)), mb(static_cast<size_t>(n));
  for (size_t i = 0; i < pb.size(); ++i) {
    pb[i] = 2 * ep[i];
    mb[i] = 2 * em[i];
  }
  const auto m_ref = opt.moment(0, 0);
  rep.checks.push_back(compare_bound("p", h.download<float>(dp, size_t(n)), p, pb));
  rep.checks.push_back(
      compare_bound("momentum", h.download<float>(dm, size_t(n)), std::vector<float>(m_ref.begin(), m_ref.end()), mb));
  if (h.perf()) {
    rep.ms = h.time_ms([&] { gpu_step(0); });
    const int64_t r = std::min(rows, cols), c = std::max(rows, cols);
    rep.flops =
        double(st.ns_steps) * (4.0 * double(r) * double(r) * double(c) + 2.0 * double(r) * double(r) * double(r));
    rep.bytes = double(st.ns_steps) * 4.0 * (7.0 * double(r * c) + 8.0 * double(r * r)) + 4.0 * 7.0 * double(n);
  }
  return rep;
}

}  // namespace trex::cuda::check
