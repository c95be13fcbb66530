// The fixed-order fp32 GEMM (see gemm_fixed_order.hpp): packing, the 6 x 16 AVX2 and 8 x 32 AVX-512
// micro-kernels, and their plain-loop twin.
#include "nn/gemm_fixed_order.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "util/error.hpp"

namespace trex::nn {

namespace {

constexpr int64_t kKc = FixedOrderBlocking::kKc, kMc = FixedOrderBlocking::kMc, kNc = FixedOrderBlocking::kNc;

// Per thread, grown once to the largest shape seen and then reused (no allocation in the step loop).
struct PackBuffers {
  std::vector<float> a, b;
};
PackBuffers& buffers() {
  thread_local PackBuffers p;
  return p;
}

// A[i, p] and B[p, j] of a call, whatever its transposes.
inline const float* a_at(const GemmCall& g, int64_t i, int64_t p) {
  return g.trans_a ? g.a + p * g.lda + i : g.a + i * g.lda + p;
}
inline const float* b_at(const GemmCall& g, int64_t p, int64_t j) {
  return g.trans_b ? g.b + j * g.ldb + p : g.b + p * g.ldb + j;
}

// Rows [i0, i0 + rows) x k block [p0, p0 + kc) of A -> out[p][kMR] (rows beyond `rows` zero).
template <int64_t kMR>
void pack_a_panel(const GemmCall& g, int64_t i0, int64_t rows, int64_t p0, int64_t kc, float* out) {
  for (int64_t r = 0; r < kMR; ++r) {
    if (r >= rows) {
      for (int64_t p = 0; p < kc; ++p) out[p * kMR + r] = 0.0f;
      continue;
    }
    if (!g.trans_a) {
      const float* s = g.a + (i0 + r) * g.lda + p0;
      for (int64_t p = 0; p < kc; ++p) out[p * kMR + r] = s[p];
    } else {
      for (int64_t p = 0; p < kc; ++p) out[p * kMR + r] = *a_at(g, i0 + r, p0 + p);
    }
  }
}

// Columns [j0, j0 + cols) x k block [p0, p0 + kc) of B -> out[p][kNR] (columns beyond `cols` zero).
template <int64_t kNR>
void pack_b_panel(const GemmCall& g, int64_t j0, int64_t cols, int64_t p0, int64_t kc, float* out) {
  if (!g.trans_b) {  // k rows contiguous along j: copy row by row
    for (int64_t p = 0; p < kc; ++p) {
      const float* s = g.b + (p0 + p) * g.ldb + j0;
      float* o = out + p * kNR;
      for (int64_t c = 0; c < kNR; ++c) o[c] = c < cols ? s[c] : 0.0f;
    }
    return;
  }
  // k contiguous per column (a weight matrix [n, k]): 8 x 8 blocks transposed in registers.
  int64_t c0 = 0;
  for (; c0 + 8 <= cols; c0 += 8) {
    int64_t p = 0;
    for (; p + 8 <= kc; p += 8) {
      __m256 r[8];
      for (int q = 0; q < 8; ++q) r[q] = _mm256_loadu_ps(g.b + (j0 + c0 + q) * g.ldb + p0 + p);
      const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
      const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
      const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
      const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
      const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
      const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
      const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee);
      const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
      const __m256 v[8] = {_mm256_permute2f128_ps(u0, u4, 0x20), _mm256_permute2f128_ps(u1, u5, 0x20),
                           _mm256_permute2f128_ps(u2, u6, 0x20), _mm256_permute2f128_ps(u3, u7, 0x20),
                           _mm256_permute2f128_ps(u0, u4, 0x31), _mm256_permute2f128_ps(u1, u5, 0x31),
                           _mm256_permute2f128_ps(u2, u6, 0x31), _mm256_permute2f128_ps(u3, u7, 0x31)};
      for (int q = 0; q < 8; ++q) _mm256_storeu_ps(out + (p + q) * kNR + c0, v[q]);
    }
    for (; p < kc; ++p)
      for (int64_t c = c0; c < c0 + 8; ++c) out[p * kNR + c] = g.b[(j0 + c) * g.ldb + p0 + p];
  }
  for (int64_t c = c0; c < kNR; ++c) {
    const float* s = g.b + (j0 + c) * g.ldb + p0;
    for (int64_t p = 0; p < kc; ++p) out[p * kNR + c] = c < cols ? s[p] : 0.0f;
  }
}

// The micro-kernels: the kMR x kNR tile of C at c (ldc) = alpha * A_panel B_panel + beta_c * C over kc, each
// element one fma chain along k, then (alpha != 1) one multiply and (beta_c != 0) one fma with C — the same
// operations, in the same order, in both kernels and in gemm_fixed_order_reference.
struct Avx2Kernel {
  static constexpr int64_t kMR = FixedOrderBlocking::kMR, kNR = FixedOrderBlocking::kNR;
  static void run(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta_c) {
    __m256 acc0[kMR], acc1[kMR];
    for (int r = 0; r < kMR; ++r) acc0[r] = acc1[r] = _mm256_setzero_ps();
    for (int64_t p = 0; p < kc; ++p) {
      const __m256 b0 = _mm256_loadu_ps(b + p * kNR), b1 = _mm256_loadu_ps(b + p * kNR + 8);
#pragma GCC unroll 6
      for (int r = 0; r < kMR; ++r) {
        const __m256 av = _mm256_broadcast_ss(a + p * kMR + r);
        acc0[r] = _mm256_fmadd_ps(av, b0, acc0[r]);
        acc1[r] = _mm256_fmadd_ps(av, b1, acc1[r]);
      }
    }
    const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta_c);
#pragma GCC unroll 6
    for (int r = 0; r < kMR; ++r) {
      float* cr = c + r * ldc;
      __m256 y0 = acc0[r], y1 = acc1[r];
      if (alpha != 1.0f) {  // 1 * x is exact: skipping it changes no bit
        y0 = _mm256_mul_ps(va, y0);
        y1 = _mm256_mul_ps(va, y1);
      }
      if (beta_c != 0.0f) {  // beta 0 overwrites C (NaN in C does not leak, as in BLAS)
        y0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(cr), y0);
        y1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(cr + 8), y1);
      }
      _mm256_storeu_ps(cr, y0);
      _mm256_storeu_ps(cr + 8, y1);
    }
  }
};

