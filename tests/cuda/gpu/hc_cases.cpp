// The mHC op checks (hc_cases.hpp): cuda::hc_* against nn::hc_*_ref.
//
// Bounds (u = 2⁻²⁴; each derived as a worst-case first-order error e of the device's fp32 recipe, hc.cu, against
// the exact value at the same fp32 inputs, then doubled). Every stage is checked on the device's own outputs of the
// stage before it (the forward on the device's rho, the backward on its mix and pre), so only the stage's own
// arithmetic is bounded, plus what it propagates of its in-stage inputs (y of pre, draw / coef / dX of dz):
//   rho       Σ X² over nd non-negative terms in any order: (nd + 1) u relative; /nd, +eps, sqrt, the division
//             2 u each: e = ((nd + 3) / 2 + 3) u rho
//   z         sc mix + base (two roundings or an FMA): Ez = 3 u (|sc mix| + |base|)
//   sigmoid   s(1 - s) (Ez + 4 u) + 2 u s  (expf within 2 ulp = 4 u relative enters as s(1 - s) 4 u; 1 + e and the
//             division 2 u s); pre adds heps (u |pre|), post doubles (exact); A = z: Ez
//   y, h      Σ_k pre_k X_k over n terms: Σ_k |X_k| e_pre_k + (n + 1) u Σ_k |pre_k X_k|
//   dz pre    dpre = Σ_i gy X_k over d: Ed = (d + 1) u Σ|gy X_k|; f = s(1 - s) from s = pre - heps: 3 u s;
//             dz = dpre f (two roundings): f Ed + |dpre| 3 u s + 2 u |dz|
//   dz post   2 |dpost| (e_sigmoid + 3 u s) + 3 u |dz|; the comb's columns are the copied dA: exact
//   draw      dz sc rho: |sc rho| e_dz + 3 u |draw| (two roundings and the reference's own)
//   coef      rho³ / nd (Σ_k |sc raw| e_dz + (nout + 2) u Σ_k |dz sc raw|) + 4 u |coef|
//   dX        dX0 + pre gy (kernel 1) + coef X (the last kernel): |X| e_coef + 3 u (|dX0| + |pre gy| + |coef X|)
//   gbase/gsc the token sums by chunks: nn::hc_gate_param_sums's bound against the exact sums of the device's own
//             dz (the order's depth m + G + C, nn/hc.hpp; tests/nn/hc_test.cpp replays it), and against the
//             reference that plus the propagated Σ_t 2 e_dz (gsc: Σ_t Σ_k |mix| 2 e_dz)
//   hc_post   Xout = post F + Σ_j M_jk X_j: (n + 2) u (|post F| + Σ_j |M X|); dF over n: (n + 1) u Σ|post g|;
//             dpost, dM over d: (d + 1) u Σ|g F|, Σ|g X|; dX = dX0 + Σ_k M g: (n + 1) u (|dX0| + Σ|M g|)
#include "hc_cases.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "cuda/check.hpp"
#include "cuda/hc.hpp"
#include "nn/gemm_bf16.hpp"
#include "nn/hc.hpp"

