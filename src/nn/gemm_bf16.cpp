// AVX512_BF16 GEMM (see gemm_bf16.hpp). GotoBLAS layout: for each block of kc along k, B is packed into
// panels of kNR columns and A (block of mc rows) into panels of kMR rows, both as bf16 pairs along k (the
// operand layout of vdpbf16ps: one 32-bit lane = (x[2p], x[2p+1])); an 8 x 32 micro-kernel keeps 16 fp32
// accumulators in registers. The functions that use AVX-512 carry a target attribute, so the rest of the
// module keeps its -march; the scope refuses to turn the path on where the CPU lacks the instructions.
#include "nn/gemm_bf16.hpp"

// GCC 12 flags the masked intrinsics' internal _mm512_undefined_*() operands as maybe-uninitialized (a known
// false positive of the header); the masks decide every lane that is read.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "util/error.hpp"

#define TREX_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16")))

namespace trex::nn {

namespace {

std::atomic<int> g_bf16_depth{0};

constexpr int64_t kMR = Bf16Blocking::kMicroRows;  // rows of a micro-tile
constexpr int64_t kNR = Bf16Blocking::kMicroCols;  // columns of a micro-tile (two zmm)
// Default blocking (Bf16Blocking): kc 512 — a packed B micro-panel (256 pairs x 32 x 4 B = 32 KB) stays in L1;
// nc 512 — B's packed panels (<= 512 KB) stay in L2 beside A's; mc 128 = 16 panels of 8 rows (128 KB) in L2.

// Per thread, grown once to the largest shape seen and then reused (no allocation in the step loop).
struct PackBuffers {
  std::vector<uint32_t> a, b;
};
PackBuffers& buffers() {
  thread_local PackBuffers p;
  return p;
}

// 32 consecutive floats (x[0..15], x[16..31]) -> 16 bf16 pairs (x[2q] | x[2q+1] << 16): vcvtne2ps2bf16 rounds
// to nearest even, quiets NaN and flushes denormal inputs to a signed zero (float_to_bf16 in gemm_bf16.hpp).
TREX_BF16_TARGET inline __m512i pairs_of_32(__m512 lo16, __m512 hi16) {
  return (__m512i)_mm512_cvtne2ps_pbh(hi16, lo16);
}

// The packers read either fp32 operands (rounded here) or operands already in bf16 (GemmCall::a_bf16/b_bf16,
// rounded by float_to_bf16 when they were written): the same pairs either way.
//
// len (<= 32) consecutive values along k -> 16 pairs; values beyond len are zero.
TREX_BF16_TARGET inline __m512i load_pairs(const float* s, int64_t len) {
  const __mmask16 m0 = __mmask16(len >= 16 ? 0xffffu : (1u << len) - 1u);
  const __mmask16 m1 = __mmask16(len >= 32 ? 0xffffu : len > 16 ? (1u << (len - 16)) - 1u : 0u);
  return pairs_of_32(_mm512_maskz_loadu_ps(m0, s), _mm512_maskz_loadu_ps(m1, s + 16));
}
TREX_BF16_TARGET inline __m512i load_pairs(const uint16_t* s, int64_t len) {
  return _mm512_maskz_loadu_epi16(__mmask32(len >= 32 ? 0xffffffffu : (1u << len) - 1u), s);
}

// Lane w of two rows -> (bf16 r0[w] | bf16 r1[w] << 16) for the first `len` of 16 lanes (others zero; r1 zero
// when !has_hi): both rows as words (r0's in the low 16), then the words interleaved.
TREX_BF16_TARGET inline __m512i interleave_words(__m512i words) {
  const __m512i order = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6,
                                         21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  return _mm512_permutexvar_epi16(order, words);
}
TREX_BF16_TARGET inline __m512i interleave_rows(const float* r0, const float* r1, int64_t len, bool has_hi) {
  const __mmask16 m = __mmask16((1u << len) - 1u);
  return interleave_words((__m512i)_mm512_cvtne2ps_pbh(has_hi ? _mm512_maskz_loadu_ps(m, r1) : _mm512_setzero_ps(),
                                                       _mm512_maskz_loadu_ps(m, r0)));
}
TREX_BF16_TARGET inline __m512i interleave_rows(const uint16_t* r0, const uint16_t* r1, int64_t len, bool has_hi) {
  const __mmask16 m = __mmask16((1u << len) - 1u);
  const __m256i lo = _mm256_maskz_loadu_epi16(m, r0);
  const __m256i hi = has_hi ? _mm256_maskz_loadu_epi16(m, r1) : _mm256_setzero_si256();
  return interleave_words(_mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1));
}

// In-register transpose of a 16 x 16 block of 32-bit values (r[i] lane j <-> r[j] lane i).
TREX_BF16_TARGET inline void transpose_16x16(__m512i* r) {
  __m512i t[16], u[16], v[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {
    u[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
    u[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
  }
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) {
      v[8 * i + j] = _mm512_shuffle_i32x4(u[8 * i + j], u[8 * i + 4 + j], 0x88);
      v[8 * i + 4 + j] = _mm512_shuffle_i32x4(u[8 * i + j], u[8 * i + 4 + j], 0xdd);
    }
  for (int j = 0; j < 8; ++j) {
    r[j] = _mm512_shuffle_i32x4(v[j], v[8 + j], 0x88);
    r[8 + j] = _mm512_shuffle_i32x4(v[j], v[8 + j], 0xdd);
  }
}

// Packs `panels` panels of W lanes (W 8 or 32) x kc from a source whose k rows are contiguous along the lanes
// (element (lane w, k index p) at src[p * ld + w]) into out: panel q at out + q * W * kp, as [kp][W] bf16 pairs
// (two k rows interleaved). One sweep along each pair of k rows, so every cache line of the source is read once;
// lanes beyond `lanes` and the odd tail of k are zero.
template <class T>
TREX_BF16_TARGET void pack_k_rows(const T* src, int64_t ld, int64_t lanes, int64_t W, int64_t panels, int64_t kc,
                                  uint32_t* out) {
  const int64_t kp = (kc + 1) / 2, width = panels * W;
  for (int64_t p = 0; p < kp; ++p) {
    const T* r0 = src + (2 * p) * ld;
    const T* r1 = src + (2 * p + 1) * ld;
    const bool has_hi = 2 * p + 1 < kc;
    for (int64_t w = 0; w < width; w += 16) {
      const int64_t len = std::clamp<int64_t>(lanes - w, 0, 16);
      const __m512i v = interleave_rows(r0 + w, r1 + w, len, has_hi);
      if (W >= 16) {  // 16 lanes inside one panel
        _mm512_storeu_si512(out + (w / W) * W * kp + p * W + w % W, v);
      } else {  // W 8: two panels
        uint32_t* o = out + (w / W) * W * kp + p * W;
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(o), _mm512_castsi512_si256(v));
        if (w + 8 < width) _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + W * kp), _mm512_extracti64x4_epi64(v, 1));
      }
    }
  }
}