// Zen 4/5: 32 zmm registers, 16 accumulators of 16 lanes (AVX-512's FMA throughput needs the wider tile). The
// target attribute keeps the rest of the module at its -march; gemm_fixed_order picks it where the CPU has it.
struct Avx512Kernel {
  static constexpr int64_t kMR = FixedOrderBlocking::kMR512, kNR = FixedOrderBlocking::kNR512;
  __attribute__((target("avx512f"))) static void run(int64_t kc, const float* a, const float* b, float* c,
                                                     int64_t ldc, float alpha, float beta_c) {
    __m512 acc0[kMR], acc1[kMR];
    for (int r = 0; r < kMR; ++r) acc0[r] = acc1[r] = _mm512_setzero_ps();
    for (int64_t p = 0; p < kc; ++p) {
      const __m512 b0 = _mm512_loadu_ps(b + p * kNR), b1 = _mm512_loadu_ps(b + p * kNR + 16);
#pragma GCC unroll 8
      for (int r = 0; r < kMR; ++r) {
        const __m512 av = _mm512_set1_ps(a[p * kMR + r]);
        acc0[r] = _mm512_fmadd_ps(av, b0, acc0[r]);
        acc1[r] = _mm512_fmadd_ps(av, b1, acc1[r]);
      }
    }
    const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta_c);
#pragma GCC unroll 8
    for (int r = 0; r < kMR; ++r) {
      float* cr = c + r * ldc;
      __m512 y0 = acc0[r], y1 = acc1[r];
      if (alpha != 1.0f) {
        y0 = _mm512_mul_ps(va, y0);
        y1 = _mm512_mul_ps(va, y1);
      }
      if (beta_c != 0.0f) {
        y0 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(cr), y0);
        y1 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(cr + 16), y1);
      }
      _mm512_storeu_ps(cr, y0);
      _mm512_storeu_ps(cr + 16, y1);
    }
  }
};

bool cpu_has_avx512f() {
  static const bool ok = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return ok;
}

