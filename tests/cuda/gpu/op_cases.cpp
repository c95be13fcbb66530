// The op checks (op_cases.hpp): CPU reference vs CUDA on the same inputs.
#include "op_cases.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "nn/gemm.hpp"
#include "nn/gemm_bf16.hpp"
#include "nn/ops.hpp"
#include "cuda/ops.hpp"
#include "sinkhorn_ref.hpp"

namespace trex::cuda::check {

namespace {
constexpr double kU = 1.0 / 16777216.0;  // 2^-24, fp32 unit roundoff

std::string dims(std::initializer_list<std::pair<const char*, int64_t>> d) {
  std::string s;
  for (const auto& [k, v] : d) s += (s.empty() ? "" : " ") + std::string(k) + "=" + std::to_string(v);
  return s;
}
}  // namespace

OpReport check_gemm(Harness& h, Blas& blas, GemmType type, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                    float beta, int64_t sample_rows) {
  OpReport rep;
  rep.op = std::string(type == GemmType::bf16 ? "gemm_bf16" : "gemm_fp32") + (ta ? "_T" : "_N") + (tb ? "T" : "N");
  rep.shape = dims({{"m", m}, {"n", n}, {"k", k}}) + (beta != 0 ? " beta=" + std::to_string(beta) : "");
  Rng rng(1000 + uint64_t(m * 7 + n * 13 + k));
  const int64_t lda = ta ? m : k, ldb = tb ? k : n, ldc = n;
  const std::vector<float> a = uniform(rng, size_t((ta ? k : m) * lda), -1, 1);
  const std::vector<float> b = uniform(rng, size_t((tb ? n : k) * ldb), -1, 1);
  const std::vector<float> c0 = uniform(rng, size_t(m * ldc), -1, 1);
  const float alpha = 0.75f;

  DeviceBuffer da = h.upload(a), db = h.upload(b), dc = h.upload(c0);
  DeviceBuffer a16, b16;
  const void *pa = da.as<void>(), *pb = db.as<void>();
  if (type == GemmType::bf16) {
    a16 = DeviceBuffer(a.size() * 2);
    b16 = DeviceBuffer(b.size() * 2);
    round_to_bf16(da.as<float>(), a16.as<uint16_t>(), int64_t(a.size()), h.stream());
    round_to_bf16(db.as<float>(), b16.as<uint16_t>(), int64_t(b.size()), h.stream());
    pa = a16.as<void>();
    pb = b16.as<void>();
  }
  const DeviceGemm g{ta, tb, m, n, k, alpha, pa, lda, pb, ldb, beta, dc.as<float>(), ldc, type};
  blas.gemm(g, h.stream());
  const std::vector<float> got = h.download<float>(dc, c0.size());

  // Reference rows (all, or sample_rows spread over m) and their bounds from |A| |B|.
  std::vector<int64_t> rows;
  if (sample_rows <= 0 || sample_rows >= m) {
    for (int64_t i = 0; i < m; ++i) rows.push_back(i);
  } else {
    for (int64_t s = 0; s < sample_rows; ++s) rows.push_back(s * (m - 1) / (sample_rows - 1 > 0 ? sample_rows - 1 : 1));
  }
  // |operand| as the product sees it (bf16: after rounding)
  auto magnitude = [&](float v) {
    return std::fabs(type == GemmType::bf16 ? nn::bf16_to_float(nn::float_to_bf16(v)) : v);
  };
  std::vector<float> abs_a(a.size()), abs_b(b.size());
  for (size_t i = 0; i < a.size(); ++i) abs_a[i] = magnitude(a[i]);
  for (size_t i = 0; i < b.size(); ++i) abs_b[i] = magnitude(b[i]);
  std::vector<float> ref, sel, row(static_cast<size_t>(n)), mag(static_cast<size_t>(n));
  std::vector<double> bound;
  for (int64_t i : rows) {
    const float* ai = ta ? a.data() + i : a.data() + i * lda;  // row i of op(A): a column of A when transposed
    std::memcpy(row.data(), c0.data() + i * ldc, size_t(n) * sizeof(float));
    if (type == GemmType::bf16) {
      nn::GemmCall call{ta, tb, 1, n, k, alpha, ai, lda, b.data(), ldb, beta, row.data(), ldc};
      nn::gemm_bf16_reference(call);
    } else {
      nn::gemm_reference(ta, tb, 1, n, k, alpha, ai, lda, b.data(), ldb, beta, row.data(), ldc);
    }
    const float* abs_ai = ta ? abs_a.data() + i : abs_a.data() + i * lda;
    nn::gemm_reference(ta, tb, 1, n, k, std::fabs(alpha), abs_ai, lda, abs_b.data(), ldb, 0.0f, mag.data(), ldc);
    for (int64_t j = 0; j < n; ++j) {
      ref.push_back(row[size_t(j)]);
      sel.push_back(got[size_t(i * ldc + j)]);
      bound.push_back(2.0 * double(k) * kU * double(mag[size_t(j)]) * 1.01 +
                      4.0 * kU * std::fabs(double(beta) * c0[size_t(i * ldc + j)]) + 1e-30);
    }
  }
  rep.checks.push_back(compare_bound("C", sel, ref, bound));
  // Determinism: the same call on the same inputs gives the same bits.
  dc.upload(c0.data(), c0.size() * sizeof(float));
  blas.gemm(g, h.stream());
  const std::vector<float> again = h.download<float>(dc, c0.size());
  Compare same;
  same.what = "C again (bitwise)";
  same.n = int64_t(got.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &again[i], 4) != 0) ++same.bad;
  rep.checks.push_back(same);
  if (h.perf()) {
    rep.ms = h.time_ms([&] { blas.gemm(g, h.stream()); });
    const double eb = type == GemmType::bf16 ? 2 : 4;
    rep.bytes = eb * double(m * k + k * n) + 4.0 * double(m * n) * (beta != 0 ? 2 : 1);
    rep.flops = 2.0 * double(m) * double(n) * double(k);
  }
  return rep;
}