namespace trex::cuda::check {

namespace {
constexpr double kU = 1.0 / 16777216.0;  // 2^-24, fp32 unit roundoff
constexpr double kTiny = 1e-30;          // a bound's floor (an exact 0 against an exact 0 passes)
constexpr float kEps = 1e-6f, kHeps = 1e-6f;  // rms_norm_eps and hc_eps of the presets

struct Inputs {
  int64_t N = 0, d = 0;
  int n = 0, nout = 0;
  std::vector<float> X, raw, base, scale, dy, dpost, dA, dX0, F, post, M, dXout;
};

// raw of spread 1.5 (the gates neither saturated nor linear), base 0.5, scales in [0.5, 1.5]; post in (0.1, 1.9), M
// in [0, 0.5] (a Sinkhorn output's range); dX0 what earlier terms left in dX.
Inputs make_inputs(uint64_t seed, int64_t N, int n, int64_t d, bool head) {
  Rng r(seed);
  Inputs in;
  in.N = N, in.n = n, in.d = d, in.nout = head ? n : (2 + n) * n;
  in.X = randn(r, size_t(N * n * d));
  in.raw = randn(r, size_t(N * in.nout), 1.5);
  in.base = randn(r, size_t(in.nout), 0.5);
  in.scale = uniform(r, head ? 1 : 3, 0.5, 1.5);
  in.dy = randn(r, size_t(N * d));
  in.dpost = randn(r, size_t(N * n));
  in.dA = randn(r, size_t(N * n * n));
  in.dX0 = randn(r, size_t(N * n * d), 0.5);
  in.F = randn(r, size_t(N * d));
  in.post = uniform(r, size_t(N * n), 0.1, 1.9);
  in.M = uniform(r, size_t(N * n * n), 0.0, 0.5);
  in.dXout = randn(r, size_t(N * n * d));
  return in;
}

std::string dims(int64_t N, int n, int64_t d) {
  return "N=" + std::to_string(N) + " n=" + std::to_string(n) + " d=" + std::to_string(d);
}

void nan_fill(Harness& h, const DeviceBuffer& b) {  // every element a kernel must write starts as NaN
  TREX_CUDA_CHECK(cudaMemsetAsync(b.as<void>(), 0xff, b.bytes(), h.stream()));
}

DeviceBuffer floats(int64_t n) { return DeviceBuffer(size_t(std::max<int64_t>(1, n)) * sizeof(float)); }

double sigmoid_error(double s, double Ez) { return s * (1 - s) * (Ez + 4 * kU) + 2 * kU * s; }

// The gate-parameter sums: against the exact sums of the device's own dz (the order alone) and against the
// reference (plus the propagated dz error, prop_base / prop_sc, already doubled).
void check_token_sums(OpReport& rep, const Inputs& in, const std::vector<float>& dz, const std::vector<float>& mix,
                      const std::vector<float>& g0, const std::vector<float>& s0, const std::vector<float>& gbase,
                      const std::vector<float>& gsc, const std::vector<float>& rgbase, const std::vector<float>& rgsc,
                      const std::vector<double>& prop_base, const std::vector<double>& prop_sc) {
  const nn::HcGateSums ex = nn::hc_gate_param_sums(dz.data(), mix.data(), in.N, in.n, in.nout, g0.data(), s0.data());
  std::vector<float> eb(ex.base.begin(), ex.base.end()), es(ex.sc.begin(), ex.sc.end());
  rep.checks.push_back(compare_bound("gbase (exact sums of the device's dz)", gbase, eb, ex.base_bound));
  rep.checks.push_back(compare_bound("gsc (exact sums of the device's dz)", gsc, es, ex.sc_bound));
  std::vector<double> bb(ex.base_bound), bs(ex.sc_bound);
  for (size_t k = 0; k < bb.size(); ++k) bb[k] += prop_base[k] + 2 * kU * std::fabs(double(rgbase[k]));
  for (size_t j = 0; j < bs.size(); ++j) bs[j] += prop_sc[j] + 2 * kU * std::fabs(double(rgsc[j]));
  rep.checks.push_back(compare_bound("gbase (reference)", gbase, rgbase, bb));
  rep.checks.push_back(compare_bound("gsc (reference)", gsc, rgsc, bs));
}

// draw, coef, dX of the gate backward and their propagated bounds, from dz's error e_dz [N, nout] (not doubled).
void gate_tail_bounds(const Inputs& in, const std::vector<float>& rho, const std::vector<float>& pre,
                      const std::vector<float>& rdz, const std::vector<float>& rcoef, const std::vector<double>& e_dz,
                      std::vector<double>& bdraw, std::vector<double>& bcoef, std::vector<double>& bdX) {
  const int64_t N = in.N, d = in.d, nd = int64_t(in.n) * d;
  const int n = in.n, nout = in.nout;
  bdraw.assign(size_t(N * nout), 0.0), bcoef.assign(size_t(N), 0.0), bdX.assign(size_t(N * nd), 0.0);
  for (int64_t t = 0; t < N; ++t) {
    const double r = rho[size_t(t)];
    double prop = 0, mag = 0;
    for (int k = 0; k < nout; ++k) {
      const size_t i = size_t(t * nout + k);
      const double sc = std::fabs(double(in.scale[size_t(nn::hc_gate_group(k, n))]));
      bdraw[i] = 2 * (sc * r * e_dz[i] + 3 * kU * std::fabs(double(rdz[i])) * sc * r) + kTiny;
      prop += sc * std::fabs(double(in.raw[i])) * e_dz[i];
      mag += std::fabs(double(rdz[i])) * sc * std::fabs(double(in.raw[i]));
    }
    const double e_coef =
        r * r * r / double(nd) * (prop + double(nout + 2) * kU * mag) + 4 * kU * std::fabs(double(rcoef[size_t(t)]));
    bcoef[size_t(t)] = 2 * e_coef + kTiny;
    for (int k = 0; k < n; ++k)
      for (int64_t i = 0; i < d; ++i) {
        const size_t x = size_t((t * n + k) * d + i);
        const double X = std::fabs(double(in.X[x]));
        const double pg = std::fabs(double(pre[size_t(t * n + k)]) * double(in.dy[size_t(t * d + i)]));
        bdX[x] = 2 * (X * e_coef + 3 * kU * (std::fabs(double(in.dX0[x])) + pg + std::fabs(double(rcoef[size_t(t)])) * X)) +
                 kTiny;
      }
  }
}
}  // namespace

OpReport check_hc_pre(Harness& h, int64_t N, int n, int64_t d, bool bf16_copy) {
  OpReport rep;
  rep.op = "hc_pre";
  rep.shape = dims(N, n, d) + (bf16_copy ? " bf16-copy" : "");
  const Inputs in = make_inputs(900 + uint64_t(N * 3 + n * 5 + d * 7) + (bf16_copy ? 1 : 0), N, n, d, false);
  const int64_t nd = int64_t(n) * d;
  const int nout = in.nout;
  const std::vector<float> g0(size_t(nout), 0.25f), s0(3, -0.5f);  // the gradients' values before the call

  DeviceBuffer gX = h.upload(in.X), graw = h.upload(in.raw), gbase_p = h.upload(in.base), gscale = h.upload(in.scale);
  DeviceBuffer gdy = h.upload(in.dy), gdpost = h.upload(in.dpost), gdA = h.upload(in.dA);
  DeviceBuffer grho = floats(N), gX16(size_t(std::max<int64_t>(1, N * nd)) * 2), gmix = floats(N * nout),
               gpre = floats(N * n), gpost = floats(N * n), gA = floats(N * n * n), gy = floats(N * d),
               gdz = floats(N * nout), gdraw = floats(N * nout), gcoef = floats(N), gdX = floats(N * nd),
               ggbase = floats(nout), ggsc = floats(3);
  auto kernels = [&] {
    cudaStream_t s = h.stream();
    hc_mix_rho(gX.as<float>(), N, nd, kEps, grho.as<float>(), bf16_copy ? gX16.as<uint16_t>() : nullptr, s);
    hc_pre_forward(gX.as<float>(), graw.as<float>(), grho.as<float>(), N, n, d, gbase_p.as<float>(), gscale.as<float>(),
                   kHeps, gmix.as<float>(), gpre.as<float>(), gpost.as<float>(), gA.as<float>(), gy.as<float>(), s);
    hc_pre_backward_gates(gX.as<float>(), gmix.as<float>(), gpre.as<float>(), gdy.as<float>(), gdpost.as<float>(), N, n,
                          d, gbase_p.as<float>(), gscale.as<float>(), kHeps, gdz.as<float>(), gdX.as<float>(), s);
    // the Sinkhorn backward's part: dA into dz's comb columns (rows of nout floats, columns [2n, nout))
    TREX_CUDA_CHECK(cudaMemcpy2DAsync(gdz.as<float>() + 2 * n, size_t(nout) * 4, gdA.as<float>(), size_t(n * n) * 4,
                                      size_t(n * n) * 4, size_t(N), cudaMemcpyDeviceToDevice, s));
    hc_gate_backward(gdz.as<float>(), gmix.as<float>(), graw.as<float>(), grho.as<float>(), N, n, nout, nd,
                     gscale.as<float>(), gdraw.as<float>(), gcoef.as<float>(), ggbase.as<float>(), ggsc.as<float>(),
                     h.scratch(), s);
    hc_mix_backward_add(gcoef.as<float>(), gX.as<float>(), N, nd, gdX.as<float>(), s);
  };
  auto run = [&] {  // one fresh run: outputs NaN, the accumulated ones at their starting values
    h.stream().synchronize();
    gdX.upload(in.dX0.data(), in.dX0.size() * 4);
    ggbase.upload(g0.data(), g0.size() * 4);
    ggsc.upload(s0.data(), s0.size() * 4);
    for (const DeviceBuffer* b : {&grho, &gX16, &gmix, &gpre, &gpost, &gA, &gy, &gdz, &gdraw, &gcoef}) nan_fill(h, *b);
    kernels();
  };
  run();
  const std::vector<float> rho = h.download<float>(grho, size_t(N)), mix = h.download<float>(gmix, size_t(N * nout)),
                           pre = h.download<float>(gpre, size_t(N * n)), post = h.download<float>(gpost, size_t(N * n)),
                           A = h.download<float>(gA, size_t(N * n * n)), y = h.download<float>(gy, size_t(N * d)),
                           dz = h.download<float>(gdz, size_t(N * nout)), draw = h.download<float>(gdraw, size_t(N * nout)),
                           coef = h.download<float>(gcoef, size_t(N)), dX = h.download<float>(gdX, size_t(N * nd)),
                           gbase = h.download<float>(ggbase, size_t(nout)), gsc = h.download<float>(ggsc, 3);
  const std::vector<uint16_t> X16 = bf16_copy ? h.download<uint16_t>(gX16, size_t(N * nd)) : std::vector<uint16_t>();

  // rho against the reference; the bf16 copy bitwise nn::round_to_bf16's; rho the same bits without the copy and
  // from a copy of X 4 bytes off a 16-byte boundary (the kernel's scalar loads, the same summation order)
  std::vector<float> rrho(static_cast<size_t>(N));
  nn::hc_mix_rho_ref(in.X.data(), N, nd, double(kEps), rrho.data());
  std::vector<double> brho(static_cast<size_t>(N));
  for (int64_t t = 0; t < N; ++t)
    brho[size_t(t)] = 2 * ((double(nd) + 3) / 2 + 3) * kU * std::fabs(double(rrho[size_t(t)])) + kTiny;
  rep.checks.push_back(compare_bound("rho", rho, rrho, brho));
  if (bf16_copy) {
    std::vector<uint16_t> want(static_cast<size_t>(N * nd));
    nn::round_to_bf16(in.X.data(), want.data(), N * nd);
    rep.checks.push_back(compare_bits("X16 = nn::round_to_bf16(X)", X16, want));
  }
  {
    DeviceBuffer gXoff(size_t(N * nd + 1) * 4), grho2 = floats(N);
    gXoff.upload(in.X.data(), in.X.size() * 4, 4);
    nan_fill(h, grho2);
    hc_mix_rho(gX.as<float>(), N, nd, kEps, grho2.as<float>(), nullptr, h.stream());
    rep.checks.push_back(compare_bitwise("rho without the bf16 copy", rho, h.download<float>(grho2, size_t(N))));
    nan_fill(h, grho2);
    hc_mix_rho(gXoff.as<float>() + 1, N, nd, kEps, grho2.as<float>(), nullptr, h.stream());
    rep.checks.push_back(compare_bitwise("rho from misaligned X", rho, h.download<float>(grho2, size_t(N))));
  }

  // forward on the device's rho
  std::vector<float> rmix(mix.size()), rpre(pre.size()), rpost(post.size()), rA(A.size()), ry(y.size());
  nn::hc_pre_forward_ref(in.X.data(), in.raw.data(), rho.data(), N, n, d, in.base.data(), in.scale.data(),
                         double(kHeps), rmix.data(), rpre.data(), rpost.data(), rA.data(), ry.data());
  std::vector<double> bmix(mix.size()), bpre(pre.size()), bpost(post.size()), bA(A.size()), by(y.size()),
      epre(static_cast<size_t>(n));
  for (int64_t t = 0; t < N; ++t) {
    for (int k = 0; k < nout; ++k) {
      const size_t i = size_t(t * nout + k);
      const int g = nn::hc_gate_group(k, n);
      const double m = rmix[i], Ez = 3 * kU * (std::fabs(double(in.scale[size_t(g)]) * m) + std::fabs(double(in.base[size_t(k)])));
      bmix[i] = 2 * kU * std::fabs(m) + kTiny;
      if (g == 0) {
        const size_t p = size_t(t * n + k);
        epre[size_t(k)] = sigmoid_error(double(rpre[p]) - double(kHeps), Ez) + kU * std::fabs(double(rpre[p]));
        bpre[p] = 2 * epre[size_t(k)] + kTiny;
      } else if (g == 1) {
        const size_t p = size_t(t * n + k - n);
        bpost[p] = 2 * (2 * sigmoid_error(double(rpost[p]) / 2, Ez) + kU * std::fabs(double(rpost[p]))) + kTiny;
      } else {
        const size_t p = size_t(t * n * n + k - 2 * n);
        bA[p] = 2 * (Ez + kU * std::fabs(double(rA[p]))) + kTiny;
      }
    }
    for (int64_t i = 0; i < d; ++i) {
      double e = 0, mag = 0;
      for (int k = 0; k < n; ++k) {
        const double X = std::fabs(double(in.X[size_t((t * n + k) * d + i)]));
        e += X * epre[size_t(k)];
        mag += std::fabs(double(rpre[size_t(t * n + k)])) * X;
      }
      by[size_t(t * d + i)] = 2 * (e + double(n + 1) * kU * mag) + kTiny;
    }
  }
  rep.checks.push_back(compare_bound("mix", mix, rmix, bmix));
  rep.checks.push_back(compare_bound("pre", pre, rpre, bpre));
  rep.checks.push_back(compare_bound("post", post, rpost, bpost));
  rep.checks.push_back(compare_bound("A", A, rA, bA));
  rep.checks.push_back(compare_bound("y", y, ry, by));

  // backward on the device's mix and pre
  std::vector<float> rdz(dz.size()), rdraw(draw.size()), rcoef(coef.size()), rdX = in.dX0, rgbase = g0, rgsc = s0;
  nn::hc_pre_backward_ref(in.X.data(), in.raw.data(), rho.data(), mix.data(), pre.data(), in.dy.data(),
                          in.dpost.data(), in.dA.data(), N, n, d, in.base.data(), in.scale.data(), double(kHeps),
                          rdz.data(), rdraw.data(), rcoef.data(), rdX.data(), rgbase.data(), rgsc.data());
  std::vector<double> e_dz(dz.size(), 0.0), bdz(dz.size()), prop_base(static_cast<size_t>(nout), 0.0), prop_sc(3, 0.0);
  for (int64_t t = 0; t < N; ++t)
    for (int k = 0; k < n; ++k) {
      double S = 0, D = 0;
      for (int64_t i = 0; i < d; ++i) {
        const double v = double(in.dy[size_t(t * d + i)]) * double(in.X[size_t((t * n + k) * d + i)]);
        S += std::fabs(v), D += v;
      }
      const double s = double(pre[size_t(t * n + k)]) - double(kHeps), f = s * (1 - s);
      e_dz[size_t(t * nout + k)] = f * double(d + 1) * kU * S + std::fabs(D) * 3 * kU * s + 2 * kU * std::fabs(D * f);
      const size_t ip = size_t(t * nout + n + k);
      const double z = double(in.scale[1]) * double(mix[ip]) + double(in.base[size_t(n + k)]);
      const double so = 1 / (1 + std::exp(-z));
      const double Ez = 3 * kU * (std::fabs(double(in.scale[1]) * double(mix[ip])) + std::fabs(double(in.base[size_t(n + k)])));
      const double dp = std::fabs(double(in.dpost[size_t(t * n + k)]));
      e_dz[ip] = 2 * dp * (sigmoid_error(so, Ez) + 3 * kU * so) + 3 * kU * 2 * dp * so * (1 - so);
    }
  for (int64_t t = 0; t < N; ++t)
    for (int k = 0; k < nout; ++k) {
      const size_t i = size_t(t * nout + k);
      bdz[i] = 2 * e_dz[i] + kTiny;
      prop_base[size_t(k)] += 2 * e_dz[i];
      prop_sc[size_t(nn::hc_gate_group(k, n))] += 2 * e_dz[i] * std::fabs(double(mix[i]));
    }
  rep.checks.push_back(compare_bound("dz (pre, post; the comb's columns the copied dA)", dz, rdz, bdz));
  std::vector<double> bdraw, bcoef, bdX;
  gate_tail_bounds(in, rho, pre, rdz, rcoef, e_dz, bdraw, bcoef, bdX);
  rep.checks.push_back(compare_bound("draw", draw, rdraw, bdraw));
  rep.checks.push_back(compare_bound("coef", coef, rcoef, bcoef));
  rep.checks.push_back(compare_bound("dX (+= pre gy + coef X)", dX, rdX, bdX));
  check_token_sums(rep, in, dz, mix, g0, s0, gbase, gsc, rgbase, rgsc, prop_base, prop_sc);

  // a second run: the same bits everywhere (no atomics; fixed orders)
  run();
  rep.checks.push_back(compare_bitwise("rho", rho, h.download<float>(grho, rho.size())));
  if (bf16_copy) rep.checks.push_back(compare_bits("X16 again", h.download<uint16_t>(gX16, X16.size()), X16));
  rep.checks.push_back(compare_bitwise("mix", mix, h.download<float>(gmix, mix.size())));
  rep.checks.push_back(compare_bitwise("pre", pre, h.download<float>(gpre, pre.size())));
  rep.checks.push_back(compare_bitwise("post", post, h.download<float>(gpost, post.size())));
  rep.checks.push_back(compare_bitwise("A", A, h.download<float>(gA, A.size())));
  rep.checks.push_back(compare_bitwise("y", y, h.download<float>(gy, y.size())));
  rep.checks.push_back(compare_bitwise("dz", dz, h.download<float>(gdz, dz.size())));
  rep.checks.push_back(compare_bitwise("draw", draw, h.download<float>(gdraw, draw.size())));
  rep.checks.push_back(compare_bitwise("coef", coef, h.download<float>(gcoef, coef.size())));
  rep.checks.push_back(compare_bitwise("dX", dX, h.download<float>(gdX, dX.size())));
  rep.checks.push_back(compare_bitwise("gbase", gbase, h.download<float>(ggbase, gbase.size())));
  rep.checks.push_back(compare_bitwise("gsc", gsc, h.download<float>(ggsc, gsc.size())));
  if (h.perf()) {
    rep.ms = h.time_ms(kernels);  // every non-GEMM kernel of hc_pre's forward and backward (dX keeps accumulating)
    // at least: X read by rho, the gates, the backward's gates and the add; dX read and written twice; y, dy
    rep.bytes = 4.0 * double(N * nd) * 8 + (bf16_copy ? 2.0 * double(N * nd) : 0.0) + 8.0 * double(N * d);
  }
  return rep;
}

OpReport check_hc_head(Harness& h, int64_t N, int n, int64_t d) {
  OpReport rep;
  rep.op = "hc_head";
  rep.shape = dims(N, n, d);
  const Inputs in = make_inputs(1300 + uint64_t(N * 3 + n * 5 + d * 7), N, n, d, true);
  const int64_t nd = int64_t(n) * d;  // hc_head's nout is n
  const std::vector<float> g0(static_cast<size_t>(n), 0.25f), s0(1, -0.5f);

  DeviceBuffer gX = h.upload(in.X), graw = h.upload(in.raw), gbase_p = h.upload(in.base), gscale = h.upload(in.scale);
  DeviceBuffer gdh = h.upload(in.dy);
  DeviceBuffer grho = floats(N), gmix = floats(N * n), gpre = floats(N * n), gh = floats(N * d), gdz = floats(N * n),
               gdraw = floats(N * n), gcoef = floats(N), gdX = floats(N * nd), ggbase = floats(n), ggsc = floats(1);
  auto kernels = [&] {
    cudaStream_t s = h.stream();
    hc_mix_rho(gX.as<float>(), N, nd, kEps, grho.as<float>(), nullptr, s);
    hc_head_forward(gX.as<float>(), graw.as<float>(), grho.as<float>(), N, n, d, gbase_p.as<float>(),
                    gscale.as<float>(), kHeps, gmix.as<float>(), gpre.as<float>(), gh.as<float>(), s);
    hc_head_backward_gates(gX.as<float>(), gpre.as<float>(), gdh.as<float>(), N, n, d, kHeps, gdz.as<float>(),
                           gdX.as<float>(), s);
    hc_gate_backward(gdz.as<float>(), gmix.as<float>(), graw.as<float>(), grho.as<float>(), N, n, n, nd,
                     gscale.as<float>(), gdraw.as<float>(), gcoef.as<float>(), ggbase.as<float>(), ggsc.as<float>(),
                     h.scratch(), s);
    hc_mix_backward_add(gcoef.as<float>(), gX.as<float>(), N, nd, gdX.as<float>(), s);
  };
  auto run = [&] {
    h.stream().synchronize();
    gdX.upload(in.dX0.data(), in.dX0.size() * 4);
    ggbase.upload(g0.data(), g0.size() * 4);
    ggsc.upload(s0.data(), s0.size() * 4);
    for (const DeviceBuffer* b : {&grho, &gmix, &gpre, &gh, &gdz, &gdraw, &gcoef}) nan_fill(h, *b);
    kernels();
  };
  run();
  const std::vector<float> rho = h.download<float>(grho, size_t(N)), mix = h.download<float>(gmix, size_t(N * n)),
                           pre = h.download<float>(gpre, size_t(N * n)), hh = h.download<float>(gh, size_t(N * d)),
                           dz = h.download<float>(gdz, size_t(N * n)), draw = h.download<float>(gdraw, size_t(N * n)),
                           coef = h.download<float>(gcoef, size_t(N)), dX = h.download<float>(gdX, size_t(N * nd)),
                           gbase = h.download<float>(ggbase, size_t(n)), gsc = h.download<float>(ggsc, 1);
  std::vector<float> rrho(static_cast<size_t>(N));
  nn::hc_mix_rho_ref(in.X.data(), N, nd, double(kEps), rrho.data());
  std::vector<double> brho(static_cast<size_t>(N));
  for (int64_t t = 0; t < N; ++t)
    brho[size_t(t)] = 2 * ((double(nd) + 3) / 2 + 3) * kU * std::fabs(double(rrho[size_t(t)])) + kTiny;  // as hc_pre
  rep.checks.push_back(compare_bound("rho", rho, rrho, brho));

  // forward on the device's rho: the bounds of hc_pre's pre and y
  std::vector<float> rmix(mix.size()), rpre(pre.size()), rh(hh.size());
  nn::hc_head_forward_ref(in.X.data(), in.raw.data(), rho.data(), N, n, d, in.base.data(), in.scale.data(),
                          double(kHeps), rmix.data(), rpre.data(), rh.data());
  std::vector<double> bmix(mix.size()), bpre(pre.size()), bh(hh.size()), epre(static_cast<size_t>(n));
  for (int64_t t = 0; t < N; ++t) {
    for (int k = 0; k < n; ++k) {
      const size_t i = size_t(t * n + k);
      const double m = rmix[i], Ez = 3 * kU * (std::fabs(double(in.scale[0]) * m) + std::fabs(double(in.base[size_t(k)])));
      bmix[i] = 2 * kU * std::fabs(m) + kTiny;
      epre[size_t(k)] = sigmoid_error(double(rpre[i]) - double(kHeps), Ez) + kU * std::fabs(double(rpre[i]));
      bpre[i] = 2 * epre[size_t(k)] + kTiny;
    }
    for (int64_t i = 0; i < d; ++i) {
      double e = 0, mag = 0;
      for (int k = 0; k < n; ++k) {
        const double X = std::fabs(double(in.X[size_t((t * n + k) * d + i)]));
        e += X * epre[size_t(k)];
        mag += std::fabs(double(rpre[size_t(t * n + k)])) * X;
      }
      bh[size_t(t * d + i)] = 2 * (e + double(n + 1) * kU * mag) + kTiny;
    }
  }
  rep.checks.push_back(compare_bound("mix", mix, rmix, bmix));
  rep.checks.push_back(compare_bound("pre", pre, rpre, bpre));
  rep.checks.push_back(compare_bound("h", hh, rh, bh));

  // backward on the device's mix and pre: hc_pre's dz (pre part), draw, coef, dX, token-sum bounds
  std::vector<float> rdz(dz.size()), rdraw(draw.size()), rcoef(coef.size()), rdX = in.dX0, rgbase = g0, rgsc = s0;
  nn::hc_head_backward_ref(in.X.data(), in.raw.data(), rho.data(), mix.data(), pre.data(), in.dy.data(), N, n, d,
                           in.scale.data(), double(kHeps), rdz.data(), rdraw.data(), rcoef.data(), rdX.data(),
                           rgbase.data(), rgsc.data());
  std::vector<double> e_dz(dz.size(), 0.0), bdz(dz.size()), prop_base(static_cast<size_t>(n), 0.0), prop_sc(1, 0.0);
  for (int64_t t = 0; t < N; ++t)
    for (int k = 0; k < n; ++k) {
      double S = 0, D = 0;
      for (int64_t i = 0; i < d; ++i) {
        const double v = double(in.dy[size_t(t * d + i)]) * double(in.X[size_t((t * n + k) * d + i)]);
        S += std::fabs(v), D += v;
      }
      const size_t i = size_t(t * n + k);
      const double s = double(pre[i]) - double(kHeps), f = s * (1 - s);
      e_dz[i] = f * double(d + 1) * kU * S + std::fabs(D) * 3 * kU * s + 2 * kU * std::fabs(D * f);
      bdz[i] = 2 * e_dz[i] + kTiny;
      prop_base[size_t(k)] += 2 * e_dz[i];
      prop_sc[0] += 2 * e_dz[i] * std::fabs(double(mix[i]));
    }
  rep.checks.push_back(compare_bound("dz", dz, rdz, bdz));
  std::vector<double> bdraw, bcoef, bdX;
  gate_tail_bounds(in, rho, pre, rdz, rcoef, e_dz, bdraw, bcoef, bdX);
  rep.checks.push_back(compare_bound("draw", draw, rdraw, bdraw));
  rep.checks.push_back(compare_bound("coef", coef, rcoef, bcoef));
  rep.checks.push_back(compare_bound("dX (+= pre dh + coef X)", dX, rdX, bdX));
  check_token_sums(rep, in, dz, mix, g0, s0, gbase, gsc, rgbase, rgsc, prop_base, prop_sc);

  run();
  rep.checks.push_back(compare_bitwise("rho", rho, h.download<float>(grho, rho.size())));
  rep.checks.push_back(compare_bitwise("mix", mix, h.download<float>(gmix, mix.size())));
  rep.checks.push_back(compare_bitwise("pre", pre, h.download<float>(gpre, pre.size())));
  rep.checks.push_back(compare_bitwise("h", hh, h.download<float>(gh, hh.size())));
  rep.checks.push_back(compare_bitwise("dz", dz, h.download<float>(gdz, dz.size())));
  rep.checks.push_back(compare_bitwise("draw", draw, h.download<float>(gdraw, draw.size())));
  rep.checks.push_back(compare_bitwise("coef", coef, h.download<float>(gcoef, coef.size())));
  rep.checks.push_back(compare_bitwise("dX", dX, h.download<float>(gdX, dX.size())));
  rep.checks.push_back(compare_bitwise("gbase", gbase, h.download<float>(ggbase, gbase.size())));
  rep.checks.push_back(compare_bitwise("gsc", gsc, h.download<float>(ggsc, gsc.size())));
  if (h.perf()) {
    rep.ms = h.time_ms(kernels);
    // X read by rho, the head, the backward's gates and the add; dX read and written twice; h, dh
    rep.bytes = 4.0 * double(N * nd) * 8 + 8.0 * double(N * d);
  }
  return rep;
}

OpReport check_hc_post(Harness& h, int64_t N, int n, int64_t d) {
  OpReport rep;
  rep.op = "hc_post";
  rep.shape = dims(N, n, d);
  const Inputs in = make_inputs(1700 + uint64_t(N * 3 + n * 5 + d * 7), N, n, d, false);
  const int64_t nd = int64_t(n) * d;
  DeviceBuffer gF = h.upload(in.F), gX = h.upload(in.X), gpost = h.upload(in.post), gM = h.upload(in.M),
               gdXout = h.upload(in.dXout);
  DeviceBuffer gXout = floats(N * nd), gdF = floats(N * d), gdpost = floats(N * n), gdM = floats(N * n * n),
               gdX = floats(N * nd);
  auto kernels = [&] {
    hc_post_forward(gF.as<float>(), gX.as<float>(), gpost.as<float>(), gM.as<float>(), N, n, d, gXout.as<float>(),
                    h.stream());
    hc_post_backward(gF.as<float>(), gX.as<float>(), gpost.as<float>(), gM.as<float>(), gdXout.as<float>(), N, n, d,
                     gdF.as<float>(), gdpost.as<float>(), gdM.as<float>(), gdX.as<float>(), h.stream());
  };
  auto run = [&] {
    h.stream().synchronize();
    gdX.upload(in.dX0.data(), in.dX0.size() * 4);
    for (const DeviceBuffer* b : {&gXout, &gdF, &gdpost, &gdM}) nan_fill(h, *b);
    kernels();
  };
  run();
  const std::vector<float> Xout = h.download<float>(gXout, size_t(N * nd)), dF = h.download<float>(gdF, size_t(N * d)),
                           dpost = h.download<float>(gdpost, size_t(N * n)),
                           dM = h.download<float>(gdM, size_t(N * n * n)), dX = h.download<float>(gdX, size_t(N * nd));
  std::vector<float> rXout(Xout.size()), rdF(dF.size()), rdpost(dpost.size()), rdM(dM.size()), rdX = in.dX0;
  nn::hc_post_forward_ref(in.F.data(), in.X.data(), in.post.data(), in.M.data(), N, n, d, rXout.data());
  nn::hc_post_backward_ref(in.F.data(), in.X.data(), in.post.data(), in.M.data(), in.dXout.data(), N, n, d,
                           rdF.data(), rdpost.data(), rdM.data(), rdX.data());
  std::vector<double> bXout(Xout.size()), bdF(dF.size()), bdpost(dpost.size()), bdM(dM.size()), bdX(dX.size());
  for (int64_t t = 0; t < N; ++t) {
    const float* x = in.X.data() + t * nd;
    const float* g = in.dXout.data() + t * nd;
    const float* f = in.F.data() + t * d;
    const float* M = in.M.data() + t * n * n;
    const float* p = in.post.data() + t * n;
    for (int64_t i = 0; i < d; ++i) {
      double mf = 0;
      for (int k = 0; k < n; ++k) {
        double mo = std::fabs(double(p[k]) * f[i]), mx = std::fabs(double(in.dX0[size_t(t * nd + k * d + i)]));
        for (int j = 0; j < n; ++j) {
          mo += std::fabs(double(M[j * n + k]) * x[j * d + i]);  // Xout_k's terms
          mx += std::fabs(double(M[k * n + j]) * g[j * d + i]);  // dX_k's: Σ_j M_kj g_j
        }
        bXout[size_t(t * nd + k * d + i)] = 2 * double(n + 2) * kU * mo + kTiny;
        bdX[size_t(t * nd + k * d + i)] = 2 * double(n + 1) * kU * mx + kTiny;
        mf += std::fabs(double(p[k]) * g[k * d + i]);
      }
      bdF[size_t(t * d + i)] = 2 * double(n + 1) * kU * mf + kTiny;
    }
    for (int k = 0; k < n; ++k) {
      double s = 0;
      for (int64_t i = 0; i < d; ++i) s += std::fabs(double(g[k * d + i]) * f[i]);
      bdpost[size_t(t * n + k)] = 2 * double(d + 1) * kU * s + kTiny;
      for (int j = 0; j < n; ++j) {
        double m = 0;
        for (int64_t i = 0; i < d; ++i) m += std::fabs(double(g[k * d + i]) * x[j * d + i]);
        bdM[size_t(t * n * n + j * n + k)] = 2 * double(d + 1) * kU * m + kTiny;
      }
    }
  }
  rep.checks.push_back(compare_bound("Xout", Xout, rXout, bXout));
  rep.checks.push_back(compare_bound("dF", dF, rdF, bdF));
  rep.checks.push_back(compare_bound("dpost", dpost, rdpost, bdpost));
  rep.checks.push_back(compare_bound("dM", dM, rdM, bdM));
  rep.checks.push_back(compare_bound("dX (+= Σ_k M_jk g_k)", dX, rdX, bdX));
  run();
  rep.checks.push_back(compare_bitwise("Xout", Xout, h.download<float>(gXout, Xout.size())));
  rep.checks.push_back(compare_bitwise("dF", dF, h.download<float>(gdF, dF.size())));
  rep.checks.push_back(compare_bitwise("dpost", dpost, h.download<float>(gdpost, dpost.size())));
  rep.checks.push_back(compare_bitwise("dM", dM, h.download<float>(gdM, dM.size())));
  rep.checks.push_back(compare_bitwise("dX", dX, h.download<float>(gdX, dX.size())));
  if (h.perf()) {
    rep.ms = h.time_ms(kernels);
    // forward: X read, Xout written, F; backward: X, dXout read, dX read and written, F read, dF written
    rep.bytes = 4.0 * double(N * nd) * 6 + 4.0 * double(N * d) * 3;
  }
  return rep;
}

std::vector<OpReport> check_hc_perf(Harness& h, int64_t N) {
  return {check_hc_pre(h, N, 4, 4096, true), check_hc_post(h, N, 4, 4096), check_hc_head(h, N, 4, 4096)};
}

}  // namespace trex::cuda::check
