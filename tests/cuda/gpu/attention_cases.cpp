// The attention-core op check (attention_cases.hpp): cuda::sparse_attention_* against nn::sparse_attention_*_ref.
#include "attention_cases.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>

#include "cuda/sparse_attention.hpp"
#include "nn/sparse_attention.hpp"

namespace trex::cuda::check {

namespace {
constexpr double kU = 1.0 / 16777216.0;  // 2^-24, fp32 unit roundoff

struct Batch {
  int64_t N = 0, H = 0, hd = 0, window = 0, NE = 0, cmax = 0;
  std::vector<float> q, kv, C, sink, g;
  std::vector<int32_t> ws, comp, ncomp;
  float scale = 1;
  nn::SparseAttention host(int64_t queries) const {  // the first `queries` queries (a prefix is its own problem)
    nn::SparseAttention a;
    a.N = queries, a.H = H, a.hd = hd, a.window = window, a.NE = NE, a.cmax = cmax;
    a.q = q.data(), a.kv = kv.data(), a.C = C.empty() ? nullptr : C.data();
    a.ws = ws.data(), a.comp = comp.data(), a.ncomp = ncomp.data(), a.sink = sink.data(), a.scale = scale;
    return a;
  }
  int64_t keys(int64_t i) const { return i - ws[size_t(i)] + 1 + ncomp[size_t(i)]; }
  const float* key(int64_t i, int64_t e) const {
    const int64_t nw = i - ws[size_t(i)] + 1;
    return e < nw ? kv.data() + (ws[size_t(i)] + e) * hd : C.data() + int64_t(comp[size_t(i * cmax + e - nw)]) * hd;
  }
};

Batch make_batch(int64_t N, int64_t H, int64_t hd, int64_t window, AttnLists lists, int64_t ratio, int64_t topk,
                 std::vector<int64_t> starts) {
  Rng rng(700 + uint64_t(N * 3 + H * 5 + hd * 7 + window) + uint64_t(lists) * 11);
  Batch b;
  b.N = N, b.H = H, b.hd = hd, b.window = window, b.scale = float(1.0 / std::sqrt(double(hd)));
  starts.push_back(N);
  std::vector<int32_t> base(static_cast<size_t>(N)), nvis(static_cast<size_t>(N));
  int64_t NE = 0;
  for (size_t d = 0; d + 1 < starts.size(); ++d) {
    for (int64_t i = starts[d]; i < starts[d + 1]; ++i) {
      b.ws.push_back(int32_t(std::max<int64_t>(starts[d], i - window + 1)));
      base[size_t(i)] = int32_t(NE);
      nvis[size_t(i)] = ratio > 0 ? int32_t((i - starts[d] + 1) / ratio) : 0;
    }
    if (ratio > 0) NE += (starts[d + 1] - starts[d]) / ratio;
  }
  b.ncomp.assign(size_t(N), 0);
  if (lists != AttnLists::none) {
    b.NE = NE;
    b.cmax = lists == AttnLists::all_visible ? *std::max_element(nvis.begin(), nvis.end()) : topk;
    b.comp.assign(size_t(std::max<int64_t>(1, N * b.cmax)), -7);  // past ncomp: garbage, never read
    std::vector<int32_t> vis, sel;
    for (int64_t i = 0; i < N; ++i) {
      int32_t* c = b.comp.data() + i * b.cmax;
      const int32_t nv = nvis[size_t(i)];
      vis.resize(size_t(nv));
      for (int32_t e = 0; e < nv; ++e) vis[size_t(e)] = base[size_t(i)] + e;
      if (lists == AttnLists::all_visible) {
        for (int32_t e : vis) c[b.ncomp[size_t(i)]++] = e;
      } else {  // the indexer's top-k in selection order, -1 past min(topk, nv), compacted as the model does
        for (int32_t t = 0; t < std::min<int32_t>(nv, int32_t(topk)); ++t)  // a partial Fisher-Yates draw
          std::swap(vis[size_t(t)], vis[size_t(rng.uniform_int(t, nv - 1))]);
        sel.assign(size_t(topk), -1);
        for (int64_t t = 0; t < std::min<int64_t>(topk, nv); ++t) sel[size_t(t)] = vis[size_t(t)];
        for (int32_t e : sel)
          if (e >= 0) c[b.ncomp[size_t(i)]++] = e;
      }
    }
  } else {
    b.comp.assign(1, 0);
  }
  b.q = randn(rng, size_t(N * H * hd), 1.5);  // logits of spread ~1.5: the softmax neither flat nor one-hot
  b.kv = randn(rng, size_t(N * hd));
  if (b.NE > 0) b.C = randn(rng, size_t(b.NE * hd));
  b.sink = randn(rng, size_t(H));
  b.g = randn(rng, size_t(N * H * hd));
  return b;
}

std::string dims(const Batch& b, AttnLists lists, size_t docs) {
  static const char* names[] = {"swa", "all-visible", "subsets"};
  return "N=" + std::to_string(b.N) + " H=" + std::to_string(b.H) + " hd=" + std::to_string(b.hd) +
         " w=" + std::to_string(b.window) + " NE=" + std::to_string(b.NE) + " cmax=" + std::to_string(b.cmax) +
         " lists=" + names[int(lists)] + " docs=" + std::to_string(docs);
}

}  // namespace

OpReport check_sparse_attention(Harness& h, int64_t N, int64_t H, int64_t hd, int64_t window, AttnLists lists,
                                int64_t ratio, int64_t topk, const std::vector<int64_t>& doc_starts,
                                int64_t ref_queries) {
  OpReport rep;
  rep.op = "sparse_attention";
  const Batch b = make_batch(N, H, hd, window, lists, ratio, topk, doc_starts);
  rep.shape = dims(b, lists, doc_starts.size());
  const int64_t kmax = b.window + b.cmax, NE = b.NE;
  const int64_t Nq = ref_queries > 0 ? std::min(ref_queries, N) : N;  // queries the reference covers
  const bool full = Nq == N;

  DeviceBuffer gq = h.upload(b.q), gkv = h.upload(b.kv), gsink = h.upload(b.sink), gg = h.upload(b.g);
  DeviceBuffer gws = h.upload(b.ws), gcomp = h.upload(b.comp), gncomp = h.upload(b.ncomp);
  DeviceBuffer gC = h.upload(NE > 0 ? b.C : std::vector<float>(1, 0.0f));
  DeviceBuffer gP(size_t(N * H * kmax) * 4), go(size_t(N * H * hd) * 4), gdq(size_t(N * H * hd) * 4),
      gdkv(size_t(N * hd) * 4), gdC(size_t(std::max<int64_t>(1, NE * hd)) * 4), gdsink(size_t(H) * 4);
  DeviceSparseAttention a;
  a.N = N, a.H = H, a.hd = hd, a.window = window, a.NE = NE, a.cmax = b.cmax;
  a.q = gq.as<float>(), a.kv = gkv.as<float>(), a.C = NE > 0 ? gC.as<float>() : nullptr;
  a.ws = gws.as<int32_t>(), a.comp = gcomp.as<int32_t>(), a.ncomp = gncomp.as<int32_t>();
  a.sink = gsink.as<float>(), a.scale = b.scale;
  // the backward's scratch: the harness's arena, or one of its own at the perf shapes (over a GB there)
  const size_t need = sparse_attention_backward_scratch_bytes(a);
  std::unique_ptr<DeviceArena> own;
  if (h.scratch().capacity() - h.scratch().used_bytes() < need + DeviceArena::kAlign)
    own = std::make_unique<DeviceArena>(need + DeviceArena::kAlign, "attention check scratch");
  DeviceArena& scratch = own ? *own : h.scratch();
  auto run = [&] {
    sparse_attention_forward(a, gP.as<float>(), go.as<float>(), h.stream());
    sparse_attention_backward(a, gP.as<float>(), go.as<float>(), gg.as<float>(), gdq.as<float>(), gdkv.as<float>(),
                              gdC.as<float>(), gdsink.as<float>(), scratch, h.stream());
  };
  run();
  const std::vector<float> P = h.download<float>(gP, size_t(N * H * kmax)), o = h.download<float>(go, size_t(N * H * hd));
  const std::vector<float> dq = h.download<float>(gdq, size_t(N * H * hd)), dkv = h.download<float>(gdkv, size_t(N * hd));
  const std::vector<float> dC = h.download<float>(gdC, size_t(NE * hd)), dsink = h.download<float>(gdsink, size_t(H));

  // Forward against the reference. Per (i, h): A = scale max_e Σ|q||k|; the fp32 logits are within hd u Σ|q||k|
  // scale (+ u |l|), expf within 2 ulp, the sum over nk keys within nk u: P's relative error
  // relP = u (2 hd A + 2 A + nk + 8) (two logits: the key's and the max's). o_j = Σ_e P_e k_ej in fp32 over nk
  // terms: (relP + nk u) Σ_e P_e |k_ej|. Both ×2.
  const nn::SparseAttention ha = b.host(Nq);
  std::vector<float> rP(size_t(Nq * H * kmax), 0.0f), ro(size_t(Nq * H * hd));
  nn::sparse_attention_forward_ref(ha, rP.data(), ro.data());
  std::vector<float> gotP, refP, goto_, refo;
  std::vector<double> bP, bo, mo(static_cast<size_t>(hd));
  for (int64_t i = 0; i < Nq; ++i) {
    const int64_t nk = b.keys(i);
    for (int64_t hh = 0; hh < H; ++hh) {
      const float* qh = b.q.data() + (i * H + hh) * hd;
      double A = 0;
      for (int64_t e = 0; e < nk; ++e) {
        const float* k = b.key(i, e);
        double s = 0;
        for (int64_t j = 0; j < hd; ++j) s += std::fabs(double(qh[j]) * k[j]);
        A = std::max(A, double(b.scale) * s);
      }
      const double relP = kU * (2.0 * double(hd) * A + 2.0 * A + double(nk) + 8.0);
      std::fill(mo.begin(), mo.end(), 0.0);
      for (int64_t e = 0; e < nk; ++e) {
        const size_t ip = size_t((i * H + hh) * kmax + e);
        gotP.push_back(P[ip]);
        refP.push_back(rP[ip]);
        bP.push_back(2.0 * relP * std::fabs(double(rP[ip])) + 1e-30);
        const float* k = b.key(i, e);
        for (int64_t j = 0; j < hd; ++j) mo[size_t(j)] += std::fabs(double(rP[ip]) * k[j]);
      }
      for (int64_t j = 0; j < hd; ++j) {
        const size_t io = size_t((i * H + hh) * hd + j);
        goto_.push_back(o[io]);
        refo.push_back(ro[io]);
        bo.push_back(2.0 * (relP + double(nk + 8) * kU) * mo[size_t(j)] + 1e-30);
      }
    }
  }
  rep.checks.push_back(compare_bound("P (the written entries)", gotP, refP, bP));
  rep.checks.push_back(compare_bound("o", goto_, refo, bo));

  // Backward: the reference from the device's own P and o. Per (i, h, e) D = P scale (Σ|g||k| + Σ|g||o|) bounds
  // |dl| and (hd + 2) u D its error (the two fp32 dots); then every gradient is an fp32 sum of n terms:
  //   dq_j   over the nk keys:            2 (hd + nk + 8) u Σ_e D |k_ej|
  //   dk_j   over its n (query, head)s:   2 (hd + n + 8) u Σ (D |q_j| + P |g_j|)
  //   dsink  over the N queries:          2 (hd + kmax + N + 8) u Σ_i (1 + Σ_e P) Σ|g||o|
  std::vector<float> rdq(size_t(Nq * H * hd)), rdkv(size_t(Nq * hd)), rdC(size_t(NE * hd)), rds(static_cast<size_t>(H));
  nn::sparse_attention_backward_ref(ha, P.data(), o.data(), b.g.data(), rdq.data(), rdkv.data(), rdC.data(),
                                    rds.data());
  std::vector<double> bdq(rdq.size()), mkv(rdkv.size(), 0.0), mC(rdC.size(), 0.0), ms(static_cast<size_t>(H), 0.0);
  std::vector<int64_t> nkv(static_cast<size_t>(Nq), 0), nC(static_cast<size_t>(NE), 0);
  std::vector<double> mq(static_cast<size_t>(hd));
  for (int64_t i = 0; i < Nq; ++i) {
    const int64_t nk = b.keys(i), nw = i - b.ws[size_t(i)] + 1;
    for (int64_t hh = 0; hh < H; ++hh) {
      const float* qh = b.q.data() + (i * H + hh) * hd;
      const float* gh = b.g.data() + (i * H + hh) * hd;
      const float* oh = o.data() + (i * H + hh) * hd;
      double Go = 0, psum = 0;
      for (int64_t j = 0; j < hd; ++j) Go += std::fabs(double(gh[j]) * oh[j]);
      std::fill(mq.begin(), mq.end(), 0.0);
      for (int64_t e = 0; e < nk; ++e) {
        const float* k = b.key(i, e);
        const double p = P[size_t((i * H + hh) * kmax + e)];
        psum += p;
        double Gk = 0;
        for (int64_t j = 0; j < hd; ++j) Gk += std::fabs(double(gh[j]) * k[j]);
        const double D = p * double(b.scale) * (Gk + Go);
        const bool win = e < nw;
        const int64_t row = win ? b.ws[size_t(i)] + e : b.comp[size_t(i * b.cmax + e - nw)];
        double* mk = win ? &mkv[size_t(row * hd)] : &mC[size_t(row * hd)];
        ++(win ? nkv[size_t(row)] : nC[size_t(row)]);
        for (int64_t j = 0; j < hd; ++j) {
          mq[size_t(j)] += D * std::fabs(double(k[j]));
          mk[j] += D * std::fabs(double(qh[j])) + p * std::fabs(double(gh[j]));
        }
      }
      for (int64_t j = 0; j < hd; ++j) bdq[size_t((i * H + hh) * hd + j)] = 2.0 * double(hd + nk + 8) * kU * mq[size_t(j)] + 1e-30;
      ms[size_t(hh)] += (1.0 + psum) * Go;
    }
  }
  rep.checks.push_back(compare_bound("dq", std::vector<float>(dq.begin(), dq.begin() + long(rdq.size())), rdq, bdq));
  if (full) {
    std::vector<double> bkv(rdkv.size()), bC(rdC.size()), bs(static_cast<size_t>(H));
    for (size_t x = 0; x < bkv.size(); ++x)
      bkv[x] = 2.0 * double(hd + nkv[x / size_t(hd)] + 8) * kU * mkv[x] + 1e-30;
    for (size_t x = 0; x < bC.size(); ++x) bC[x] = 2.0 * double(hd + nC[x / size_t(hd)] + 8) * kU * mC[x] + 1e-30;
    for (int64_t hh = 0; hh < H; ++hh) bs[size_t(hh)] = 2.0 * double(hd + kmax + N + 8) * kU * ms[size_t(hh)] + 1e-30;
    rep.checks.push_back(compare_bound("dkv", dkv, rdkv, bkv));
    if (NE > 0) rep.checks.push_back(compare_bound("dC (unlisted entries exactly 0)", dC, rdC, bC));
    rep.checks.push_back(compare_bound("dsink", dsink, rds, bs));
  }
  // a second call: the same bits everywhere (no atomics; fixed orders)
  run();
  rep.checks.push_back(compare_bitwise("P", P, h.download<float>(gP, P.size())));
  rep.checks.push_back(compare_bitwise("o", o, h.download<float>(go, o.size())));
  rep.checks.push_back(compare_bitwise("dq", dq, h.download<float>(gdq, dq.size())));
  rep.checks.push_back(compare_bitwise("dkv", dkv, h.download<float>(gdkv, dkv.size())));
  if (NE > 0) rep.checks.push_back(compare_bitwise("dC", dC, h.download<float>(gdC, dC.size())));
  rep.checks.push_back(compare_bitwise("dsink", dsink, h.download<float>(gdsink, dsink.size())));
  if (h.perf()) {
    rep.ms = h.time_ms(run);  // forward + backward
    int64_t keys = 0;
    for (int64_t i = 0; i < N; ++i) keys += b.keys(i);
    // per (query, head, key): logit 2 hd, o 2 hd; backward g·k 2 hd, dq 2 hd, dk 4 hd
    rep.flops = 12.0 * double(H) * double(hd) * double(keys);
    // at least: q, o (written, read), g, dq; kv and C read twice and their gradients written; P written and read
    rep.bytes = 4.0 * (6.0 * double(N * H * hd) + 3.0 * double((N + NE) * hd) + 2.0 * double(H) * double(keys));
  }
  return rep;
}

}  // namespace trex::cuda::check