OpReport check_bf16_round(Harness& h, int64_t n) {
  OpReport rep;
  rep.op = "round_to_bf16";
  rep.shape = dims({{"n", n}});
  Rng rng(7);
  std::vector<float> x = randn(rng, size_t(n), 100.0);
  const float specials[] = {0.0f, -0.0f, 1e-40f, -1e-40f, std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::max(),
                            1.0f + 0x1.0p-8f /* tie, even stays */, 1.0f + 0x3.0p-8f /* tie, odd rounds up */,
                            std::numeric_limits<float>::min()};
  for (float s : specials) x.push_back(s);
  std::vector<uint16_t> ref(x.size());
  for (size_t i = 0; i < x.size(); ++i) ref[i] = nn::float_to_bf16(x[i]);
  DeviceBuffer dx = h.upload(x), dout(x.size() * 2);
  round_to_bf16(dx.as<float>(), dout.as<uint16_t>(), int64_t(x.size()), h.stream());
  rep.checks.push_back(compare_bits("bf16", h.download<uint16_t>(dout, x.size()), ref));
  if (h.perf()) {
    rep.ms = h.time_ms([&] { round_to_bf16(dx.as<float>(), dout.as<uint16_t>(), int64_t(x.size()), h.stream()); });
    rep.bytes = 6.0 * double(x.size());
  }
  return rep;
}

