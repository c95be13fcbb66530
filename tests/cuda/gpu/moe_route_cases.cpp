// The MoE routing op checks (moe_route_cases.hpp): nn/moe_route.hpp vs cuda/moe_route.hpp on the same inputs.
#include "moe_route_cases.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "cuda/moe_route.hpp"
#include "cuda/ops.hpp"
#include "nn/moe_route.hpp"
#include "nn/ops.hpp"

namespace trex::cuda::check {

namespace {
constexpr double kU = 1.0 / 16777216.0;            // 2^-24, fp32 unit roundoff
constexpr double kUd = 1.0 / 9007199254740992.0;  // 2^-53, fp64 unit roundoff
constexpr float kR = 2.5f;                         // routed_scaling_factor (the Pro preset's)
constexpr int64_t kHashRows = 97;                  // tid2eid rows (token ids drawn below it)

std::string dims(std::initializer_list<std::pair<const char*, int64_t>> d) {
  std::string s;
  for (const auto& [k, v] : d) s += (s.empty() ? "" : " ") + std::string(k) + "=" + std::to_string(v);
  return s;
}

template <class T>
uint64_t bits_of(T v) {
  if constexpr (sizeof(T) == 4) return std::bit_cast<uint32_t>(v);
  else return std::bit_cast<uint64_t>(v);
}

// Exactly equal, element by element (floats by their bits: -0 is not +0, NaN is never equal).
template <class T>
Compare compare_exact(const std::string& what, const std::vector<T>& gpu, const std::vector<T>& ref) {
  Compare c;
  c.what = what + " (exact)";
  c.n = int64_t(ref.size());
  if (gpu.size() != ref.size()) {
    c.what += " (size mismatch)";
    c.bad = c.n > 0 ? c.n : 1;
    return c;
  }
  for (size_t i = 0; i < ref.size(); ++i)
    if (bits_of(gpu[i]) != bits_of(ref[i])) {
      if (c.worst < 0) c.worst = int64_t(i);
      ++c.bad;
      c.max_abs = std::max(c.max_abs, std::fabs(double(gpu[i]) - double(ref[i])));
    }
  c.worst_ratio = c.bad ? INFINITY : 0;
  return c;
}

Compare compare_double(const std::string& what, double gpu, double ref, double bound) {
  Compare c;
  c.what = what;
  c.n = 1;
  const double err = std::fabs(gpu - ref);
  c.max_abs = std::isnan(err) ? INFINITY : err;
  c.worst = 0;
  c.worst_ratio = bound > 0 ? err / bound : (err == 0 ? 0 : INFINITY);
  if (std::isnan(c.worst_ratio)) c.worst_ratio = INFINITY;
  c.bad = err <= bound ? 0 : 1;
  return c;
}

struct RouteInputs {
  std::vector<float> scores, bias;  // [N, E], [E] (empty for a hash layer)
  std::vector<int64_t> table;       // [kHashRows, k] (hash)
  std::vector<int32_t> tokens;      // [N] (hash)
};

// Router scores N(0, 2^2) (affinities from ~0 to ~3), a small selection bias; ties: both from a few values.
RouteInputs draw_route_inputs(Rng& rng, int64_t N, int64_t E, int64_t k, bool hash, bool ties) {
  RouteInputs in;
  in.scores.resize(size_t(N * E));
  for (float& v : in.scores) v = ties ? float(0.5 * double(rng.uniform_int(0, 3)) - 0.75) : float(2 * rng.normal());
  if (hash) {
    in.table.resize(size_t(kHashRows * k));
    std::vector<int64_t> ids(static_cast<size_t>(E));
    for (int64_t r = 0; r < kHashRows; ++r) {  // k distinct experts per row: a partial shuffle
      std::iota(ids.begin(), ids.end(), int64_t(0));
      for (int64_t j = 0; j < k; ++j) {
        std::swap(ids[size_t(j)], ids[size_t(rng.uniform_int(j, E - 1))]);
        in.table[size_t(r * k + j)] = ids[size_t(j)];
      }
    }
    in.tokens.resize(static_cast<size_t>(N));
    for (int32_t& t : in.tokens) t = int32_t(rng.uniform_int(0, kHashRows - 1));
  } else {
    in.bias.resize(static_cast<size_t>(E));
    for (float& v : in.bias) v = ties ? float(0.25 * double(rng.uniform_int(0, 1))) : float(0.1 * rng.normal());
  }
  return in;
}

// The device's router forward on uploaded inputs.
struct DeviceRoute {
  DeviceBuffer scores, bias, table, tokens, a, sel, w;
  void run(Harness& h, int64_t N, int64_t E, int64_t k) {
    moe_route_forward(scores.as<float>(), bias.bytes() ? bias.as<float>() : nullptr,
                      table.bytes() ? table.as<int64_t>() : nullptr, tokens.bytes() ? tokens.as<int32_t>() : nullptr,
                      N, E, k, kR, a.as<float>(), sel.as<int32_t>(), w.as<float>(), h.stream().get());
  }
};
DeviceRoute upload_route(Harness& h, const RouteInputs& in, int64_t N, int64_t E, int64_t k) {
  DeviceRoute d;
  d.scores = h.upload(in.scores);
  if (!in.bias.empty()) d.bias = h.upload(in.bias);
  if (!in.table.empty()) {
    d.table = h.upload(in.table);
    d.tokens = h.upload(in.tokens);
  }
  d.a = DeviceBuffer(size_t(N * E) * 4);
  d.sel = DeviceBuffer(size_t(N * k) * 4);
  d.w = DeviceBuffer(size_t(N * k) * 4);
  return d;
}

// Device buffers of a grouping.
struct DeviceGroups {
  DeviceBuffer counts, offsets, order_tok, order_slot, row_of;
  DeviceGroups(int64_t N, int64_t E, int64_t k)
      : counts(size_t(E) * 8), offsets(size_t(E + 1) * 8), order_tok(size_t(N * k) * 4),
        order_slot(size_t(N * k) * 4), row_of(size_t(N * k) * 4) {}
  void run(Harness& h, const int32_t* sel, int64_t N, int64_t E, int64_t k) {
    moe_group_rows(sel, N, E, k, counts.as<int64_t>(), offsets.as<int64_t>(), order_tok.as<int32_t>(),
                   order_slot.as<int32_t>(), row_of.as<int32_t>(), h.scratch(), h.stream().get());
  }
};

// The oracle's grouping of a selection, compared with the device's.
void compare_groups(Harness& h, DeviceGroups& g, const std::vector<int32_t>& sel, int64_t N, int64_t E, int64_t k,
                    OpReport& rep) {
  std::vector<int64_t> counts(static_cast<size_t>(E)), offsets(size_t(E + 1));
  std::vector<int32_t> tok(size_t(N * k)), slot(size_t(N * k)), row_of(size_t(N * k));
  nn::moe_group_rows(sel.data(), N, E, k, counts.data(), offsets.data(), tok.data(), slot.data(), row_of.data());
  std::vector<int64_t> host_counts(size_t(E), -1);
  moe_counts_to_host(g.counts.as<int64_t>(), E, host_counts.data(), h.stream().get());
  rep.checks.push_back(compare_exact("counts", h.download<int64_t>(g.counts, size_t(E)), counts));
  rep.checks.push_back(compare_exact("counts on the host", host_counts, counts));
  rep.checks.push_back(compare_exact("offsets", h.download<int64_t>(g.offsets, size_t(E + 1)), offsets));
  rep.checks.push_back(compare_exact("order_tok", h.download<int32_t>(g.order_tok, size_t(N * k)), tok));
  rep.checks.push_back(compare_exact("order_slot", h.download<int32_t>(g.order_slot, size_t(N * k)), slot));
  rep.checks.push_back(compare_exact("row_of", h.download<int32_t>(g.row_of, size_t(N * k)), row_of));
}
}  // namespace

double moe_balance_loss_bound(int64_t B, int64_t T, int64_t E, double ref) {
  // positive terms only: each side's sums (T per P, E per A and per row, B sequences) are within
  // (T + 2E + B + 8) u_d of the exact value; twice that for the two sides, twice again for safety
  return 4.0 * double(T + 2 * E + B + 8) * kUd * std::fabs(ref);
}

std::vector<double> moe_route_backward_bound(const float* scores, const float* a, const int32_t* sel, const float* dw,
                                             const float* ref, int64_t N, int64_t E, int64_t k, float R, bool balance,
                                             int64_t B, int64_t T, double alpha) {
  // per element the magnitudes of its route term (R / S (|dw_j| + sum |dw a| / S) per slot choosing it) and balance
  // term (|coef| (fr_e + sum fr a / A)) through |sqrt_softplus_grad|, times 4 (2k + 6) u (first order: S and the dot
  // product k u each, the divisions, the difference, the product); plus 32 u of the result (the two sigmoids' exp)
  std::vector<double> bound(size_t(N * E));
  std::vector<double> fr(size_t(B * E), 0.0);
  if (balance)
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = 0; j < k; ++j) fr[size_t((i / T) * E + sel[i * k + j])] += double(E) / double(k * T);
  std::vector<double> m(static_cast<size_t>(E));
  for (int64_t i = 0; i < N; ++i) {
    const float* ai = a + i * E;
    double S = 0, sum_abs = 0;
    for (int64_t j = 0; j < k; ++j) {
      S += ai[sel[i * k + j]];
      sum_abs += std::fabs(double(dw[i * k + j]) * ai[sel[i * k + j]]);
    }
    std::fill(m.begin(), m.end(), 0.0);
    for (int64_t j = 0; j < k; ++j)
      m[size_t(sel[i * k + j])] += double(R) / S * (std::fabs(double(dw[i * k + j])) + sum_abs / S);
    if (balance) {
      const double* f = fr.data() + (i / T) * E;
      double A = 0, fpa = 0;
      for (int64_t e = 0; e < E; ++e) A += ai[e];
      for (int64_t e = 0; e < E; ++e) fpa += f[e] * ai[e] / A;
      const double coef = alpha / (double(B) * double(T) * A);
      for (int64_t e = 0; e < E; ++e) m[size_t(e)] += coef * (f[e] + fpa);
    }
    for (int64_t e = 0; e < E; ++e) {
      const double g = std::fabs(double(nn::sqrt_softplus_grad(scores[i * E + e], ai[e])));
      bound[size_t(i * E + e)] =
          32 * kU * std::fabs(double(ref[i * E + e])) + 4.0 * double(2 * k + 6) * kU * g * m[size_t(e)];
    }
  }
  return bound;
}

