// The bounds of the lightning-indexer op check (tests/cuda/gpu/indexer_cases.hpp), tested without a device: the
// device's recipe (src/cuda/indexer.cu) replayed on the CPU — the warp dots (32 strided lane partials, the xor
// butterfly), FMAs where nvcc contracts, the online max / sum of the main softmax, the 256-thread block trees of
// reduce.cuh, every expf moved by 2 ulp (CUDA's documented error), dqI / dlam in slot order and dK in increasing
// query order — stays inside every bound of compare_indexer against the double reference nn::indexer_*_ref; wrong
// recipes (the ReLU's gradient mask dropped, a query missing from dK, p not renormalised over the selection, the
// lists in the wrong order) fall outside. CUDA builds only (the bounds live in the gpu harness library); runs
// without a GPU.
#include <gtest/gtest.h>

#if TREX_HAVE_CUDA
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "indexer_cases.hpp"
#include "nn/indexer.hpp"
#include "nn/ops.hpp"
#include "op_check.hpp"
#include "float_vectors.hpp"

using namespace trex;
using namespace trex::cuda::check;

namespace {

constexpr int kThreads = 256;  // the device's query blocks

using trex::testing::move_ulps;
float dev_exp(float x, int64_t salt) { return move_ulps(std::exp(x), salt % 2 ? 2 : -2); }

// warp_dot: lane l sums t = l, l + 32, ... (FMA), then s += shfl_xor(s, o) for o = 16 .. 1
float warp_dot(const float* a, const float* b, int64_t n) {
  float s[32];
  for (int l = 0; l < 32; ++l) {
    s[l] = 0;
    for (int64_t t = l; t < n; t += 32) s[l] = std::fma(a[t], b[t], s[l]);
  }
  for (int o = 16; o > 0; o >>= 1) {
    float r[32];
    for (int l = 0; l < 32; ++l) r[l] = s[l] + s[l ^ o];
    std::copy(r, r + 32, s);
  }
  return s[0];
}

// reduce.cuh's block_reduce over kThreads per-thread values: butterflies per warp, then over the warps' values
template <class T, class Op>
T block_reduce(std::vector<T> v, Op op, T identity) {
  auto butterfly = [&](T* w) {
    for (int o = 16; o > 0; o >>= 1) {
      T r[32];
      for (int l = 0; l < 32; ++l) r[l] = op(w[l], w[l ^ o]);
      std::copy(r, r + 32, w);
    }
  };
  T part[32];
  for (int w = 0; w < kThreads / 32; ++w) {
    butterfly(v.data() + w * 32);
    part[w] = v[size_t(w * 32)];
  }
  for (int l = kThreads / 32; l < 32; ++l) part[l] = identity;
  butterfly(part);
  return part[0];
}

enum class Wrong { none, no_relu_mask, dk_drops_query, p_not_renormalised, lists_reversed };

// The device recipe on the CPU (indexer.cu, kernel by kernel).
IndexerOutputs replay(const IndexerBatch& b, int64_t topk, bool dense, double coeff, Wrong wrong = Wrong::none) {
  const int64_t N = b.N, HI = b.HI, cI = b.cI, NE = b.NE, smax = b.smax, H = b.H, hd = b.hd;
  const int64_t ks = dense ? smax : topk;
  IndexerOutputs o;
  o.scores.assign(size_t(N * smax), NAN);
  for (int64_t i = 0; i < N; ++i)  // scores_kernel
    for (int64_t e = 0; e < b.nvis[size_t(i)]; ++e) {
      float acc = 0;
      for (int64_t h = 0; h < HI; ++h) {
        const float d = warp_dot(b.qI.data() + (i * HI + h) * cI, b.K.data() + (b.base[size_t(i)] + e) * cI, cI);
        acc = std::fma(b.lam[size_t(i * HI + h)], std::max(d, 0.0f), acc);
      }
      o.scores[size_t(i * smax + e)] = acc;
    }
  o.sel.assign(size_t(std::max<int64_t>(1, N * ks)), -1);  // topk_rows (nn::topk_lower_index's contract) / dense
  for (int64_t i = 0; i < N; ++i) {
    const int64_t nv = b.nvis[size_t(i)], kt = std::min(ks, nv);
    int32_t* s = o.sel.data() + i * ks;
    if (dense) {
      for (int64_t e = 0; e < nv; ++e) s[e] = int32_t(b.base[size_t(i)] + e);
    } else {
      nn::topk_lower_index(o.scores.data() + i * smax, nv, kt, s);
      for (int64_t j = 0; j < kt; ++j) s[j] += b.base[size_t(i)];
    }
    if (wrong == Wrong::lists_reversed) std::reverse(s, s + kt);
  }
  // kl_forward_kernel (hg = H: every check shape has H <= 64 and fits the shared memory)
  std::vector<float> coef(size_t(std::max<int64_t>(1, N * ks)), 0.0f);
  o.row_loss.assign(size_t(N), 0.0);
  const float inv_sqrt_c = float(1.0 / std::sqrt(double(hd))), eps = 1e-10f, cf = float(coeff);
  for (int64_t i = 0; i < N; ++i) {
    const int64_t nv = b.nvis[size_t(i)], base = b.base[size_t(i)], kt = std::min(ks, nv);
    if (nv == 0) continue;
    std::vector<float> Pt(static_cast<size_t>(nv), 0.0f), lg(static_cast<size_t>(nv * H));
    std::vector<float> m(static_cast<size_t>(H), -INFINITY), sm(static_cast<size_t>(H), 0.0f);
    for (int64_t e = 0; e < nv; ++e)
      for (int64_t h = 0; h < H; ++h)
        lg[size_t(e * H + h)] = warp_dot(b.q.data() + (i * H + h) * hd, b.Ce.data() + (base + e) * hd, hd) * inv_sqrt_c;
    for (int64_t h = 0; h < H; ++h)
      for (int64_t e = 0; e < nv; ++e) {  // online max and sum (the FMA nvcc makes of s * exp + exp)
        const float l = lg[size_t(e * H + h)], mn = std::max(m[size_t(h)], l);
        sm[size_t(h)] = std::fma(sm[size_t(h)], dev_exp(m[size_t(h)] - mn, e), dev_exp(l - mn, e + 1));
        m[size_t(h)] = mn;
      }
    for (int64_t e = 0; e < nv; ++e)
      for (int64_t h = 0; h < H; ++h) Pt[size_t(e)] += dev_exp(lg[size_t(e * H + h)] - m[size_t(h)], e + h) / sm[size_t(h)];
    const int32_t* s = o.sel.data() + i * ks;
    const float* I = o.scores.data() + i * smax;
    std::vector<float> tp(kThreads, 0.0f), tm(kThreads, -INFINITY), tz(kThreads, 0.0f), tg(kThreads, 0.0f);
    std::vector<double> tk(kThreads, 0.0);
    for (int64_t j = 0; j < kt; ++j) {
      tp[size_t(j % kThreads)] += Pt[size_t(s[j] - base)];
      tm[size_t(j % kThreads)] = std::max(tm[size_t(j % kThreads)], I[s[j] - base]);
    }
    float psum = block_reduce(tp, [](float x, float y) { return x + y; }, 0.0f);
    if (wrong == Wrong::p_not_renormalised) psum = 1.0f;
    const float mx = block_reduce(tm, [](float x, float y) { return std::max(x, y); }, -INFINITY);
    for (int64_t j = 0; j < kt; ++j) tz[size_t(j % kThreads)] += dev_exp(I[s[j] - base] - mx, j);
    const float zsum = block_reduce(tz, [](float x, float y) { return x + y; }, 0.0f);
    std::vector<float> pi(static_cast<size_t>(kt)), gpi(static_cast<size_t>(kt));
    for (int64_t j = 0; j < kt; ++j) {
      const float p = Pt[size_t(s[j] - base)] / psum;
      pi[size_t(j)] = dev_exp(I[s[j] - base] - mx, j) / zsum;
      tk[size_t(j % kThreads)] = std::fma(double(p + eps), std::log(double(p + eps)) - std::log(double(pi[size_t(j)] + eps)),
                                          tk[size_t(j % kThreads)]);
      gpi[size_t(j)] = -cf * (p + eps) / (pi[size_t(j)] + eps);
      tg[size_t(j % kThreads)] = std::fma(pi[size_t(j)], gpi[size_t(j)], tg[size_t(j % kThreads)]);
    }
    o.row_loss[size_t(i)] = block_reduce(tk, [](double x, double y) { return x + y; }, 0.0);
    const float dot_pg = block_reduce(tg, [](float x, float y) { return x + y; }, 0.0f);
    for (int64_t j = 0; j < kt; ++j) coef[size_t(i * ks + j)] = pi[size_t(j)] * (gpi[size_t(j)] - dot_pg);
  }
  // kl_query_grad_kernel
  o.dqI.assign(size_t(N * HI * cI), 0.0f);
  o.dlam.assign(size_t(N * HI), 0.0f);
  auto alive = [&](float qk) { return wrong == Wrong::no_relu_mask || qk > 0; };
  for (int64_t i = 0; i < N; ++i) {
    const int64_t kt = std::min(ks, int64_t(b.nvis[size_t(i)]));
    for (int64_t j = 0; j < kt; ++j) {
      const float* k = b.K.data() + int64_t(o.sel[size_t(i * ks + j)]) * cI;
      const float dI = coef[size_t(i * ks + j)];
      for (int64_t h = 0; h < HI; ++h) {
        const float qk = warp_dot(b.qI.data() + (i * HI + h) * cI, k, cI);
        if (!alive(qk)) continue;
        o.dlam[size_t(i * HI + h)] = std::fma(dI, qk, o.dlam[size_t(i * HI + h)]);
        float* dq = o.dqI.data() + (i * HI + h) * cI;
        for (int64_t t = 0; t < cI; ++t) dq[t] = std::fma(dI * b.lam[size_t(i * HI + h)], k[t], dq[t]);
      }
    }
  }
  // dk_kernel: entry by entry, queries in increasing order, heads in order
  o.dK.assign(size_t(std::max<int64_t>(1, NE * cI)), 0.0f);
  for (int64_t i = 0; i < N; ++i) {
    if (wrong == Wrong::dk_drops_query && i == N - 1) continue;  // a query with several slots
    const int64_t kt = std::min(ks, int64_t(b.nvis[size_t(i)]));
    for (int64_t j = 0; j < kt; ++j) {
      const int64_t c = o.sel[size_t(i * ks + j)];
      const float dI = coef[size_t(i * ks + j)];
      for (int64_t h = 0; h < HI; ++h) {
        const float* qh = b.qI.data() + (i * HI + h) * cI;
        const float qk = warp_dot(qh, b.K.data() + c * cI, cI);
        if (!alive(qk)) continue;
        const float w = dI * b.lam[size_t(i * HI + h)];
        for (int64_t t = 0; t < cI; ++t) o.dK[size_t(c * cI + t)] = std::fma(w, qh[t], o.dK[size_t(c * cI + t)]);
      }
    }
  }
  return o;
}

struct Shape {
  std::vector<int64_t> docs;
  int64_t HI, cI, H, hd, topk;
  bool dense;
  IndexerInputs inputs;
};

const std::vector<Shape>& shapes() {  // a subset of the gpu tests' shapes (indexer_test.cpp)
  static const std::vector<Shape> s = {
      {{3, 97, 70, 37}, 4, 32, 3, 32, 5, false, IndexerInputs::random},
      {{3, 97, 70, 37}, 4, 32, 3, 32, 40, false, IndexerInputs::random},
      {{45, 2, 83}, 3, 24, 3, 40, 6, false, IndexerInputs::random},
      {{300, 77}, 8, 17, 4, 16, 3, false, IndexerInputs::random},
      {{190, 2, 61}, 6, 64, 2, 64, 0, true, IndexerInputs::random},
      {{120, 3, 77}, 4, 32, 2, 32, 6, false, IndexerInputs::dead_heads},
      {{120, 3, 77}, 4, 32, 2, 32, 5, false, IndexerInputs::ties},
      {{3, 2, 1, 3}, 2, 16, 2, 16, 4, false, IndexerInputs::random},
  };
  return s;
}

bool all_ok(const std::vector<Compare>& cs, std::string* why) {
  bool ok = true;
  for (const Compare& c : cs)
    if (!c.ok()) ok = false, *why += c.str() + "\n";
  return ok;
}

TEST(CudaIndexerRef, DeviceRecipeWithinTheBounds) {
  for (const Shape& s : shapes()) {
    const IndexerBatch b = make_indexer_batch(s.docs, s.HI, s.cI, s.H, s.hd, s.inputs);
    const double coeff = 0.3 / double(b.N);
    const IndexerOutputs o = replay(b, s.topk, s.dense, coeff);
    std::string why;
    const std::vector<Compare> cs = compare_indexer(b, o, s.dense ? b.smax : s.topk, s.dense, coeff, b.N);
    for (const Compare& c : cs) std::printf("  N %lld HI %lld: %s\n", (long long)b.N, (long long)s.HI, c.str().c_str());
    EXPECT_TRUE(all_ok(cs, &why))
        << "N " << b.N << " HI " << s.HI << " cI " << s.cI << "\n" << why;
    // the prefix mode of the perf shapes: the first 50 queries
    why.clear();
    EXPECT_TRUE(all_ok(compare_indexer(b, o, s.dense ? b.smax : s.topk, s.dense, coeff, std::min<int64_t>(50, b.N)),
                       &why))
        << why;
  }
}

// Each wrong recipe must fail some comparison (on a shape where it matters).
TEST(CudaIndexerRef, WrongRecipesFallOutside) {
  const Shape s = shapes()[0];
  const IndexerBatch b = make_indexer_batch(s.docs, s.HI, s.cI, s.H, s.hd, s.inputs);
  const double coeff = 0.3 / double(b.N);
  for (Wrong w : {Wrong::no_relu_mask, Wrong::dk_drops_query, Wrong::p_not_renormalised, Wrong::lists_reversed}) {
    const IndexerOutputs o = replay(b, s.topk, s.dense, coeff, w);
    std::string why;
    EXPECT_FALSE(all_ok(compare_indexer(b, o, s.topk, s.dense, coeff, b.N), &why)) << "wrong recipe " << int(w);
  }
}

}  // namespace
#endif