OpReport check_rmsnorm(Harness& h, int64_t rows, int64_t dim, bool weighted) {
  OpReport rep;
  rep.op = weighted ? "rmsnorm" : "rmsnorm_weightless";
  rep.shape = dims({{"rows", rows}, {"dim", dim}});
  Rng rng(11 + uint64_t(rows + dim));
  const std::vector<float> x = randn(rng, size_t(rows * dim), 2.0), dy = randn(rng, size_t(rows * dim));
  const std::vector<float> dx0 = randn(rng, size_t(rows * dim));
  std::vector<float> w = weighted ? uniform(rng, size_t(dim), 0.5, 1.5) : std::vector<float>{};
  const std::vector<float> dw0 = weighted ? randn(rng, size_t(dim)) : std::vector<float>{};
  const float eps = 1e-6f;
  std::vector<float> y(x.size()), rstd(static_cast<size_t>(rows)), dx(x.size()), dxa = dx0, dw = dw0;
  const float* wp = weighted ? w.data() : nullptr;
  nn::rmsnorm_forward_ref(x.data(), wp, y.data(), rstd.data(), rows, dim, eps);
  nn::rmsnorm_backward_ref(x.data(), wp, rstd.data(), dy.data(), dx.data(), weighted ? dw.data() : nullptr, rows, dim,
                           false);
  std::vector<float> dw_unused = dw0;  // the accumulate pass adds dw again on the CPU; compare dw from the first
  nn::rmsnorm_backward_ref(x.data(), wp, rstd.data(), dy.data(), dxa.data(), weighted ? dw_unused.data() : nullptr,
                           rows, dim, true);

  DeviceBuffer gx = h.upload(x), gdy = h.upload(dy), gy(x.size() * 4), grs(size_t(rows) * 4), gdx(x.size() * 4);
  DeviceBuffer gdxa = h.upload(dx0), gw, gdw;
  if (weighted) {
    gw = h.upload(w);
    gdw = h.upload(dw0);
  }
  float* gwp = weighted ? gw.as<float>() : nullptr;
  rmsnorm_forward(gx.as<float>(), gwp, gy.as<float>(), grs.as<float>(), rows, dim, eps, h.stream());
  rmsnorm_backward(gx.as<float>(), gwp, grs.as<float>(), gdy.as<float>(), gdx.as<float>(),
                   weighted ? gdw.as<float>() : nullptr, rows, dim, false, h.scratch(), h.stream());
  rmsnorm_backward(gx.as<float>(), gwp, grs.as<float>(), gdy.as<float>(), gdxa.as<float>(), nullptr, rows, dim, true,
                   h.scratch(), h.stream());
  // fp32 sums over dim (forward, dx) and over rows (dw): errors grow with the summed length.
  const double tol_d = 1e-6 * (4 + std::sqrt(double(dim))), tol_r = 1e-6 * (4 + std::sqrt(double(rows)));
  rep.checks.push_back(compare("y", h.download<float>(gy, y.size()), y, tol_d, tol_d));
  rep.checks.push_back(compare("rstd", h.download<float>(grs, rstd.size()), rstd, 0, tol_d));
  rep.checks.push_back(compare("dx", h.download<float>(gdx, dx.size()), dx, tol_d, tol_d));
  rep.checks.push_back(compare("dx accumulated", h.download<float>(gdxa, dxa.size()), dxa, tol_d, tol_d));
  // dw: the CPU reference itself accumulates in float over the rows (rmsnorm_backward_ref's dw +=), so the
  // absolute term grows with the row count
  if (weighted) rep.checks.push_back(compare("dw", h.download<float>(gdw, dw.size()), dw, 1e-6 * double(rows), tol_r));
  if (h.perf()) {
    rep.ms = h.time_ms([&] {
      rmsnorm_forward(gx.as<float>(), gwp, gy.as<float>(), grs.as<float>(), rows, dim, eps, h.stream());
      rmsnorm_backward(gx.as<float>(), gwp, grs.as<float>(), gdy.as<float>(), gdx.as<float>(),
                       weighted ? gdw.as<float>() : nullptr, rows, dim, false, h.scratch(), h.stream());
    });
    // forward reads x, writes y; backward reads x, dy (twice with dw), writes dx
    rep.bytes = 4.0 * double(rows * dim) * (weighted ? 7 : 5);
  }
  return rep;
}