OpReport check_moe_route(Harness& h, int64_t B, int64_t T, int64_t E, int64_t k, bool hash, bool ties) {
  OpReport rep;
  rep.op = std::string("moe_route") + (hash ? "_hash" : "") + (ties ? "_ties" : "");
  rep.shape = dims({{"B", B}, {"T", T}, {"E", E}, {"k", k}});
  const int64_t N = B * T;
  const double alpha = 0.01;
  Rng rng(2400 + uint64_t(N * 31 + E * 7 + k) + (hash ? 1 : 0) + (ties ? 2 : 0));
  const RouteInputs in = draw_route_inputs(rng, N, E, k, hash, ties);
  DeviceRoute dr = upload_route(h, in, N, E, k);
  DeviceGroups dg(N, E, k);
  DeviceBuffer row_loss(size_t(B) * 8), seq_counts(size_t(B * E) * 4), a2(size_t(N * E) * 4),
      row_loss2(size_t(B) * 8);
  cudaStream_t st = h.stream().get();
  const auto forward = [&](float* a_out, double* loss_out) {
    moe_route_forward(dr.scores.as<float>(), hash ? nullptr : dr.bias.as<float>(),
                      hash ? dr.table.as<int64_t>() : nullptr, hash ? dr.tokens.as<int32_t>() : nullptr, N, E, k, kR,
                      a_out, dr.sel.as<int32_t>(), dr.w.as<float>(), st);
    dg.run(h, dr.sel.as<int32_t>(), N, E, k);
    if (!hash)
      moe_balance_loss(a_out, dr.sel.as<int32_t>(), B, T, E, k, alpha, loss_out, seq_counts.as<int32_t>(),
                       h.scratch(), st);
  };
  forward(dr.a.as<float>(), row_loss.as<double>());
  const std::vector<float> a = h.download<float>(dr.a, size_t(N * E));
  const std::vector<int32_t> sel = h.download<int32_t>(dr.sel, size_t(N * k));
  const std::vector<float> w = h.download<float>(dr.w, size_t(N * k));

  // affinities against the CPU's: expf and log1pf within a few ulps of glibc's, sqrt correctly rounded
  std::vector<float> a_cpu(size_t(N * E)), w_cpu(size_t(N * k));
  std::vector<int32_t> sel_cpu(size_t(N * k));
  nn::moe_route_forward(in.scores.data(), hash ? nullptr : in.bias.data(), hash ? in.table.data() : nullptr,
                        hash ? in.tokens.data() : nullptr, N, E, k, kR, a_cpu.data(), sel_cpu.data(), w_cpu.data());
  rep.checks.push_back(compare("a", a, a_cpu, 0.0, kMoeAffinityRtol));
  // everything after the affinities: the oracle from the device's own a, exactly
  std::vector<float> w_ref(size_t(N * k));
  std::vector<int32_t> sel_ref(size_t(N * k));
  nn::moe_route_select(a.data(), hash ? nullptr : in.bias.data(), hash ? in.table.data() : nullptr,
                       hash ? in.tokens.data() : nullptr, N, E, k, kR, sel_ref.data(), w_ref.data());
  rep.checks.push_back(compare_exact("sel", sel, sel_ref));
  rep.checks.push_back(compare_exact("w", w, w_ref));
  compare_groups(h, dg, sel, N, E, k, rep);
  if (!hash) {
    const double loss = sum_row_losses(row_loss.as<double>(), B, st);
    const double ref = nn::moe_balance_loss(a.data(), sel.data(), B, T, E, k, alpha);
    rep.checks.push_back(compare_double("balance loss", loss, ref, moe_balance_loss_bound(B, T, E, ref)));
    std::vector<int32_t> cnt(size_t(B * E), 0);
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = 0; j < k; ++j) ++cnt[size_t((i / T) * E + sel[size_t(i * k + j)])];
    rep.checks.push_back(compare_exact("seq_counts", h.download<int32_t>(seq_counts, size_t(B * E)), cnt));
  }
  // a second call: the same bits
  forward(a2.as<float>(), row_loss2.as<double>());
  rep.checks.push_back(compare_exact("a, second call", h.download<float>(a2, size_t(N * E)), a));
  if (!hash)
    rep.checks.push_back(compare_exact("row losses, second call", h.download<double>(row_loss2, size_t(B)),
                                       h.download<double>(row_loss, size_t(B))));
  if (h.perf()) {
    rep.ms = h.time_ms([&] { forward(dr.a.as<float>(), row_loss.as<double>()); });
    // scores read, a written (and read back by the balance loss), sel and w written, the grouping's reads of sel
    // and its three row arrays
    rep.bytes = 4.0 * double(N * E) * (hash ? 2 : 3) + 8.0 * double(N * k) + 4.0 * double(N * k) * (2 + 3);
  }
  return rep;
}

