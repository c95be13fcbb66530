// The bounds of the compressor pooling op check (tests/cuda/gpu/compressor_cases.hpp), tested without a device:
// the device's recipes replayed on the CPU — the forward with every expf moved by 2 ulp (CUDA's documented error)
// and the pooled sum fused (FMA), the backward's expressions (the CPU fast path's), the ape gradient in the device's
// chunk order — stay inside each bound against the double reference nn::compressor_pool_*_ref; wrong recipes (a
// CSA block 0 pooling previous slots, the ape class taken from the batch index instead of the document position,
// gape overwritten instead of accumulated, a token dropped at a chunk edge, the sign of Cx - pooled flipped) fall
// outside. Also the grid helper against the model's rules. CUDA builds only (the bounds live in the gpu harness
// library); runs without a GPU.
#include <gtest/gtest.h>

#if TREX_HAVE_CUDA
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "compressor_cases.hpp"
#include "cuda/compressor.hpp"
#include "nn/compressor_pool.hpp"
#include "op_check.hpp"
#include "util/rng.hpp"
#include "float_vectors.hpp"

using namespace trex;
using namespace trex::cuda::check;

namespace {

using trex::testing::move_ulps;

struct Case {
  CompressorGrid g;
  int64_t cdim = 0, W = 0, slots = 0;
  bool overlap = false;
  std::vector<float> Cx, Zx, dpooled, gape0;
  nn::CompressorPool pool() const {
    nn::CompressorPool p;
    p.N = g.N, p.NE = g.NE, p.m = g.m, p.cdim = cdim, p.overlap = overlap;
    p.start = g.start.data(), p.idx = g.idx.data(), p.pos = g.pos.data();
    return p;
  }
};

Case make_case(uint64_t seed, int64_t N, int64_t m, int64_t cdim, bool overlap, const std::vector<int64_t>& docs) {
  Rng rng(seed);
  Case c;
  c.g = compressor_grid(N, m, docs);
  c.cdim = cdim, c.overlap = overlap, c.W = (overlap ? 2 : 1) * cdim, c.slots = overlap ? 2 * m : m;
  c.Cx = randn(rng, size_t(N * c.W));
  c.Zx = randn(rng, size_t(N * c.W), 1.5);  // the ape already added
  c.dpooled = randn(rng, size_t(c.g.NE * cdim));
  c.gape0 = randn(rng, size_t(m * c.W));
  return c;
}

// The device forward's recipe: max, expf (moved +-2 ulp, alternating by slot), sum and division in slot order,
// pooled by FMA. include_empty: the wrong recipe that pools a CSA block 0's previous slots (tokens before the
// document, clamped into the batch) as if they existed.
void device_forward_replay(const Case& c, std::vector<float>& S, std::vector<float>& pooled,
                           bool include_empty = false) {
  const int64_t m = c.g.m, cdim = c.cdim, W = c.W, slots = c.slots;
  S.assign(size_t(c.g.NE * slots * cdim), 0.0f);
  pooled.assign(size_t(c.g.NE * cdim), 0.0f);
  for (int64_t e = 0; e < c.g.NE; ++e) {
    const int64_t s0 = c.g.start[size_t(e)];
    const int64_t first = (c.overlap && c.g.idx[size_t(e)] == 0 && !include_empty) ? m : 0;
    auto at = [&](int64_t k, int64_t ch) {
      if (!c.overlap) return (s0 + k) * W + ch;
      return k < m ? std::max<int64_t>(0, s0 - m + k) * W + ch : (s0 + k - m) * W + cdim + ch;
    };
    for (int64_t ch = 0; ch < cdim; ++ch) {
      float mx = -INFINITY, sum = 0, acc = 0;
      for (int64_t k = first; k < slots; ++k) mx = std::max(mx, c.Zx[size_t(at(k, ch))]);
      float* s = S.data() + e * slots * cdim + ch;
      for (int64_t k = first; k < slots; ++k) {
        s[k * cdim] = move_ulps(std::exp(c.Zx[size_t(at(k, ch))] - mx), k % 2 ? 2 : -2);
        sum += s[k * cdim];
      }
      for (int64_t k = first; k < slots; ++k) {
        s[k * cdim] /= sum;
        acc = std::fma(s[k * cdim], c.Cx[size_t(at(k, ch))], acc);
      }
      pooled[size_t(e * cdim + ch)] = acc;
    }
  }
}

// The ape gradient in the device's chunk order with the class rule given (pos % m, or the wrong i % m), gape
// accumulated or overwritten, optionally one token skipped.
std::vector<float> ape_replay_variant(const Case& c, const std::vector<float>& dZx, bool by_position, bool accumulate,
                                      int64_t skip_token) {
  const int64_t m = c.g.m, W = c.W;
  std::vector<float> total(size_t(m * W), 0.0f), part(size_t(m * W));
  for (int64_t i0 = 0; i0 < c.g.N; i0 += cuda::kApeGradChunkTokens) {
    std::fill(part.begin(), part.end(), 0.0f);
    for (int64_t i = i0; i < std::min(c.g.N, i0 + cuda::kApeGradChunkTokens); ++i) {
      if (i == skip_token) continue;
      const int64_t r = (by_position ? c.g.pos[size_t(i)] : i) % m;
      for (int64_t j = 0; j < W; ++j) part[size_t(r * W + j)] += dZx[size_t(i * W + j)];
    }
    for (size_t x = 0; x < part.size(); ++x) total[x] += part[x];
  }
  std::vector<float> out = accumulate ? c.gape0 : std::vector<float>(c.gape0.size(), 0.0f);
  for (size_t x = 0; x < out.size(); ++x) out[x] += total[x];
  return out;
}

const std::vector<int64_t> kDocs{0, 100, 255, 257, 513};  // starts off the chunk grid; lengths not multiples of m

}  // namespace