OpReport check_rope(Harness& h, int64_t n, int64_t heads, int64_t head_dim, int64_t r) {
  OpReport rep;
  rep.op = "rope";
  rep.shape = dims({{"n", n}, {"heads", heads}, {"head_dim", head_dim}, {"rotary", r}});
  Rng rng(23);
  const int64_t max_pos = 4096;
  const nn::RopeTable t = nn::make_rope_table(r, max_pos, 160000.0, true, 16.0, 65536, 32.0, 1.0);
  const std::vector<float> x = randn(rng, size_t(n * heads * head_dim));
  std::vector<int32_t> pos(static_cast<size_t>(n));
  for (auto& p : pos) p = int32_t(rng.uniform_int(0, max_pos - 1));
  std::vector<float> fwd = x, inv = x;
  nn::rope_apply_ref(fwd.data(), n, heads, head_dim, pos.data(), t, false);
  nn::rope_apply_ref(inv.data(), n, heads, head_dim, pos.data(), t, true);
  DeviceBuffer gf = h.upload(x), gi = h.upload(x), gpos = h.upload(pos), gc = h.upload(t.cos), gs = h.upload(t.sin);
  rope_apply(gf.as<float>(), n, heads, head_dim, gpos.as<int32_t>(), gc.as<float>(), gs.as<float>(), r, false,
             h.stream());
  rope_apply(gi.as<float>(), n, heads, head_dim, gpos.as<int32_t>(), gc.as<float>(), gs.as<float>(), r, true,
             h.stream());
  // the same float table and products as the CPU (ref: angles in double, cast to float): a few ulps
  rep.checks.push_back(compare("forward", h.download<float>(gf, x.size()), fwd, 1e-6, 1e-6));
  rep.checks.push_back(compare("inverse (backward)", h.download<float>(gi, x.size()), inv, 1e-6, 1e-6));
  if (h.perf()) {
    rep.ms = h.time_ms([&] {
      rope_apply(gf.as<float>(), n, heads, head_dim, gpos.as<int32_t>(), gc.as<float>(), gs.as<float>(), r, false,
                 h.stream());
    });
    rep.bytes = 8.0 * double(n * heads * r);  // the rotated part read and written
  }
  return rep;
}

OpReport check_swiglu(Harness& h, int64_t n, float limit) {
  OpReport rep;
  rep.op = "swiglu";
  rep.shape = dims({{"n", n}}) + " limit=" + std::to_string(limit);
  Rng rng(31);
  // scale so that a share of g and u passes the limit (the clamps and their zero gradients are exercised)
  const double s = limit > 0 ? limit * 0.6 : 4.0;
  const std::vector<float> g = randn(rng, size_t(n), s), u = randn(rng, size_t(n), s), dh = randn(rng, size_t(n));
  std::vector<float> hh(static_cast<size_t>(n)), dg(static_cast<size_t>(n)), du(static_cast<size_t>(n));
  nn::swiglu_forward_ref(g.data(), u.data(), hh.data(), n, limit);
  nn::swiglu_backward_ref(g.data(), u.data(), dh.data(), dg.data(), du.data(), n, limit);
  DeviceBuffer gg = h.upload(g), gu = h.upload(u), gdh = h.upload(dh), gh(size_t(n) * 4), gdg(size_t(n) * 4),
               gdu(size_t(n) * 4);
  swiglu_forward(gg.as<float>(), gu.as<float>(), gh.as<float>(), n, limit, h.stream());
  swiglu_backward(gg.as<float>(), gu.as<float>(), gdh.as<float>(), gdg.as<float>(), gdu.as<float>(), n, limit,
                  h.stream());
  rep.checks.push_back(compare("h", h.download<float>(gh, size_t(n)), hh, 1e-6, 4e-6));
  // dg's factor s (1 + g (1 - s)) crosses zero near g = -1.28: bound its absolute error by the terms' size
  std::vector<double> dg_bound(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const double uv = limit > 0 ? std::fmin(std::fabs(double(u[size_t(i)])), limit) : std::fabs(double(u[size_t(i)]));
    dg_bound[size_t(i)] = 4e-6 * std::fabs(double(dg[size_t(i)])) + 1e-6 * (1 + std::fabs(double(dh[size_t(i)])) * uv);
  }
  rep.checks.push_back(compare_bound("dg", h.download<float>(gdg, size_t(n)), dg, dg_bound));
  rep.checks.push_back(compare("du", h.download<float>(gdu, size_t(n)), du, 1e-6, 4e-6));
  if (h.perf()) {
    rep.ms = h.time_ms([&] {
      swiglu_forward(gg.as<float>(), gu.as<float>(), gh.as<float>(), n, limit, h.stream());
      swiglu_backward(gg.as<float>(), gu.as<float>(), gdh.as<float>(), gdg.as<float>(), gdu.as<float>(), n, limit,
                      h.stream());
    });
    rep.bytes = 4.0 * double(n) * (3 + 5);
  }
  return rep;
}