OpReport check_moe_dispatch(Harness& h, int64_t N, int64_t E, int64_t k, int64_t d) {
  OpReport rep;
  rep.op = "moe_dispatch";
  rep.shape = dims({{"N", N}, {"E", E}, {"k", k}, {"d", d}});
  Rng rng(2500 + uint64_t(N * 13 + E * 3 + k + d));
  std::vector<int32_t> sel(size_t(N * k));
  std::vector<int32_t> ids(static_cast<size_t>(E));
  for (int64_t i = 0; i < N; ++i) {  // k distinct experts per token, skewed towards the low ids (uneven groups)
    std::iota(ids.begin(), ids.end(), 0);
    for (int64_t j = 0; j < k; ++j) {
      const double u = rng.uniform();
      std::swap(ids[size_t(j)], ids[size_t(j + int64_t(double(E - 1 - j) * u * u))]);
      sel[size_t(i * k + j)] = ids[size_t(j)];
    }
  }
  const std::vector<float> x = uniform(rng, size_t(N * d), -1, 1), w = uniform(rng, size_t(N * k), 0, 1);
  const std::vector<float> rows = uniform(rng, size_t(N * k * d), -1e3, 1e3);  // magnitudes apart: order shows
  const std::vector<float> out0 = uniform(rng, size_t(N * d), -1e-3, 1e-3);
  DeviceBuffer gsel = h.upload(sel), gx = h.upload(x), gw = h.upload(w), grows = h.upload(rows),
               gout = h.upload(out0), gxg(size_t(N * k * d) * 4), gwl(size_t(N * k) * 4),
               gdy(size_t(N * k * d) * 4);
  DeviceGroups dg(N, E, k);
  cudaStream_t st = h.stream().get();
  dg.run(h, gsel.as<int32_t>(), N, E, k);
  compare_groups(h, dg, sel, N, E, k, rep);
  const int32_t *tok = dg.order_tok.as<int32_t>(), *slot = dg.order_slot.as<int32_t>();
  moe_gather_rows(gx.as<float>(), gw.as<float>(), tok, slot, N * k, k, d, gxg.as<float>(), gwl.as<float>(), st);
  moe_gather_rows(gx.as<float>(), nullptr, tok, slot, N * k, k, d, gdy.as<float>(), nullptr, st);
  moe_scatter_add_rows(dg.row_of.as<int32_t>(), N, k, d, grows.as<float>(), gout.as<float>(), st);

  std::vector<int64_t> counts(static_cast<size_t>(E)), offsets(size_t(E + 1));
  std::vector<int32_t> htok(size_t(N * k)), hslot(size_t(N * k)), hrow_of(size_t(N * k));
  nn::moe_group_rows(sel.data(), N, E, k, counts.data(), offsets.data(), htok.data(), hslot.data(), hrow_of.data());
  std::vector<float> xg(size_t(N * k * d)), wl(size_t(N * k)), out = out0;
  nn::moe_gather_rows(x.data(), w.data(), htok.data(), hslot.data(), N * k, k, d, xg.data(), wl.data());
  nn::moe_scatter_add_rows(hrow_of.data(), N, k, d, rows.data(), out.data());
  rep.checks.push_back(compare_exact("xg", h.download<float>(gxg, xg.size()), xg));
  rep.checks.push_back(compare_exact("wl", h.download<float>(gwl, wl.size()), wl));
  rep.checks.push_back(compare_exact("gather without weights", h.download<float>(gdy, xg.size()), xg));
  rep.checks.push_back(compare_exact("combine", h.download<float>(gout, out.size()), out));
  if (h.perf()) {
    rep.ms = h.time_ms([&] {
      moe_gather_rows(gx.as<float>(), gw.as<float>(), tok, slot, N * k, k, d, gxg.as<float>(), gwl.as<float>(), st);
      moe_scatter_add_rows(dg.row_of.as<int32_t>(), N, k, d, grows.as<float>(), gout.as<float>(), st);
    });
    // gather: N k rows read and written; combine: N k rows read, N token rows read and written
    rep.bytes = 4.0 * double(N * k * d) * 3 + 4.0 * double(N * d) * 2;
  }
  return rep;
}

