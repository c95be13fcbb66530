// The compressor pooling op check (compressor_cases.hpp): cuda::compressor_* against nn::compressor_pool_* (the CPU
// fast path, bit for bit where the device does the same single operations) and nn::compressor_pool_*_ref (double).
#include "compressor_cases.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "cuda/compressor.hpp"
#include "nn/compressor_pool.hpp"

namespace trex::cuda::check {

namespace {
constexpr double kU = 1.0 / 16777216.0;  // 2^-24, fp32 unit roundoff
constexpr double kTiny = 1e-30;          // an element whose reference is exactly 0 must be exactly 0

// Entry e's slot k, channel ch: the [N, W] element it reads, or -1 for an empty slot (nn/compressor_pool.hpp).
int64_t slot_element(const CompressorGrid& g, int64_t cdim, bool overlap, int64_t e, int64_t k, int64_t ch) {
  const int64_t s0 = g.start[size_t(e)], m = g.m, W = (overlap ? 2 : 1) * cdim;
  if (!overlap) return (s0 + k) * W + ch;
  if (k < m) return g.idx[size_t(e)] > 0 ? (s0 - m + k) * W + ch : -1;
  return (s0 + k - m) * W + cdim + ch;
}

nn::CompressorPool host_pool(const CompressorGrid& g, int64_t cdim, bool overlap) {
  nn::CompressorPool p;
  p.N = g.N, p.NE = g.NE, p.m = g.m, p.cdim = cdim, p.overlap = overlap;
  p.start = g.start.data(), p.idx = g.idx.data(), p.pos = g.pos.data();
  return p;
}

std::string dims(const CompressorGrid& g, int64_t cdim, bool overlap, size_t docs) {
  return "N=" + std::to_string(g.N) + " m=" + std::to_string(g.m) + " cdim=" + std::to_string(cdim) +
         (overlap ? " csa" : " hca") + " NE=" + std::to_string(g.NE) + " docs=" + std::to_string(docs);
}
}  // namespace

CompressorGrid compressor_grid(int64_t N, int64_t m, std::vector<int64_t> doc_starts) {
  CompressorGrid g;
  g.N = N, g.m = m;
  g.pos.resize(size_t(N));
  std::vector<int32_t> doc_start(static_cast<size_t>(N));
  doc_starts.push_back(N);
  for (size_t d = 0; d + 1 < doc_starts.size(); ++d)
    for (int64_t i = doc_starts[d]; i < doc_starts[d + 1]; ++i) {
      g.pos[size_t(i)] = int32_t(i - doc_starts[d]);
      doc_start[size_t(i)] = int32_t(doc_starts[d]);
    }
  int64_t i = 0;
  while (i < N) {  // one document at a time (Seq::build)
    int64_t len = 1;
    while (i + len < N && doc_start[size_t(i + len)] == i) ++len;
    for (int64_t blk = 0; blk < len / m; ++blk) {
      g.start.push_back(int32_t(i + blk * m));
      g.idx.push_back(int32_t(blk));
    }
    i += len;
  }
  g.NE = int64_t(g.start.size());
  return g;
}

// Forward, per (entry, channel) with n used slots and D = max_k |z_k - max| (from the fp32 logits): the fp32
// difference z_k - max is within u |z_k - max| (exp's relative error u D), expf within 2 ulp (4u), the sum of n
// positive terms within (n - 1) u, the division u: S's relative error u (2 D + n + 9), + u/2 for the reference's own
// rounding. pooled = Σ_k S_k Cx_k in fp32 over n terms (with or without FMA): (relS + n u) Σ_k S_k |Cx_k|. Both x2.
void pool_forward_bounds(const CompressorGrid& g, int64_t cdim, bool overlap, const std::vector<float>& Cx,
                         const std::vector<float>& Zx, const std::vector<float>& S_ref, std::vector<double>& bS,
                         std::vector<double>& bpooled) {
  const int64_t slots = overlap ? 2 * g.m : g.m;
  bS.assign(size_t(g.NE * slots * cdim), kTiny);
  bpooled.assign(size_t(g.NE * cdim), kTiny);
  for (int64_t e = 0; e < g.NE; ++e)
    for (int64_t ch = 0; ch < cdim; ++ch) {
      double mx = -std::numeric_limits<double>::infinity(), lo = std::numeric_limits<double>::infinity();
      int64_t n = 0;
      for (int64_t k = 0; k < slots; ++k) {
        const int64_t x = slot_element(g, cdim, overlap, e, k, ch);
        if (x < 0) continue;
        mx = std::max(mx, double(Zx[size_t(x)]));
        lo = std::min(lo, double(Zx[size_t(x)]));
        ++n;
      }
      const double relS = kU * (2.0 * (mx - lo) + double(n) + 10.0);
      double mag = 0;
      for (int64_t k = 0; k < slots; ++k) {
        const int64_t x = slot_element(g, cdim, overlap, e, k, ch);
        if (x < 0) continue;  // empty: exactly 0
        const size_t is = size_t((e * slots + k) * cdim + ch);
        bS[is] = 2.0 * relS * std::fabs(double(S_ref[is])) + kTiny;
        mag += std::fabs(double(S_ref[is]) * Cx[size_t(x)]);
      }
      bpooled[size_t(e * cdim + ch)] = 2.0 * (relS + double(n + 1) * kU) * mag + kTiny;
    }
}

// Backward at a slot's (token, column), on the S, pooled the device read: dCx = S g, one fp32 rounding (u) beside
// the reference's (u/2); dZx = (S g)(Cx - pooled), three fp32 roundings (3u) beside the reference's: 2u |S g| and
// 8u |S g (Cx - pooled)| (x2). Elsewhere the reference is 0 and so must the device's be.
void pool_backward_bounds(const CompressorGrid& g, int64_t cdim, bool overlap, const std::vector<float>& Cx,
                          const std::vector<float>& S, const std::vector<float>& pooled,
                          const std::vector<float>& dpooled, std::vector<double>& bdCx, std::vector<double>& bdZx) {
  const int64_t slots = overlap ? 2 * g.m : g.m, W = (overlap ? 2 : 1) * cdim;
  bdCx.assign(size_t(g.N * W), kTiny);
  bdZx.assign(size_t(g.N * W), kTiny);
  for (int64_t e = 0; e < g.NE; ++e)
    for (int64_t ch = 0; ch < cdim; ++ch) {
      const double gr = dpooled[size_t(e * cdim + ch)], p = pooled[size_t(e * cdim + ch)];
      for (int64_t k = 0; k < slots; ++k) {
        const int64_t x = slot_element(g, cdim, overlap, e, k, ch);
        if (x < 0) continue;
        const double sg = std::fabs(double(S[size_t((e * slots + k) * cdim + ch)]) * gr);
        bdCx[size_t(x)] = 2.0 * kU * sg + kTiny;
        bdZx[size_t(x)] = 8.0 * kU * sg * std::fabs(double(Cx[size_t(x)]) - p) + kTiny;
      }
    }
}

// gape[r, j] = gape0 + Σ over the n_r tokens of class r: each device term within its dZx bound, and an fp32 sum of
// n_r terms and gape0 in any order (the zero partials add exactly) within (n_r + 1) u (|gape0| + Σ |dZx|), + u/2
// for the reference's rounding: Σ bdZx + 2 (n_r + 2) u (|gape0| + Σ |dZx|).
std::vector<double> ape_grad_bound(const CompressorGrid& g, int64_t W, const std::vector<float>& dZx_ref,
                                   const std::vector<double>& bdZx, const std::vector<float>& gape0) {
  const int64_t m = g.m;
  std::vector<double> err(size_t(m * W), 0.0), mag(size_t(m * W), 0.0);
  std::vector<int64_t> n(static_cast<size_t>(m), 0);
  for (int64_t i = 0; i < g.N; ++i) {
    const int64_t r = g.pos[size_t(i)] % m;
    ++n[size_t(r)];
    for (int64_t j = 0; j < W; ++j) {
      err[size_t(r * W + j)] += bdZx[size_t(i * W + j)];
      mag[size_t(r * W + j)] += std::fabs(double(dZx_ref[size_t(i * W + j)]));
    }
  }
  std::vector<double> b(size_t(m * W));
  for (int64_t x = 0; x < m * W; ++x)
    b[size_t(x)] = err[size_t(x)] +
                   2.0 * double(n[size_t(x / W)] + 2) * kU * (std::fabs(double(gape0[size_t(x)])) + mag[size_t(x)]) +
                   kTiny;
  return b;
}

std::vector<float> ape_grad_replay(const CompressorGrid& g, int64_t W, const std::vector<float>& dZx,
                                   const std::vector<float>& gape0) {
  const int64_t m = g.m, mW = m * W;
  std::vector<float> total(static_cast<size_t>(mW), 0.0f), part(static_cast<size_t>(mW));
  for (int64_t i0 = 0; i0 < g.N; i0 += kApeGradChunkTokens) {
    std::fill(part.begin(), part.end(), 0.0f);
    for (int64_t i = i0; i < std::min(g.N, i0 + kApeGradChunkTokens); ++i)
      for (int64_t j = 0; j < W; ++j) part[size_t((g.pos[size_t(i)] % m) * W + j)] += dZx[size_t(i * W + j)];
    for (int64_t x = 0; x < mW; ++x) total[size_t(x)] += part[size_t(x)];
  }
  std::vector<float> out(gape0);
  for (int64_t x = 0; x < mW; ++x) out[size_t(x)] += total[size_t(x)];
  return out;
}

OpReport check_compressor_pool(Harness& h, int64_t N, int64_t m, int64_t cdim, bool overlap,
                               const std::vector<int64_t>& doc_starts) {
  OpReport rep;
  rep.op = "compressor_pool";
  const CompressorGrid g = compressor_grid(N, m, doc_starts);
  rep.shape = dims(g, cdim, overlap, doc_starts.size());
  const int64_t W = (overlap ? 2 : 1) * cdim, slots = overlap ? 2 * m : m, NE = g.NE;
  Rng rng(900 + uint64_t(N * 3 + m * 5 + cdim * 7) + (overlap ? 11u : 0u));
  const std::vector<float> Cx = randn(rng, size_t(N * W)), Zx0 = randn(rng, size_t(N * W), 1.5);
  const std::vector<float> ape = randn(rng, size_t(m * W), 0.5), dpooled = randn(rng, size_t(std::max<int64_t>(1, NE * cdim)));
  const std::vector<float> gape0 = randn(rng, size_t(m * W));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const size_t nS = size_t(std::max<int64_t>(1, NE * slots * cdim)), nP = size_t(std::max<int64_t>(1, NE * cdim));

  DeviceBuffer gpos = h.upload(g.pos), gstart = h.upload(g.start.empty() ? std::vector<int32_t>(1, 0) : g.start);
  DeviceBuffer gidx = h.upload(g.idx.empty() ? std::vector<int32_t>(1, 0) : g.idx);
  DeviceBuffer gCx = h.upload(Cx), gZx(Zx0.size() * 4), gape = h.upload(ape), gdp = h.upload(dpooled);
  DeviceBuffer gS(nS * 4), gpooled(nP * 4), gdCx(size_t(N * W) * 4), gdZx(size_t(N * W) * 4), ggape(gape0.size() * 4);
  DeviceCompressorPool p;
  p.N = N, p.NE = NE, p.m = m, p.cdim = cdim, p.overlap = overlap;
  p.start = gstart.as<int32_t>(), p.idx = gidx.as<int32_t>(), p.pos = gpos.as<int32_t>();
  const std::vector<float> nanS(nS, nan), nanP(nP, nan), nanX(size_t(N * W), nan);
  auto reset = [&] {  // fresh inputs (the ape add and the gape accumulation work in place), outputs NaN
    h.stream().synchronize();
    gZx.upload(Zx0.data(), Zx0.size() * 4);
    ggape.upload(gape0.data(), gape0.size() * 4);
    gS.upload(nanS.data(), nS * 4);
    gpooled.upload(nanP.data(), nP * 4);
    gdCx.upload(nanX.data(), nanX.size() * 4);
    gdZx.upload(nanX.data(), nanX.size() * 4);
  };
  auto run = [&] {
    compressor_ape_add(p, gape.as<float>(), gZx.as<float>(), h.stream());
    compressor_pool_forward(p, gCx.as<float>(), gZx.as<float>(), gS.as<float>(), gpooled.as<float>(), h.stream());
    compressor_pool_backward(p, gCx.as<float>(), gS.as<float>(), gpooled.as<float>(), gdp.as<float>(),
                             gdCx.as<float>(), gdZx.as<float>(), h.stream());
    compressor_ape_backward(p, gdZx.as<float>(), ggape.as<float>(), h.scratch(), h.stream());
  };
  reset();
  run();
  const std::vector<float> Zx = h.download<float>(gZx, Zx0.size()), S = h.download<float>(gS, nS);
  const std::vector<float> pooled = h.download<float>(gpooled, nP), dCx = h.download<float>(gdCx, nanX.size());
  const std::vector<float> dZx = h.download<float>(gdZx, nanX.size()), gapev = h.download<float>(ggape, gape0.size());

  // the ape add: one fp32 add, the CPU fast path's bits
  const nn::CompressorPool hp = host_pool(g, cdim, overlap);
  std::vector<float> Zx_cpu(Zx0);
  nn::compressor_ape_add(hp, ape.data(), Zx_cpu.data());
  rep.checks.push_back(compare_bitwise("Zx + ape (CPU fast path)", Zx, Zx_cpu));

  // forward against the double reference on the same fp32 logits
  std::vector<float> rS(nS, 0.0f), rpooled(nP, 0.0f);
  nn::compressor_pool_forward_ref(hp, Cx.data(), Zx_cpu.data(), nullptr, rS.data(), rpooled.data());
  std::vector<double> bS, bpooled;
  pool_forward_bounds(g, cdim, overlap, Cx, Zx_cpu, rS, bS, bpooled);
  if (NE > 0) {
    rep.checks.push_back(compare_bound("S (empty slots exactly 0)", S, rS, bS));
    rep.checks.push_back(compare_bound("pooled", pooled, rpooled, bpooled));
  }

  // backward on the device's own S and pooled: the CPU fast path's bits (zeroed where no entry writes) and the
  // double reference within its bounds; gape the replay's bits and the reference within its bound
  std::vector<float> fdCx(nanX.size(), 0.0f), fdZx(nanX.size(), 0.0f);
  nn::compressor_pool_backward(hp, Cx.data(), S.data(), pooled.data(), dpooled.data(), fdCx.data(), fdZx.data());
  rep.checks.push_back(compare_bitwise("dCx (CPU fast path)", dCx, fdCx));
  rep.checks.push_back(compare_bitwise("dZx (CPU fast path)", dZx, fdZx));
  std::vector<float> rdCx(nanX.size()), rdZx(nanX.size()), rgape(gape0);
  nn::compressor_pool_backward_ref(hp, Cx.data(), S.data(), pooled.data(), dpooled.data(), rdCx.data(), rdZx.data(),
                                   rgape.data());
  std::vector<double> bdCx, bdZx;
  pool_backward_bounds(g, cdim, overlap, Cx, S, pooled, dpooled, bdCx, bdZx);
  rep.checks.push_back(compare_bound("dCx (no entry: exactly 0)", dCx, rdCx, bdCx));
  rep.checks.push_back(compare_bound("dZx (no entry: exactly 0)", dZx, rdZx, bdZx));
  rep.checks.push_back(compare_bound("gape", gapev, rgape, ape_grad_bound(g, W, rdZx, bdZx, gape0)));
  rep.checks.push_back(compare_bitwise("gape (chunk-order replay)", gapev, ape_grad_replay(g, W, dZx, gape0)));

  // a second call: the same bits everywhere
  reset();
  run();
  rep.checks.push_back(compare_bitwise("Zx again (bitwise)", Zx, h.download<float>(gZx, Zx.size())));
  rep.checks.push_back(compare_bitwise("S again (bitwise)", S, h.download<float>(gS, nS)));
  rep.checks.push_back(compare_bitwise("pooled again (bitwise)", pooled, h.download<float>(gpooled, nP)));
  rep.checks.push_back(compare_bitwise("dCx again (bitwise)", dCx, h.download<float>(gdCx, dCx.size())));
  rep.checks.push_back(compare_bitwise("dZx again (bitwise)", dZx, h.download<float>(gdZx, dZx.size())));
  rep.checks.push_back(compare_bitwise("gape again (bitwise)", gapev, h.download<float>(ggape, gapev.size())));
  if (h.perf()) {
    rep.ms = h.time_ms(run);  // ape add + forward + backward + ape gradient (the timed calls keep adding: harmless)
    // at least: Zx read and written (ape add), Cx and Zx read and S written (forward), S, Cx read and dCx, dZx
    // written (backward), dZx read (ape gradient)
    rep.bytes = 4.0 * (7.0 * double(N * W) + 2.0 * double(NE * slots * cdim));
    rep.flops = 0;  // bandwidth-bound
  }
  return rep;
}

std::vector<OpReport> check_compressor_pool_perf(Harness& h, bool quick) {
  const int64_t N = quick ? 2048 : 8192;
  const std::vector<int64_t> docs{0, N / 2 - 3, N - N / 8 + 5};  // lengths not multiples of 4 or 128
  return {check_compressor_pool(h, N, 4, 512, true, docs), check_compressor_pool(h, N, 128, 512, false, docs)};
}

}  // namespace trex::cuda::check