OpReport check_sinkhorn(Harness& h, int64_t count, int n, int iters) {
  OpReport rep;
  rep.op = "sinkhorn";
  rep.shape = dims({{"count", count}, {"n", n}, {"iters", iters}});
  Rng rng(51 + uint64_t(count * 9 + n));
  const int nn2 = n * n, nout = (2 + n) * n;
  const float eps = 1e-6f;  // ModelConfig::hc_eps
  const std::vector<float> a = randn(rng, size_t(count * nn2), 2.0), dm = randn(rng, size_t(count * nn2));
  const float sentinel = 12345.0f;
  std::vector<float> m(a.size()), da(size_t(count * nout), sentinel);
  nn::sinkhorn_forward_batch(a.data(), nn2, m.data(), nn2, count, n, iters, eps);
  nn::sinkhorn_backward_batch(a.data(), nn2, dm.data(), nn2, da.data() + 2 * n, nout, count, n, iters, eps);
  // the double twin, and the CPU float path's distance from it
  std::vector<float> ref_m(m.size()), ref_da(da);
  double dist_m = 0, dist_da = 0, max_m = 0, max_da = 0;
  for (int64_t t = 0; t < count; ++t) {
    const std::vector<double> rm = sinkhorn_forward_double(a.data() + t * nn2, n, iters, eps);
    const std::vector<double> rd = sinkhorn_backward_double(a.data() + t * nn2, dm.data() + t * nn2, n, iters, eps);
    for (int i = 0; i < nn2; ++i) {
      const size_t im = size_t(t * nn2 + i), id = size_t(t * nout + 2 * n + i);
      ref_m[im] = float(rm[size_t(i)]);
      ref_da[id] = float(rd[size_t(i)]);
      dist_m = std::max(dist_m, std::fabs(double(m[im]) - rm[size_t(i)]));
      dist_da = std::max(dist_da, std::fabs(double(da[id]) - rd[size_t(i)]));
      max_m = std::max(max_m, std::fabs(rm[size_t(i)]));
      max_da = std::max(max_da, std::fabs(rd[size_t(i)]));
    }
  }
  DeviceBuffer ga = h.upload(a), gdm = h.upload(dm), gm(a.size() * 4),
               gda = h.upload(std::vector<float>(da.size(), sentinel));
  sinkhorn_forward(ga.as<float>(), nn2, gm.as<float>(), nn2, count, n, iters, eps, h.stream());
  sinkhorn_backward(ga.as<float>(), nn2, gdm.as<float>(), nn2, gda.as<float>() + 2 * n, nout, count, n, iters, eps,
                    h.scratch(), h.stream());
  const std::vector<float> got_m = h.download<float>(gm, m.size()), got_da = h.download<float>(gda, da.size());
  const double tol_m = 4 * dist_m + 8 * kU * max_m, tol_da = 4 * dist_da + 8 * kU * max_da;
  // the sentinel slots compare exactly (ref_da holds the sentinel there; their bound is 0)
  std::vector<double> bound_da(da.size(), 0.0);
  for (int64_t t = 0; t < count; ++t)
    for (int i = 0; i < nn2; ++i) bound_da[size_t(t * nout + 2 * n + i)] = tol_da;
  rep.checks.push_back(compare("M vs double twin", got_m, ref_m, tol_m, 0));
  rep.checks.push_back(compare_bound("dA vs double twin (other slots untouched)", got_da, ref_da, bound_da));
  rep.checks.push_back(compare("M vs CPU float", got_m, m, tol_m + dist_m, 0));
  // a second call: the same bits
  sinkhorn_forward(ga.as<float>(), nn2, gm.as<float>(), nn2, count, n, iters, eps, h.stream());
  sinkhorn_backward(ga.as<float>(), nn2, gdm.as<float>(), nn2, gda.as<float>() + 2 * n, nout, count, n, iters, eps,
                    h.scratch(), h.stream());
  rep.checks.push_back(compare("M again (exactly equal)", h.download<float>(gm, m.size()), got_m, 0, 0));
  rep.checks.push_back(compare("dA again (exactly equal)", h.download<float>(gda, da.size()), got_da, 0, 0));
  if (h.perf()) {
    rep.ms = h.time_ms([&] {
      sinkhorn_forward(ga.as<float>(), nn2, gm.as<float>(), nn2, count, n, iters, eps, h.stream());
      sinkhorn_backward(ga.as<float>(), nn2, gdm.as<float>(), nn2, gda.as<float>() + 2 * n, nout, count, n, iters,
                        eps, h.scratch(), h.stream());
    });
    // what the op must move: A (twice), M, dM, dA; the backward's saved iterates (2 iters - 1 matrices written
    // and read back per matrix) are this kernel's choice and not counted
    rep.bytes = 4.0 * double(count * nn2) * 5;
  }
  return rep;
}