OpReport check_moe_route_backward(Harness& h, int64_t B, int64_t T, int64_t E, int64_t k, bool hash) {
  OpReport rep;
  rep.op = std::string("moe_route_backward") + (hash ? "_hash" : "");
  rep.shape = dims({{"B", B}, {"T", T}, {"E", E}, {"k", k}});
  const int64_t N = B * T;
  const double alpha = 0.5;  // large: the balance term a visible part of ds
  Rng rng(2600 + uint64_t(N * 17 + E * 5 + k) + (hash ? 1 : 0));
  const RouteInputs in = draw_route_inputs(rng, N, E, k, hash, false);
  const std::vector<float> dw = randn(rng, size_t(N * k), 1.0);
  DeviceRoute dr = upload_route(h, in, N, E, k);
  DeviceGroups dg(N, E, k);
  DeviceBuffer row_loss(size_t(B) * 8), seq_counts(size_t(B * E) * 4), gdw = h.upload(dw),
      gdw_rows(size_t(N * k) * 4), gds(size_t(N * E) * 4), gds_rows(size_t(N * E) * 4), gds2(size_t(N * E) * 4);
  cudaStream_t st = h.stream().get();
  dr.run(h, N, E, k);
  dg.run(h, dr.sel.as<int32_t>(), N, E, k);
  if (!hash)
    moe_balance_loss(dr.a.as<float>(), dr.sel.as<int32_t>(), B, T, E, k, alpha, row_loss.as<double>(),
                     seq_counts.as<int32_t>(), h.scratch(), st);
  const int32_t* cnt_dev = hash ? nullptr : seq_counts.as<int32_t>();
  const auto backward = [&](const float* dwp, const int32_t* row_of, float* ds) {
    moe_route_backward(dr.scores.as<float>(), dr.a.as<float>(), dr.sel.as<int32_t>(), dwp, row_of, cnt_dev, N, E, k,
                       kR, B, T, alpha, ds, st);
  };
  backward(gdw.as<float>(), nullptr, gds.as<float>());
  const std::vector<float> a = h.download<float>(dr.a, size_t(N * E));
  const std::vector<int32_t> sel = h.download<int32_t>(dr.sel, size_t(N * k));
  const std::vector<int32_t> row_of = h.download<int32_t>(dg.row_of, size_t(N * k));
  // the same gradients laid out in expert order, read through row_of
  std::vector<float> dw_rows(size_t(N * k));
  for (int64_t i = 0; i < N * k; ++i) dw_rows[size_t(row_of[size_t(i)])] = dw[size_t(i)];
  gdw_rows.upload(dw_rows.data(), dw_rows.size() * 4);
  backward(gdw_rows.as<float>(), dg.row_of.as<int32_t>(), gds_rows.as<float>());
  backward(gdw.as<float>(), nullptr, gds2.as<float>());
  const std::vector<float> ds = h.download<float>(gds, size_t(N * E));

  std::vector<float> ref(size_t(N * E));
  nn::moe_route_backward(in.scores.data(), a.data(), sel.data(), dw.data(), N, E, k, kR, !hash, B, T, alpha,
                         ref.data());
  const std::vector<double> bound = moe_route_backward_bound(in.scores.data(), a.data(), sel.data(), dw.data(),
                                                            ref.data(), N, E, k, kR, !hash, B, T, alpha);
  rep.checks.push_back(compare_bound("ds", ds, ref, bound));
  rep.checks.push_back(compare_exact("ds from expert-order dw", h.download<float>(gds_rows, ds.size()), ds));
  rep.checks.push_back(compare_exact("ds, second call", h.download<float>(gds2, ds.size()), ds));
  if (h.perf()) {
    rep.ms = h.time_ms([&] { backward(gdw_rows.as<float>(), dg.row_of.as<int32_t>(), gds.as<float>()); });
    // scores and a read, ds written; sel, row_of and dw read
    rep.bytes = 4.0 * double(N * E) * 3 + 12.0 * double(N * k);
  }
  return rep;
}

}  // namespace trex::cuda::check
