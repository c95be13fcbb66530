// cblas_sgemm driven from OpenMP (gemm_batch), and the references.
#include "nn/gemm.hpp"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "nn/gemm_bf16.hpp"
#include "nn/gemm_fixed_order.hpp"
#include "util/error.hpp"

namespace trex::nn {

namespace {

// OpenBLAS stays single-threaded inside trex: the parallelism is OpenMP's (see gemm.hpp).
void single_threaded_blas() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

void run_one(const GemmCall& g) {
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0) {
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) g.c[i * g.ldc + j] = g.beta == 0.0f ? 0.0f : g.beta * g.c[i * g.ldc + j];
    return;
  }
  if (bf16_matmul_active()) {  // mixed precision (gemm_bf16.hpp): bf16 operands, fp32 accumulation
    gemm_bf16(g);
    return;
  }
  if (g.rows_invariant) {
    gemm_fixed_order(g);
    return;
  }
  cblas_sgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans, g.trans_b ? CblasTrans : CblasNoTrans,
              int(g.m), int(g.n), int(g.k), g.alpha, g.a, int(g.lda), g.b, int(g.ldb), g.beta, g.c, int(g.ldc));
}

// Block `part` of `parts` of call g: rows of C when m >= n, else columns (blocks are multiples of 16).
GemmCall block_of(const GemmCall& g, int64_t part, int64_t parts) {
  GemmCall s = g;
  const bool rows = g.m >= g.n;
  const int64_t len = rows ? g.m : g.n;
  const int64_t step = ((len + parts - 1) / parts + 15) / 16 * 16;
  const int64_t lo = std::min(len, part * step), hi = std::min(len, lo + step);
  // (a null operand stays null: only its bf16 copy is given)
  auto shift = [](const auto* p, int64_t by) { return p ? p + by : p; };
  if (rows) {
    s.m = hi - lo;
    const int64_t by = g.trans_a ? lo : lo * g.lda;
    s.a = shift(g.a, by);
    s.a_bf16 = shift(g.a_bf16, by);
    s.c = g.c + lo * g.ldc;
  } else {
    s.n = hi - lo;
    const int64_t by = g.trans_b ? lo * g.ldb : lo;
    s.b = shift(g.b, by);
    s.b_bf16 = shift(g.b_bf16, by);
    s.c = g.c + lo;
  }
  return s;
}

}  // namespace

void gemm_batch(std::span<const GemmCall> calls) {
  single_threaded_blas();
  const int64_t count = int64_t(calls.size());
  if (count == 0) return;
  // Checked before any thread starts (an exception must not leave a parallel region); the batch-invariant
  // decoding kernels read fp32 operands only.
  if (!bf16_matmul_active() || batch_invariant_active())
    for (const auto& g : calls)
      if (!g.a || !g.b) throw Error("gemm: an operand given only in bf16 needs the bf16 path (Bf16MatmulScope)");
  if (batch_invariant_active()) {  // decoding: forward linears as fixed-order dots (gemm.hpp), one call at a time
    for (const auto& g : calls) {
      if (!g.trans_a && g.trans_b)
        gemm_nt_invariant(g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b, g.ldb, g.beta, g.c, g.ldc);
      else
        run_one(g);
    }
    return;
  }
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  double flops = 0;
  for (const auto& g : calls) flops += 2.0 * double(g.m) * double(g.n) * double(g.k);
  if (threads <= 1 || flops < 2e6) {  // small: a fork/join costs more than it saves
    for (const auto& g : calls) run_one(g);
    return;
  }
  // Cut each call into `parts` blocks so that there are at least `threads` pieces of work.
  const int64_t parts = count >= threads ? 1 : (threads + count - 1) / count;
  const int64_t pieces = count * parts;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (int64_t p = 0; p < pieces; ++p) {
    const GemmCall& g = calls[size_t(p / parts)];
    if (parts == 1)
      run_one(g);
    else
      run_one(block_of(g, p % parts, parts));
  }
}

void gemm_batch_reference(std::span<const GemmCall> calls) {
  for (const auto& g : calls)
    gemm_reference(g.trans_a, g.trans_b, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b, g.ldb, g.beta, g.c, g.ldc);
}

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const GemmCall g{trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc};
  gemm_batch({&g, 1});
}

void gemm_reference(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                    int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) {
        double av = trans_a ? a[p * lda + i] : a[i * lda + p];
        double bv = trans_b ? b[j * ldb + p] : b[p * ldb + j];
        s += av * bv;
      }
      double prev = beta == 0.0f ? 0.0 : double(beta) * c[i * ldc + j];
      c[i * ldc + j] = float(double(alpha) * s + prev);
    }
}

}  // namespace trex::nn