OpReport check_xent(Harness& h, int64_t rows, int64_t vocab, float scale) {
  OpReport rep;
  rep.op = "softmax_xent";
  rep.shape = dims({{"rows", rows}, {"vocab", vocab}});
  Rng rng(41);
  const std::vector<float> logits = randn(rng, size_t(rows * vocab), 3.0);
  std::vector<int32_t> target(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) target[size_t(i)] = i % 5 == 3 ? -1 : int32_t(rng.uniform_int(0, vocab - 1));
  std::vector<float> dref(logits.size());
  const double loss = nn::softmax_xent_ref(logits.data(), target.data(), dref.data(), rows, vocab, scale);
  DeviceBuffer gl = h.upload(logits), gt = h.upload(target), gd(logits.size() * 4), g16(logits.size() * 2),
               grl(size_t(rows) * 8), galias = h.upload(logits);
  softmax_xent(gl.as<float>(), gt.as<int32_t>(), gd.as<float>(), grl.as<double>(), rows, vocab, scale, nullptr,
               h.stream());
  const double got = sum_row_losses(grl.as<double>(), rows, h.stream());
  // in place (dlogits aliasing logits, as the model calls it) and the bf16 gradient
  softmax_xent(galias.as<float>(), gt.as<int32_t>(), galias.as<float>(), grl.as<double>(), rows, vocab, scale, nullptr,
               h.stream());
  softmax_xent(gl.as<float>(), gt.as<int32_t>(), nullptr, grl.as<double>(), rows, vocab, scale, g16.as<uint16_t>(),
               h.stream());
  const double tol = 1e-6 * (4 + std::sqrt(double(vocab)));
  Compare lc = compare("loss", {float(got)}, {float(loss)}, 0, tol);
  rep.checks.push_back(lc);
  const double atol = double(scale) * tol;
  rep.checks.push_back(compare("dlogits", h.download<float>(gd, dref.size()), dref, atol * 1e-2, tol));
  rep.checks.push_back(compare("dlogits in place", h.download<float>(galias, dref.size()), dref, atol * 1e-2, tol));
  // bf16: the CUDA gradient rounded; against the reference within the rounding (2^-8 relative) plus fp32 error
  const std::vector<uint16_t> b16 = h.download<uint16_t>(g16, dref.size());
  std::vector<float> b16f(b16.size());
  for (size_t i = 0; i < b16.size(); ++i) b16f[i] = nn::bf16_to_float(b16[i]);
  rep.checks.push_back(compare("dlogits bf16", b16f, dref, atol * 1e-2, tol + 1.0 / 256));
  if (h.perf()) {
    rep.ms = h.time_ms([&] {
      softmax_xent(gl.as<float>(), gt.as<int32_t>(), gd.as<float>(), grl.as<double>(), rows, vocab, scale, nullptr,
                   h.stream());
    });
    rep.bytes = 4.0 * double(rows * vocab) * 2;  // logits read (cached between passes at best), dlogits written
  }
  return rep;
}

