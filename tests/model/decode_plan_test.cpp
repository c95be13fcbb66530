// model::plan_decode_step (decode_plan.hpp), the lists the GPU decoder runs on, checked without a device: its
// recipe is replayed here on host pools with the CPU references the device kernels are checked against
// (nn::compressor_pool_forward_ref, nn::indexer_scores_ref, nn::topk_lower_index, nn::sparse_attention_forward_ref),
// and every row's attention output is compared with the definition computed from whole sequences (window keys,
// every complete block pooled, the indexer's top-k over the entries complete by the row's position). Sequences in
// arbitrary slots, prefill chunks longer than the window and the compressor rings, ragged multi-sequence steps,
// batched single tokens, and a slot reused by a new sequence.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

#include "model/decode_plan.hpp"
#include "nn/compressor_pool.hpp"
#include "nn/indexer.hpp"
#include "nn/ops.hpp"
#include "nn/sparse_attention.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"

using namespace trex;
using namespace trex::model;

namespace {

constexpr int64_t kHd = 8, kH = 2, kCI = 4, kHI = 2;

ModelConfig plan_config() {
  ModelConfig cfg = ModelConfig::preset("tiny");
  cfg.num_hidden_layers = 3;
  cfg.compress_ratios = {0, 4, 5, 0};  // SWA, CSA (m 4), HCA (m 5); the MTP block's
  cfg.sliding_window = 6;
  cfg.index_topk = 3;
  return cfg;
}

// The per-position inputs of one layer kind: a deterministic function of (what, sequence, position).
std::vector<float> row(int what, int64_t seq, int64_t p, int64_t dim) {
  Rng r(uint64_t(1000003 * what + 7919 * seq + p + 1));
  std::vector<float> v(static_cast<size_t>(dim));
  for (auto& x : v) x = float(r.normal());
  return v;
}
enum What { kQ, kKV, kC, kZ, kCi, kZi, kQI, kLam, kSinkSeed };

const nn::RopeTable& rope() {
  static const nn::RopeTable t = nn::make_rope_table(4, 256, 10000.0, false, 1, 1, 1, 1);
  return t;
}

// Entry b of a whole sequence `seq` (C, Z rows what_c / what_z of width W): nn::compressor_pool_forward_ref over
// the block's rows as the training layout has them, then RoPE at b m.
std::vector<float> direct_entry(int what_c, int what_z, int64_t seq, int64_t b, int64_t m, int64_t cdim, bool overlap) {
  const int64_t W = (overlap ? 2 : 1) * cdim, T = (b + 1) * m;
  std::vector<float> Cx(size_t(T * W)), Zx(size_t(T * W));
  for (int64_t t = 0; t < T; ++t) {
    auto c = row(what_c, seq, t, W), z = row(what_z, seq, t, W);
    std::copy(c.begin(), c.end(), Cx.begin() + t * W);
    std::copy(z.begin(), z.end(), Zx.begin() + t * W);
  }
  const int32_t start = int32_t(b * m), idx = int32_t(b);
  nn::CompressorPool pp;
  pp.N = T;
  pp.NE = 1;
  pp.m = m;
  pp.cdim = cdim;
  pp.overlap = overlap;
  pp.start = &start;
  pp.idx = &idx;
  std::vector<float> S(size_t(pp.slots() * cdim)), pooled(static_cast<size_t>(cdim));
  nn::compressor_pool_forward_ref(pp, Cx.data(), Zx.data(), nullptr, S.data(), pooled.data());
  const int32_t epos = int32_t(b * m);
  nn::rope_apply(pooled.data(), 1, 1, cdim, &epos, rope(), false);
  return pooled;
}

// The definition: row (seq, p)'s attention output [H, hd] for a layer of ratio m (0: SWA).
std::vector<float> direct_attention(const ModelConfig& cfg, int64_t seq, int64_t p, int64_t m) {
  const int64_t w = cfg.sliding_window;
  std::vector<std::vector<float>> keys;
  for (int64_t t = std::max<int64_t>(0, p - w + 1); t <= p; ++t) keys.push_back(row(kKV, seq, t, kHd));
  const int64_t nv = m ? (p + 1) / m : 0;
  if (m == 4) {  // CSA: the indexer's top-k of the visible entries
    std::vector<float> I(size_t(std::max<int64_t>(nv, 1)));
    const auto qI = row(kQI, seq, p, kHI * kCI), lam = row(kLam, seq, p, kHI);
    for (int64_t e = 0; e < nv; ++e) {
      const auto K = direct_entry(kCi, kZi, seq, e, m, kCI, true);
      double acc = 0;
      for (int64_t h = 0; h < kHI; ++h) {
        double dot = 0;
        for (int64_t j = 0; j < kCI; ++j) dot += double(qI[size_t(h * kCI + j)]) * K[size_t(j)];
        acc += lam[size_t(h)] * std::max(dot, 0.0);
      }
      I[size_t(e)] = float(acc);
    }
    const int64_t kt = std::min<int64_t>(cfg.index_topk, nv);
    std::vector<int32_t> sel(size_t(std::max<int64_t>(kt, 1)));
    if (kt > 0) nn::topk_lower_index(I.data(), nv, kt, sel.data());
    for (int64_t j = 0; j < kt; ++j) keys.push_back(direct_entry(kC, kZ, seq, sel[size_t(j)], m, kHd, true));
  } else if (m != 0) {
    for (int64_t e = 0; e < nv; ++e) keys.push_back(direct_entry(kC, kZ, seq, e, m, kHd, false));
  }
  const auto q = row(kQ, seq, p, kH * kHd), sink = row(kSinkSeed, 0, 0, kH);
  const double scale = 1.0 / std::sqrt(double(kHd));
  std::vector<float> o(size_t(kH * kHd), 0.0f);
  for (int64_t h = 0; h < kH; ++h) {
    std::vector<double> l(keys.size());
    double mx = sink[size_t(h)];
    for (size_t e = 0; e < keys.size(); ++e) {
      double dot = 0;
      for (int64_t j = 0; j < kHd; ++j) dot += double(q[size_t(h * kHd + j)]) * keys[e][size_t(j)];
      l[e] = dot * scale;
      mx = std::max(mx, l[e]);
    }
    double sum = std::exp(sink[size_t(h)] - mx);
    for (auto& x : l) sum += (x = std::exp(x - mx));
    for (size_t e = 0; e < keys.size(); ++e)
      for (int64_t j = 0; j < kHd; ++j) o[size_t(h * kHd + j)] += float(l[e] / sum * keys[e][size_t(j)]);
  }
  return o;
}

// The decoder's host pools of one layer kind and the plan's recipe over them.
struct ReplayLayer {
  int64_t m = 0;
  bool csa = false;
  std::vector<float> keys, C, Z, Ci, Zi, index;
  ReplayLayer(const DecodeLayout& L, int64_t m_, bool csa_) : m(m_), csa(csa_) {
    keys.assign(size_t(L.key_rows(m) * kHd), NAN);  // never-written rows poison any read of them
    if (m) {
      const int64_t W = (csa ? 2 : 1) * kHd;
      C.assign(size_t(L.compressor_rows(m) * W), NAN);
      Z.assign(C.size(), NAN);
    }
    if (csa) {
      Ci.assign(size_t(L.compressor_rows(m) * 2 * kCI), NAN);
      Zi.assign(Ci.size(), NAN);
      index.assign(size_t(L.index_rows(m) * kCI), NAN);
    }
  }
};

void copy_row(const std::vector<float>& src, int64_t s, std::vector<float>& dst, int64_t d, int64_t width) {
  std::copy(src.begin() + s * width, src.begin() + (s + 1) * width, dst.begin() + d * width);
}

// The entries a compressor plan completes: gathered, pooled, rotated, written to `dst` rows of `pool`.
void replay_entries(const DecodeCompressorPlan& cp, const std::vector<float>& C, const std::vector<float>& Z,
                    int64_t cdim, const std::vector<int32_t>& dst_rows, std::vector<float>& pool) {
  if (cp.NE == 0) return;
  const int64_t W = (cp.overlap ? 2 : 1) * cdim, n = cp.NE * cp.slots();
  std::vector<float> Cg(size_t(n * W)), Zg(size_t(n * W));
  for (int64_t i = 0; i < n; ++i) {
    copy_row(C, cp.gather[size_t(i)], Cg, i, W);
    copy_row(Z, cp.gather[size_t(i)], Zg, i, W);
  }
  nn::CompressorPool pp;
  pp.N = n;
  pp.NE = cp.NE;
  pp.m = cp.m;
  pp.cdim = cdim;
  pp.overlap = cp.overlap;
  pp.start = cp.start.data();
  pp.idx = cp.idx.data();
  std::vector<float> S(size_t(cp.NE * cp.slots() * cdim)), pooled(size_t(cp.NE * cdim));
  nn::compressor_pool_forward_ref(pp, Cg.data(), Zg.data(), nullptr, S.data(), pooled.data());
  nn::rope_apply(pooled.data(), cp.NE, 1, cdim, cp.epos.data(), rope(), false);
  for (int64_t j = 0; j < cp.NE; ++j) copy_row(pooled, j, pool, dst_rows[size_t(j)], cdim);
}

// One step of one layer kind: the rows' attention outputs [R, H, hd].
std::vector<float> replay_step(const ModelConfig& cfg, const DecodeLayout& L, const DecodePlan& P,
                               const std::vector<int64_t>& row_seq, ReplayLayer& Ly) {
  const int64_t R = P.R;
  for (int64_t r = 0; r < R; ++r) {
    const int64_t s = row_seq[size_t(r)], p = P.pos[size_t(r)];
    copy_row(row(kKV, s, p, kHd), 0, Ly.keys, r, kHd);
    if (Ly.m) {
      const int64_t W = (Ly.csa ? 2 : 1) * kHd;
      copy_row(row(kC, s, p, W), 0, Ly.C, r, W);
      copy_row(row(kZ, s, p, W), 0, Ly.Z, r, W);
    }
    if (Ly.csa) {
      copy_row(row(kCi, s, p, 2 * kCI), 0, Ly.Ci, r, 2 * kCI);
      copy_row(row(kZi, s, p, 2 * kCI), 0, Ly.Zi, r, 2 * kCI);
    }
  }
  std::vector<int32_t> comp = P.comp, ncomp = P.ncomp;
  int64_t cmax = P.cmax;
  if (Ly.m) {
    const DecodeCompressorPlan& cp = P.compressor(Ly.m, Ly.csa);
    replay_entries(cp, Ly.C, Ly.Z, kHd, cp.key_dst, Ly.keys);
    const int64_t W = (Ly.csa ? 2 : 1) * kHd;
    for (size_t i = 0; i < cp.ring_src.size(); ++i) {  // the rings after the gather
      copy_row(Ly.C, cp.ring_src[i], Ly.C, cp.ring_dst[i], W);
      copy_row(Ly.Z, cp.ring_src[i], Ly.Z, cp.ring_dst[i], W);
    }
    comp = cp.comp;
    ncomp = cp.ncomp;
    cmax = cp.cmax;
    if (Ly.csa) {
      replay_entries(cp, Ly.Ci, Ly.Zi, kCI, cp.index_dst, Ly.index);
      for (size_t i = 0; i < cp.ring_src.size(); ++i) {
        copy_row(Ly.Ci, cp.ring_src[i], Ly.Ci, cp.ring_dst[i], 2 * kCI);
        copy_row(Ly.Zi, cp.ring_src[i], Ly.Zi, cp.ring_dst[i], 2 * kCI);
      }
      std::vector<float> qI(size_t(R * kHI * kCI)), lam(size_t(R * kHI));
      for (int64_t r = 0; r < R; ++r) {
        copy_row(row(kQI, row_seq[size_t(r)], P.pos[size_t(r)], kHI * kCI), 0, qI, r, kHI * kCI);
        copy_row(row(kLam, row_seq[size_t(r)], P.pos[size_t(r)], kHI), 0, lam, r, kHI);
      }
      nn::Indexer ix;
      ix.N = R;
      ix.HI = kHI;
      ix.cI = kCI;
      ix.NE = L.index_rows(Ly.m);
      ix.smax = std::max<int64_t>(1, cp.max_nvis);
      ix.nvis = cp.nvis.data();
      ix.base = cp.index_base.data();
      ix.qI = qI.data();
      ix.lam = lam.data();
      ix.K = Ly.index.data();
      std::vector<float> scores(size_t(R * ix.smax));
      nn::indexer_scores_ref(ix, scores.data());
      const int64_t k = cfg.index_topk;
      for (int64_t r = 0; r < R; ++r) {  // the device's topk_rows with base key_base, then the append
        const int64_t nv = cp.nvis[size_t(r)], kt = std::min(k, nv);
        std::vector<int32_t> sel(size_t(std::max<int64_t>(kt, 1)));
        if (kt > 0) nn::topk_lower_index(scores.data() + r * ix.smax, nv, kt, sel.data());
        for (int64_t j = 0; j < kt; ++j)
          comp[size_t(r * cmax + P.nold[size_t(r)] + j)] = cp.key_base[size_t(r)] + sel[size_t(j)];
      }
    }
  }
  std::vector<float> q(size_t(R * kH * kHd));
  for (int64_t r = 0; r < R; ++r) copy_row(row(kQ, row_seq[size_t(r)], P.pos[size_t(r)], kH * kHd), 0, q, r, kH * kHd);
  const auto sink = row(kSinkSeed, 0, 0, kH);
  nn::SparseAttention a;
  a.N = R;
  a.H = kH;
  a.hd = kHd;
  a.window = L.w;
  a.NE = L.key_rows(Ly.m);
  a.cmax = cmax;
  a.q = q.data();
  a.kv = Ly.keys.data();
  a.C = Ly.keys.data();
  a.ws = P.ws.data();
  a.comp = comp.data();
  a.ncomp = ncomp.data();
  a.sink = sink.data();
  a.scale = float(1.0 / std::sqrt(double(kHd)));
  std::vector<float> Pm(size_t(R * kH * a.kmax())), o(size_t(R * kH * kHd));
  nn::sparse_attention_forward_ref(a, Pm.data(), o.data());
  for (size_t i = 0; i < P.ring_src.size(); ++i) copy_row(Ly.keys, P.ring_src[i], Ly.keys, P.ring_dst[i], kHd);
  return o;
}

TEST(DecodePlan, ReplayedOnHostPoolsGivesEveryRowsAttention) {
  const ModelConfig cfg = plan_config();
  const DecodeLayout L(DecodeCapacity{4, 64, 40}, cfg.sliding_window);
  std::vector<ReplayLayer> layers = {ReplayLayer(L, 0, false), ReplayLayer(L, 4, true), ReplayLayer(L, 5, false)};
  // sequence id -> (slot, length); a step lists (sequence id, new tokens)
  std::map<int64_t, std::pair<int64_t, int64_t>> live = {{0, {2, 0}}, {1, {0, 0}}, {2, {3, 0}}};
  std::vector<std::vector<std::pair<int64_t, int64_t>>> steps = {
      {{0, 13}}, {{1, 1}, {0, 1}}, {{0, 9}, {1, 20}, {2, 3}}};
  for (int i = 0; i < 10; ++i) steps.push_back({{2, 1}, {0, 1}, {1, 1}});
  steps.push_back({{0, 7}});
  steps.push_back({{3, 11}, {2, 1}});  // sequence 3 takes sequence 1's slot 0 (released below), from length 0
  steps.push_back({{3, 1}, {2, 1}, {0, 1}});
  int64_t checked = 0, completed_entries = 0;
  for (size_t st = 0; st < steps.size(); ++st) {
    if (st == steps.size() - 2) {
      live.erase(1);
      live[3] = {0, 0};
    }
    std::vector<DecodeSequenceStep> seqs;
    std::vector<int64_t> row_seq;
    for (auto [id, n] : steps[st]) {
      seqs.push_back({live[id].first, live[id].second, n});
      for (int64_t j = 0; j < n; ++j) row_seq.push_back(id);
    }
    const DecodePlan P = plan_decode_step(cfg, L, seqs);
    ASSERT_EQ(P.R, int64_t(row_seq.size()));
    completed_entries += P.compressor(5, false).NE;
    for (auto& Ly : layers) {
      const auto o = replay_step(cfg, L, P, row_seq, Ly);
      for (int64_t r = 0; r < P.R; ++r) {
        const auto ref = direct_attention(cfg, row_seq[size_t(r)], P.pos[size_t(r)], Ly.m);
        for (int64_t j = 0; j < kH * kHd; ++j)
          ASSERT_NEAR(o[size_t(r * kH * kHd + j)], ref[size_t(j)], 2e-5)
              << "step " << st << " ratio " << Ly.m << " sequence " << row_seq[size_t(r)] << " position "
              << P.pos[size_t(r)];
        ++checked;
      }
    }
    for (auto [id, n] : steps[st]) live[id].second += n;
  }
  EXPECT_EQ(checked, 3 * (13 + 2 + 32 + 30 + 7 + 12 + 3));
  EXPECT_GT(completed_entries, 10);
}

TEST(DecodePlan, RefusesStepsBeyondItsCapacityNamingTheLimit) {
  const ModelConfig cfg = plan_config();
  const DecodeLayout L(DecodeCapacity{2, 16, 8}, cfg.sliding_window);
  auto message = [&](std::vector<DecodeSequenceStep> s) {
    try {
      plan_decode_step(cfg, L, s);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({{0, 10, 7}}).find("capacity of 16 tokens"), std::string::npos);
  EXPECT_NE(message({{0, 0, 5}, {1, 0, 4}}).find("8 rows per step"), std::string::npos);
  EXPECT_NE(message({{0, 0, 1}, {0, 1, 1}}).find("twice"), std::string::npos);
  EXPECT_NE(message({{2, 0, 1}}).find("slot 2"), std::string::npos);
  EXPECT_NE(message({{0, 0, 0}}).find("no new tokens"), std::string::npos);
  EXPECT_NE(message({}).find("no sequences"), std::string::npos);
  EXPECT_THROW(DecodeLayout(DecodeCapacity{0, 16, 8}, 4), Error);
}

}  // namespace