// Packs one panel of W lanes (columns of B) x kc whose k index is contiguous per lane (element (lane w, k index p)
// at src[w * ld + p]) into out[kp][W] bf16 pairs; lanes beyond `lanes` and the odd tail of k are zero.
template <class T>
TREX_BF16_TARGET void pack_k_contiguous_panel(const T* src, int64_t ld, int64_t lanes, int64_t W, int64_t kc,
                                              uint32_t* out) {
  const int64_t kp = (kc + 1) / 2;
  // k contiguous per lane: blocks of 16 lanes x 16 pairs are converted (one zmm of pairs per lane) and
  // transposed in registers into 16 zmm of lanes (one per pair).
  for (int64_t w0 = 0; w0 < W; w0 += 16) {
    const int64_t store_lanes = std::min<int64_t>(16, W - w0);
    const __mmask16 store_mask = __mmask16(store_lanes >= 16 ? 0xffffu : (1u << store_lanes) - 1u);
    for (int64_t p0 = 0; p0 < kp; p0 += 16) {
      const int64_t len = std::min<int64_t>(32, kc - 2 * p0);  // values of each lane in this block
      __m512i r[16];
      for (int64_t l = 0; l < 16; ++l)
        r[l] = w0 + l < lanes ? load_pairs(src + (w0 + l) * ld + 2 * p0, len) : _mm512_setzero_si512();
      transpose_16x16(r);
      const int64_t pairs = std::min<int64_t>(16, kp - p0);
      for (int64_t q = 0; q < pairs; ++q) _mm512_mask_storeu_epi32(out + (p0 + q) * W + w0, store_mask, r[q]);
    }
  }
}