OpReport check_topk(Harness& h, int64_t rows, int64_t cols, int64_t k, int levels) {
  OpReport rep;
  rep.op = "topk_rows";
  rep.shape = dims({{"rows", rows}, {"cols", cols}, {"k", k}, {"levels", levels}});
  Rng rng(53 + uint64_t(rows * 3 + cols + k));
  const int64_t stride = cols + 3;  // rows not packed: the stride is honoured
  std::vector<float> scores(size_t(rows * stride), std::numeric_limits<float>::quiet_NaN());  // padding unread
  std::vector<int32_t> n(static_cast<size_t>(rows)), base(static_cast<size_t>(rows));
  const float specials[] = {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::denorm_min(),
                            -std::numeric_limits<float>::max()};
  for (int64_t i = 0; i < rows; ++i) {
    // row lengths: empty, shorter than k, exactly k, and any length up to cols
    const int64_t pick = i % 7;
    n[size_t(i)] = int32_t(pick == 0 ? 0 : pick == 1 ? std::min(k - 1, cols) : pick == 2 ? std::min(k, cols)
                                                                                  : rng.uniform_int(0, cols));
    base[size_t(i)] = int32_t(rng.uniform_int(0, 1000));
    for (int64_t j = 0; j < n[size_t(i)]; ++j) {
      float v = levels > 0 ? float(rng.uniform_int(0, levels - 1)) - float(levels / 2)  // many ties
                           : float(rng.normal());
      if (rng.uniform_int(0, 40) == 0) v = specials[rng.uniform_int(0, 5)];
      scores[size_t(i * stride + j)] = v;
    }
  }
  std::vector<int32_t> ref(size_t(rows * k), -1);
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t kk = std::min<int64_t>(k, n[size_t(i)]);
    nn::topk_lower_index(scores.data() + i * stride, n[size_t(i)], kk, ref.data() + i * k);
    for (int64_t j = 0; j < kk; ++j) ref[size_t(i * k + j)] += base[size_t(i)];
  }
  DeviceBuffer gs = h.upload(scores), gn = h.upload(n), gb = h.upload(base), go(ref.size() * 4);
  topk_rows(gs.as<float>(), rows, cols, stride, gn.as<int32_t>(), gb.as<int32_t>(), k, go.as<int32_t>(), h.stream());
  const std::vector<int32_t> got = h.download<int32_t>(go, ref.size());
  Compare c;  // exact: the same indices in the same order
  c.what = "indices (exact)";
  c.n = int64_t(ref.size());
  for (size_t i = 0; i < ref.size(); ++i)
    if (got[i] != ref[i]) {
      if (c.bad++ == 0) c.worst = int64_t(i);
      c.max_abs = std::max(c.max_abs, std::fabs(double(got[i]) - double(ref[i])));
    }
  c.worst_ratio = c.bad ? std::numeric_limits<double>::infinity() : 0.0;
  rep.checks.push_back(c);
  // every row at full length, no base (the null pointers)
  std::vector<float> full(size_t(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) full[size_t(i * cols + j)] = float(rng.normal());
  std::vector<int32_t> ref_full(size_t(rows * k), -1);
  for (int64_t i = 0; i < rows; ++i)
    nn::topk_lower_index(full.data() + i * cols, cols, std::min(k, cols), ref_full.data() + i * k);
  DeviceBuffer gf = h.upload(full);
  topk_rows(gf.as<float>(), rows, cols, cols, nullptr, nullptr, k, go.as<int32_t>(), h.stream());
  const std::vector<int32_t> got_full = h.download<int32_t>(go, ref_full.size());
  Compare cf;
  cf.what = "indices, full rows (exact)";
  cf.n = int64_t(ref_full.size());
  for (size_t i = 0; i < ref_full.size(); ++i)
    if (got_full[i] != ref_full[i] && cf.bad++ == 0) cf.worst = int64_t(i);
  cf.worst_ratio = cf.bad ? std::numeric_limits<double>::infinity() : 0.0;
  rep.checks.push_back(cf);
  if (h.perf()) {
    rep.ms = h.time_ms([&] {
      topk_rows(gf.as<float>(), rows, cols, cols, nullptr, nullptr, k, go.as<int32_t>(), h.stream());
    });
    rep.bytes = 4.0 * double(rows) * double(cols + k);  // the scores read once (at least), the indices written
  }
  return rep;
}

}  // namespace trex::cuda::check