TEST(CompressorPoolBounds, GridFollowsTheModelsRules) {
  const CompressorGrid g = compressor_grid(40, 4, {0, 10, 11, 30});
  // documents of 10, 1, 19, 10 tokens: 2 + 0 + 4 + 2 complete blocks
  EXPECT_EQ(g.NE, 8);
  EXPECT_EQ(g.start, (std::vector<int32_t>{0, 4, 11, 15, 19, 23, 30, 34}));
  EXPECT_EQ(g.idx, (std::vector<int32_t>{0, 1, 0, 1, 2, 3, 0, 1}));
  EXPECT_EQ(g.pos[10], 0);
  EXPECT_EQ(g.pos[29], 18);
  EXPECT_EQ(g.pos[39], 9);
}

TEST(CompressorPoolBounds, DeviceForwardRecipeInsideTheBound) {
  for (bool overlap : {false, true})
    for (int64_t m : {4, 8}) {
      const Case c = make_case(uint64_t(20 + m) + (overlap ? 1u : 0u), 601, m, 24, overlap, kDocs);
      const nn::CompressorPool p = c.pool();
      std::vector<float> rS(size_t(c.g.NE * c.slots * c.cdim)), rpooled(size_t(c.g.NE * c.cdim)), S, pooled;
      nn::compressor_pool_forward_ref(p, c.Cx.data(), c.Zx.data(), nullptr, rS.data(), rpooled.data());
      std::vector<double> bS, bpooled;
      pool_forward_bounds(c.g, c.cdim, overlap, c.Cx, c.Zx, rS, bS, bpooled);
      device_forward_replay(c, S, pooled);
      const Compare cs = compare_bound("S", S, rS, bS), cp = compare_bound("pooled", pooled, rpooled, bpooled);
      EXPECT_TRUE(cs.ok()) << cs.str();
      EXPECT_TRUE(cp.ok()) << cp.str();
      std::printf("m %lld %s: %s | %s\n", static_cast<long long>(m), overlap ? "csa" : "hca", cs.str().c_str(),
                  cp.str().c_str());
      if (overlap) {  // pooling a block 0's (non-existent) previous slots is caught
        device_forward_replay(c, S, pooled, true);
        EXPECT_FALSE(compare_bound("pooled", pooled, rpooled, bpooled).ok());
        EXPECT_FALSE(compare_bound("S", S, rS, bS).ok());
      }
    }
}

TEST(CompressorPoolBounds, DeviceBackwardAndApeGradientInsideTheBounds) {
  for (bool overlap : {false, true})
    for (int64_t m : {4, 8}) {
      const Case c = make_case(uint64_t(40 + m) + (overlap ? 1u : 0u), 601, m, 24, overlap, kDocs);
      const nn::CompressorPool p = c.pool();
      std::vector<float> S, pooled;
      device_forward_replay(c, S, pooled);  // the backward reads the device's own S, pooled
      const size_t nx = size_t(c.g.N * c.W);
      std::vector<float> rdCx(nx), rdZx(nx), rgape(c.gape0), dCx(nx, 0.0f), dZx(nx, 0.0f);
      nn::compressor_pool_backward_ref(p, c.Cx.data(), S.data(), pooled.data(), c.dpooled.data(), rdCx.data(),
                                       rdZx.data(), rgape.data());
      nn::compressor_pool_backward(p, c.Cx.data(), S.data(), pooled.data(), c.dpooled.data(), dCx.data(),
                                   dZx.data());  // the device's expressions
      std::vector<double> bdCx, bdZx;
      pool_backward_bounds(c.g, c.cdim, overlap, c.Cx, S, pooled, c.dpooled, bdCx, bdZx);
      const Compare cc = compare_bound("dCx", dCx, rdCx, bdCx), cz = compare_bound("dZx", dZx, rdZx, bdZx);
      EXPECT_TRUE(cc.ok()) << cc.str();
      EXPECT_TRUE(cz.ok()) << cz.str();
      const std::vector<double> bg = ape_grad_bound(c.g, c.W, rdZx, bdZx, c.gape0);
      const std::vector<float> gape = ape_grad_replay(c.g, c.W, dZx, c.gape0);
      const Compare cg = compare_bound("gape", gape, rgape, bg);
      EXPECT_TRUE(cg.ok()) << cg.str();
      std::printf("m %lld %s: %s | %s | %s\n", static_cast<long long>(m), overlap ? "csa" : "hca", cc.str().c_str(),
                  cz.str().c_str(), cg.str().c_str());
      // the exported replay is the variant with the right rules, bit for bit
      const std::vector<float> same = ape_replay_variant(c, dZx, true, true, -1);
      EXPECT_EQ(0, std::memcmp(same.data(), gape.data(), gape.size() * 4));
      // wrong recipes fall outside
      EXPECT_FALSE(compare_bound("gape", ape_replay_variant(c, dZx, false, true, -1), rgape, bg).ok())
          << "class from the batch index";
      EXPECT_FALSE(compare_bound("gape", ape_replay_variant(c, dZx, true, false, -1), rgape, bg).ok())
          << "gape overwritten";
      EXPECT_FALSE(compare_bound("gape", ape_replay_variant(c, dZx, true, true, 511), rgape, bg).ok())
          << "token 511 (the second chunk's last) dropped";
      std::vector<float> flipped(nx);
      for (size_t x = 0; x < nx; ++x) flipped[x] = -dZx[x];  // S g (pooled - Cx)
      EXPECT_FALSE(compare_bound("dZx", flipped, rdZx, bdZx).ok()) << "sign of Cx - pooled";
    }
}
#endif