// Rows of A with k contiguous -> rows of bf16 pairs (kp per row, the odd tail's high half zero): row i of the
// block at out + i * kp. No transpose: the micro-kernel broadcasts each row's pairs in place.
template <class T>
TREX_BF16_TARGET void convert_rows(const T* src, int64_t ld, int64_t rows, int64_t kc, uint32_t* out) {
  const int64_t kp = (kc + 1) / 2;
  for (int64_t i = 0; i < rows; ++i) {
    const T* s = src + i * ld;
    uint32_t* o = out + i * kp;
    for (int64_t p0 = 0; p0 < kp; p0 += 16) {
      const __m512i v = load_pairs(s + 2 * p0, std::min<int64_t>(32, kc - 2 * p0));
      const int64_t pairs = std::min<int64_t>(16, kp - p0);
      _mm512_mask_storeu_epi32(o + p0, __mmask16(pairs >= 16 ? 0xffffu : (1u << pairs) - 1u), v);
    }
  }
}

// C[mr x nr] (ldc) = alpha * A_panel B_panel + (first ? beta : 1) * C, over kp bf16 pairs. A's pair p of row r
// is a[p * kPairStride + r * row_stride]: kPairStride kMR for a packed panel (row_stride 1), 1 for rows of
// bf16 pairs (row_stride = the row length in pairs).
template <int64_t kPairStride>
TREX_BF16_TARGET void micro_kernel(int64_t kp, const uint32_t* a, int64_t row_stride, const uint32_t* b, float* c,
                                   int64_t ldc, int64_t mr, int64_t nr, float alpha, float beta_c) {
  // The C tile is read or written only after the k loop: fetching its lines now hides their miss (C of the
  // head's products is far larger than the caches) behind the loop.
  for (int64_t r = 0; r < mr; ++r) {
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
    if (nr > 16) _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + 16), _MM_HINT_T0);
  }
  __m512 acc0[kMR], acc1[kMR];
  for (int r = 0; r < kMR; ++r) acc0[r] = acc1[r] = _mm512_setzero_ps();
  for (int64_t p = 0; p < kp; ++p) {
    const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b + p * kNR);
    const __m512bh b1 = (__m512bh)_mm512_loadu_si512(b + p * kNR + 16);
    const uint32_t* ap = a + p * kPairStride;
    for (int r = 0; r < kMR; ++r) {
      const __m512bh av = (__m512bh)_mm512_set1_epi32(int(ap[r * row_stride]));
      acc0[r] = _mm512_dpbf16_ps(acc0[r], av, b0);
      acc1[r] = _mm512_dpbf16_ps(acc1[r], av, b1);
    }
  }
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta_c);
  if (mr == kMR && nr == kNR) {  // a whole tile: unmasked, unrolled, the accumulators stay in registers
    const bool scale = alpha != 1.0f, add = beta_c != 0.0f;  // 1 * x and 1 * c + y are exact: skipping changes no bit
#pragma GCC unroll 8
    for (int r = 0; r < kMR; ++r) {
      float* cr = c + r * ldc;
      __m512 y0 = acc0[r], y1 = acc1[r];
      if (scale) {
        y0 = _mm512_mul_ps(va, y0);
        y1 = _mm512_mul_ps(va, y1);
      }
      if (add) {
        y0 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(cr), y0);
        y1 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(cr + 16), y1);
      }
      _mm512_storeu_ps(cr, y0);
      _mm512_storeu_ps(cr + 16, y1);
    }
    return;
  }
  const __mmask16 m0 = __mmask16(nr >= 16 ? 0xffffu : (1u << nr) - 1u);
  const __mmask16 m1 = __mmask16(nr >= 32 ? 0xffffu : nr > 16 ? (1u << (nr - 16)) - 1u : 0u);
  for (int r = 0; r < kMR; ++r) {
    if (r >= mr) break;
    float* cr = c + r * ldc;
    __m512 y0 = _mm512_mul_ps(va, acc0[r]), y1 = _mm512_mul_ps(va, acc1[r]);
    if (beta_c != 0.0f) {
      y0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, cr), y0);
      y1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, cr + 16), y1);
    }
    _mm512_mask_storeu_ps(cr, m0, y0);
    _mm512_mask_storeu_ps(cr + 16, m1, y1);
  }
}