// GotoBLAS loops around one kernel.
template <class Kernel>
void run_blocked(const GemmCall& g) {
  constexpr int64_t kMR = Kernel::kMR, kNR = Kernel::kNR;
  PackBuffers& buf = buffers();
  const int64_t kc_max = std::min(g.k, kKc);
  const int64_t nc_max = std::min(kNc, (g.n + kNR - 1) / kNR * kNR);
  const int64_t mc_max = std::min(kMc, (g.m + kMR - 1) / kMR * kMR);
  if (int64_t(buf.b.size()) < nc_max * kc_max) buf.b.resize(size_t(nc_max * kc_max));
  if (int64_t(buf.a.size()) < mc_max * kc_max) buf.a.resize(size_t(mc_max * kc_max));
  alignas(64) float tile[kMR * kNR];
  for (int64_t jc = 0; jc < g.n; jc += kNc) {
    const int64_t nc = std::min(kNc, g.n - jc), n_panels = (nc + kNR - 1) / kNR;
    for (int64_t pc = 0; pc < g.k; pc += kKc) {
      const int64_t kc = std::min(kKc, g.k - pc);
      for (int64_t jp = 0; jp < n_panels; ++jp) {
        const int64_t j0 = jc + jp * kNR;
        pack_b_panel<kNR>(g, j0, std::min(kNR, g.n - j0), pc, kc, buf.b.data() + jp * kNR * kc);
      }
      const float beta_c = pc == 0 ? g.beta : 1.0f;
      for (int64_t ic = 0; ic < g.m; ic += kMc) {
        const int64_t mc = std::min(kMc, g.m - ic), m_panels = (mc + kMR - 1) / kMR;
        for (int64_t ip = 0; ip < m_panels; ++ip) {
          const int64_t i0 = ic + ip * kMR;
          pack_a_panel<kMR>(g, i0, std::min(kMR, g.m - i0), pc, kc, buf.a.data() + ip * kMR * kc);
        }
        for (int64_t jp = 0; jp < n_panels; ++jp) {
          const int64_t j0 = jc + jp * kNR, nr = std::min(kNR, g.n - j0);
          const float* b = buf.b.data() + jp * kNR * kc;
          for (int64_t ip = 0; ip < m_panels; ++ip) {
            const int64_t i0 = ic + ip * kMR, mr = std::min(kMR, g.m - i0);
            const float* a = buf.a.data() + ip * kMR * kc;
            float* c = g.c + i0 * g.ldc + j0;
            if (mr == kMR && nr == kNR) {
              Kernel::run(kc, a, b, c, g.ldc, g.alpha, beta_c);
              continue;
            }
            // A tail tile: the same kernel on a copy of C's valid part, then copied back.
            for (int64_t r = 0; r < kMR; ++r)
              for (int64_t j = 0; j < kNR; ++j)
                tile[r * kNR + j] = r < mr && j < nr && beta_c != 0.0f ? c[r * g.ldc + j] : 0.0f;
            Kernel::run(kc, a, b, tile, kNR, g.alpha, beta_c);
            for (int64_t r = 0; r < mr; ++r)
              for (int64_t j = 0; j < nr; ++j) c[r * g.ldc + j] = tile[r * kNR + j];
          }
        }
      }
    }
  }
}

}  // namespace

void gemm_fixed_order(const GemmCall& g, FixedOrderKernel kernel) {
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0) {  // no product: C = beta C (the operands are not read)
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) g.c[i * g.ldc + j] = g.beta == 0.0f ? 0.0f : g.beta * g.c[i * g.ldc + j];
    return;
  }
  if (!g.a || !g.b) throw Error("gemm_fixed_order: fp32 operands a and b are required");
  if (kernel == FixedOrderKernel::best && cpu_has_avx512f())
    run_blocked<Avx512Kernel>(g);
  else
    run_blocked<Avx2Kernel>(g);
}

void gemm_fixed_order_reference(const GemmCall& g) {
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) {
      float& out = g.c[i * g.ldc + j];
      if (g.k == 0) {
        out = g.beta == 0.0f ? 0.0f : g.beta * out;
        continue;
      }
      for (int64_t p0 = 0; p0 < g.k; p0 += kKc) {
        float acc = 0.0f;
        for (int64_t p = p0; p < std::min(g.k, p0 + kKc); ++p) acc = std::fma(*a_at(g, i, p), *b_at(g, p, j), acc);
        const float y = g.alpha != 1.0f ? g.alpha * acc : acc;
        const float beta_c = p0 == 0 ? g.beta : 1.0f;
        out = beta_c != 0.0f ? std::fma(beta_c, out, y) : y;
      }
    }
}

}  // namespace trex::nn