bool cpu_has_bf16() {
  static const bool ok = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512bf16");
  }();
  return ok;
}

TREX_BF16_TARGET void round_to_bf16_avx512(const float* x, uint16_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    _mm512_storeu_si512(out + i, (__m512i)_mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(x + i)));
  for (; i < n; ++i) out[i] = float_to_bf16(x[i]);
}

}  // namespace

void round_to_bf16(const float* x, uint16_t* out, int64_t n) {
  if (cpu_has_bf16()) return round_to_bf16_avx512(x, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = float_to_bf16(x[i]);
}

bool bf16_matmul_supported() { return cpu_has_bf16(); }

Bf16MatmulScope::Bf16MatmulScope() {
  if (!cpu_has_bf16()) throw Error("bf16 matmul: this CPU lacks AVX512_BF16 (use fp32)");
  g_bf16_depth.fetch_add(1, std::memory_order_relaxed);
}
Bf16MatmulScope::~Bf16MatmulScope() { g_bf16_depth.fetch_sub(1, std::memory_order_relaxed); }
bool bf16_matmul_active() { return g_bf16_depth.load(std::memory_order_relaxed) > 0; }

namespace {
std::atomic<bool> g_operand_copies{true};
}
void set_bf16_operand_copies(bool on) { g_operand_copies.store(on, std::memory_order_relaxed); }
bool bf16_operand_copies() { return bf16_matmul_active() && g_operand_copies.load(std::memory_order_relaxed); }

void Bf16Blocking::validate() const {
  if (kc <= 0 || kc % 2 != 0 || mc <= 0 || mc % kMicroRows != 0 || nc <= 0 || nc % kMicroCols != 0)
    throw Error("bf16 GEMM blocking: kc must be even, mc a multiple of 8, nc a multiple of 32 (got kc " +
                std::to_string(kc) + ", mc " + std::to_string(mc) + ", nc " + std::to_string(nc) + ")");
}

void gemm_bf16(const GemmCall& g, const Bf16Blocking& blocking) {
  if (g.m == 0 || g.n == 0) return;
  blocking.validate();
  const int64_t kc_block = blocking.kc, mc_block = blocking.mc, nc_block = blocking.nc;
  if (g.k == 0) {
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) g.c[i * g.ldc + j] = g.beta == 0.0f ? 0.0f : g.beta * g.c[i * g.ldc + j];
    return;
  }
  PackBuffers& buf = buffers();
  const int64_t kp_max = (std::min(g.k, kc_block) + 1) / 2;
  const int64_t nc_max = std::min(nc_block, (g.n + kNR - 1) / kNR * kNR);
  const int64_t mc_max = std::min(mc_block, (g.m + kMR - 1) / kMR * kMR);
  if (int64_t(buf.b.size()) < nc_max * kp_max) buf.b.resize(size_t(nc_max * kp_max));
  if (int64_t(buf.a.size()) < mc_max * kp_max) buf.a.resize(size_t(mc_max * kp_max));
  // A[i, p]: a[i * lda + p] (k contiguous) or, transposed, a[p * lda + i]; B[p, j]: b[p * ldb + j] or b[j * ldb + p].
  // Operands given in bf16 (a_bf16 / b_bf16, same layout) are packed without rounding; a bf16 A with k
  // contiguous, an even row length and even k is read in place (its rows are already rows of pairs).
  // Each C element sums its k blocks in the same order whatever the column block: results depend on k only.
  const bool a_in_place = g.a_bf16 && !g.trans_a && g.lda % 2 == 0 && g.k % 2 == 0 &&
                          reinterpret_cast<uintptr_t>(g.a_bf16) % 4 == 0;
  // f(storage of A / B): the bf16 copy when given, else the fp32 operand (the packers take either)
  auto with_a = [&](auto f) { g.a_bf16 ? f(g.a_bf16) : f(g.a); };
  auto with_b = [&](auto f) { g.b_bf16 ? f(g.b_bf16) : f(g.b); };
  for (int64_t jc = 0; jc < g.n; jc += nc_block) {
    const int64_t nc = std::min(nc_block, g.n - jc), n_panels = (nc + kNR - 1) / kNR;
    for (int64_t pc = 0; pc < g.k; pc += kc_block) {
      const int64_t kc = std::min(kc_block, g.k - pc), kp = (kc + 1) / 2;
      if (g.trans_b) {
        for (int64_t jp = 0; jp < n_panels; ++jp) {
          const int64_t j0 = jc + jp * kNR, lanes = std::min(kNR, g.n - j0);
          with_b([&](auto* b) {
            pack_k_contiguous_panel(b + j0 * g.ldb + pc, g.ldb, lanes, kNR, kc, buf.b.data() + jp * kNR * kp);
          });
        }
      } else {
        with_b([&](auto* b) { pack_k_rows(b + pc * g.ldb + jc, g.ldb, nc, kNR, n_panels, kc, buf.b.data()); });
      }
      const float beta_c = pc == 0 ? g.beta : 1.0f;
      for (int64_t ic = 0; ic < g.m; ic += mc_block) {
        const int64_t mc = std::min(mc_block, g.m - ic), m_panels = (mc + kMR - 1) / kMR;
        const int64_t full_panels = mc / kMR;  // read in place when a_in_place; a partial last panel is copied
        // A with k contiguous becomes rows of pairs (a conversion, no transpose); a transposed A, whose k rows
        // are contiguous along m, is packed into panels (two rows interleaved). Padding rows are zero.
        if (g.trans_a) {
          with_a([&](auto* a) { pack_k_rows(a + pc * g.lda + ic, g.lda, mc, kMR, m_panels, kc, buf.a.data()); });
        } else {
          const int64_t first = a_in_place ? full_panels * kMR : 0;  // rows [first, mc) go through the buffer
          with_a([&](auto* a) {
            convert_rows(a + (ic + first) * g.lda + pc, g.lda, mc - first, kc, buf.a.data() + first * kp);
          });
          std::fill(buf.a.data() + mc * kp, buf.a.data() + m_panels * kMR * kp, 0u);
        }
        for (int64_t jp = 0; jp < n_panels; ++jp) {
          const int64_t j0 = jc + jp * kNR, nr = std::min(kNR, g.n - j0);
          for (int64_t ip = 0; ip < m_panels; ++ip) {
            const int64_t i0 = ic + ip * kMR, mr = std::min(kMR, g.m - i0);
            float* c = g.c + i0 * g.ldc + j0;
            const uint32_t* b = buf.b.data() + jp * kNR * kp;
            if (g.trans_a)
              micro_kernel<kMR>(kp, buf.a.data() + ip * kMR * kp, 1, b, c, g.ldc, mr, nr, g.alpha, beta_c);
            else if (a_in_place && ip < full_panels)
              micro_kernel<1>(kp, reinterpret_cast<const uint32_t*>(g.a_bf16 + i0 * g.lda + pc), g.lda / 2, b, c,
                              g.ldc, mr, nr, g.alpha, beta_c);
            else
              micro_kernel<1>(kp, buf.a.data() + ip * kMR * kp, kp, b, c, g.ldc, mr, nr, g.alpha, beta_c);
          }
        }
      }
    }
  }
}

void gemm_bf16_reference(const GemmCall& g) {
  auto r = [](float x) { return double(bf16_to_float(float_to_bf16(x))); };
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < g.k; ++p) {
        const int64_t ai = g.trans_a ? p * g.lda + i : i * g.lda + p, bi = g.trans_b ? j * g.ldb + p : p * g.ldb + j;
        const double av = g.a_bf16 ? double(bf16_to_float(g.a_bf16[ai])) : r(g.a[ai]);
        const double bv = g.b_bf16 ? double(bf16_to_float(g.b_bf16[bi])) : r(g.b[bi]);
        s += av * bv;
      }
      const double prev = g.beta == 0.0f ? 0.0 : double(g.beta) * g.c[i * g.ldc + j];
      g.c[i * g.ldc + j] = float(double(g.alpha) * s + prev);
    }
}

}  // namespace trex::nn
