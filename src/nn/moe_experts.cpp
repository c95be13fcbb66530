// Grouped routed-expert compute (see moe_experts.hpp).
#include "nn/moe_experts.hpp"

#include <omp.h>

#include <algorithm>
#include <vector>

#include "nn/gemm.hpp"
#include "nn/gemm_bf16.hpp"
#include "nn/ops.hpp"

namespace trex::nn {

namespace {

constexpr int64_t kBlockRows = 128;  // rows per task: a block's g, u (128 x f) stay in L2 between the GEMMs

// With bf16 matrix products each GEMM call converts and packs its weight operand (gemm_bf16.hpp), so a task
// re-reads 3 expert matrices (1.5 MB fp32 at d 256, f 512) for its rows: at 128 rows that packing cost ~30% of
// the tasks' GEMM time. Blocks of 512 rows (about a whole expert at the bench shape) pack each weight once or twice.
int64_t block_rows() { return bf16_matmul_active() ? 512 : kBlockRows; }

struct Task {
  int64_t expert, r0, r1;
};

// (expert, row block) tasks, largest blocks first so the dynamic schedule ends balanced.
void make_tasks(std::span<const ExpertWeights> experts, const int64_t* offsets, int64_t rows_per_task,
                std::vector<Task>& tasks) {
  tasks.clear();
  for (int64_t e = 0; e < int64_t(experts.size()); ++e)
    for (int64_t r = offsets[e]; r < offsets[e + 1]; r += rows_per_task)
      tasks.push_back(Task{e, r, std::min(offsets[e + 1], r + rows_per_task)});
  // Each task writes only its own rows, so the order changes no result; the routing is uneven (the busiest expert
  // often has twice the mean load), and a big block picked up last would leave the other threads idle.
  std::stable_sort(tasks.begin(), tasks.end(), [](const Task& a, const Task& b) { return a.r1 - a.r0 > b.r1 - b.r0; });
}

void scale_rows(const float* h, const float* w, float* hw, int64_t rows, int64_t f) {
  for (int64_t r = 0; r < rows; ++r) {
    const float wr = w[r];
#pragma omp simd
    for (int64_t j = 0; j < f; ++j) hw[r * f + j] = h[r * f + j] * wr;
  }
}
// The same products rounded to bf16 (the operand the bf16 products would make of them), a row at a time.
void scale_rows(const float* h, const float* w, uint16_t* hw, int64_t rows, int64_t f) {
  thread_local std::vector<float> row;
  if (row.size() < size_t(f)) row.resize(size_t(f));
  for (int64_t r = 0; r < rows; ++r) {
    scale_rows(h + r * f, w + r, row.data(), 1, f);
    round_to_bf16(row.data(), hw + r * f, f);
  }
}

template <class T>
T* at(T* p, int64_t offset) {  // p + offset, or null for an operand that is not kept
  return p ? p + offset : nullptr;
}

bool parallel_ok() { return !omp_in_parallel() && omp_get_max_threads() > 1; }

}  // namespace

void experts_forward(std::span<const ExpertWeights> experts, const int64_t* offsets, const ExpertShape& s,
                     const float* x, const float* w, float* g, float* u, float* h, float* y, Arena& scratch) {
  const int64_t d = s.d, f = s.f;
  const auto mark = scratch.mark();
  const int threads = parallel_ok() ? omp_get_max_threads() : 1;
  const int64_t br = block_rows();
  // Per thread: (w * h) of the current block. Under bf16 products the block's x (read by both up products) and
  // w * h are rounded once into bf16 buffers that the products read in place: the same bits, fewer passes.
  const bool bf16 = bf16_operand_copies();
  float* hw_all = bf16 ? nullptr : scratch.floats(threads * br * f);
  uint16_t* hw16_all = bf16 ? scratch.bf16s(threads * br * f) : nullptr;
  uint16_t* x16_all = bf16 ? scratch.bf16s(threads * br * d) : nullptr;
  std::vector<Task> tasks;
  make_tasks(experts, offsets, br, tasks);
  const int64_t nt = int64_t(tasks.size());
  gemm_batch({});  // makes OpenBLAS single-threaded before the tasks call it
#pragma omp parallel num_threads(threads)
  {
    const int64_t tid = omp_get_thread_num();
    float* hw = at(hw_all, tid * br * f);
    uint16_t* hw16 = at(hw16_all, tid * br * f);
    uint16_t* x16 = at(x16_all, tid * br * d);
#pragma omp for schedule(dynamic, 1)
    for (int64_t t = 0; t < nt; ++t) {
      const Task& k = tasks[size_t(t)];
      const ExpertWeights& e = experts[size_t(k.expert)];
      const int64_t o = k.r0, n = k.r1 - k.r0;
      if (x16) round_to_bf16(x + o * d, x16, n * d);
      GemmCall up[2] = {linear_call(x + o * d, e.w1, g + o * f, n, f, d),
                        linear_call(x + o * d, e.w3, u + o * f, n, f, d)};
      up[0].a_bf16 = up[1].a_bf16 = x16;
      up[0].rows_invariant = up[1].rows_invariant = true;  // a row's result must not depend on the batch (#20)
      gemm_batch(up);  // inside the parallel region: runs on this thread
      swiglu_forward(g + o * f, u + o * f, h + o * f, n * f, s.limit);
      if (hw16)
        scale_rows(h + o * f, w + o, hw16, n, f);
      else
        scale_rows(h + o * f, w + o, hw, n, f);
      GemmCall down = linear_call(hw, e.w2, y + o * d, n, d, f);
      down.a_bf16 = hw16;
      down.rows_invariant = true;
      gemm_batch({&down, 1});
    }
  }
  scratch.release(mark);
}

void experts_forward_reference(std::span<const ExpertWeights> experts, const int64_t* offsets, const ExpertShape& s,
                               const float* x, const float* w, float* g, float* u, float* h, float* y,
                               Arena& scratch) {
  const int64_t d = s.d, f = s.f, E = int64_t(experts.size()), rows = offsets[E];
  for (int64_t e = 0; e < E; ++e) {
    const int64_t o = offsets[e], n = offsets[e + 1] - o;
    if (n == 0) continue;
    linear(x + o * d, experts[size_t(e)].w1, g + o * f, n, f, d);
    linear(x + o * d, experts[size_t(e)].w3, u + o * f, n, f, d);
  }
  swiglu_forward(g, u, h, rows * f, s.limit);
  const auto mark = scratch.mark();
  float* hw = scratch.floats(rows * f);  // routing weight applied before W2
  scale_rows(h, w, hw, rows, f);
  for (int64_t e = 0; e < E; ++e) {
    const int64_t o = offsets[e], n = offsets[e + 1] - o;
    if (n == 0) continue;
    linear(hw + o * f, experts[size_t(e)].w2, y + o * d, n, d, f);
  }
  scratch.release(mark);
}

void experts_backward(std::span<const ExpertWeights> experts, const int64_t* offsets, const ExpertShape& s,
                      const float* x, const float* w, const float* g, const float* u, const float* h, const float* dy,
                      float* dx, float* dw, Arena& scratch) {
  const int64_t d = s.d, f = s.f, E = int64_t(experts.size()), rows = offsets[E];
  if (rows == 0) return;
  const auto mark = scratch.mark();
  std::vector<Task> tasks;
  const int64_t br = block_rows();
  make_tasks(experts, offsets, br, tasks);
  const int64_t nt = int64_t(tasks.size());
  const int threads = parallel_ok() ? omp_get_max_threads() : 1;
  // w * h, dg and du for the weight gradients of step 2. Under bf16 products they are kept only in bf16 (the
  // products' operands), with dy and x rounded once for both of their products; dg, du of a block are formed
  // in per-thread fp32 buffers first. The same bits as rounding in the products.
  const bool bf16 = bf16_operand_copies();
  float* hw = bf16 ? nullptr : scratch.floats(rows * f);
  float* dg = bf16 ? nullptr : scratch.floats(rows * f);
  float* du = bf16 ? nullptr : scratch.floats(rows * f);
  uint16_t* hw16 = bf16 ? scratch.bf16s(rows * f) : nullptr;
  uint16_t* dg16 = bf16 ? scratch.bf16s(rows * f) : nullptr;
  uint16_t* du16 = bf16 ? scratch.bf16s(rows * f) : nullptr;
  uint16_t* dy16 = bf16 ? scratch.bf16s(rows * d) : nullptr;
  uint16_t* x16 = bf16 ? scratch.bf16s(rows * d) : nullptr;
  float* dgu_all = bf16 ? scratch.floats(threads * 2 * br * f) : nullptr;
  gemm_batch({});
  // 1. per row block: dhw = dy W2, dw = <dhw, h>, dh = w dhw, (dg, du) = SwiGLU', dx = dg W1 + du W3
  float* dhw_all = scratch.floats(threads * br * f);
#pragma omp parallel num_threads(threads)
  {
    const int64_t tid = omp_get_thread_num();
    float* dhw = dhw_all + tid * br * f;
    float* dgu = at(dgu_all, tid * 2 * br * f);
#pragma omp for schedule(dynamic, 1)
    for (int64_t t = 0; t < nt; ++t) {
      const Task& k = tasks[size_t(t)];
      const ExpertWeights& e = experts[size_t(k.expert)];
      const int64_t o = k.r0, n = k.r1 - k.r0;
      if (bf16) {
        round_to_bf16(dy + o * d, dy16 + o * d, n * d);
        round_to_bf16(x + o * d, x16 + o * d, n * d);
      }
      const GemmCall back = {false, false, n, f, d, 1.0f, dy + o * d, d, e.w2, f, 0.0f, dhw, f, at(dy16, o * d)};
      gemm_batch({&back, 1});
      for (int64_t r = 0; r < n; ++r) {
        const float* hr = h + (o + r) * f;
        float* q = dhw + r * f;
        const float wr = w[o + r];
        float acc = 0;
#pragma omp simd reduction(+ : acc)
        for (int64_t j = 0; j < f; ++j) {
          acc += q[j] * hr[j];
          q[j] *= wr;  // now dh
        }
        dw[o + r] = acc;
      }
      float* dgo = bf16 ? dgu : dg + o * f;
      float* duo = bf16 ? dgu + br * f : du + o * f;
      swiglu_backward(g + o * f, u + o * f, dhw, dgo, duo, n * f, s.limit);
      if (bf16) {
        round_to_bf16(dgo, dg16 + o * f, n * f);
        round_to_bf16(duo, du16 + o * f, n * f);
        scale_rows(h + o * f, w + o, hw16 + o * f, n, f);
      } else {
        scale_rows(h + o * f, w + o, hw + o * f, n, f);
      }
      const GemmCall in[2] = {linear_dx_call(e.w1, dgo, dx + o * d, n, f, d, false, at(dg16, o * f)),
                              linear_dx_call(e.w3, duo, dx + o * d, n, f, d, true, at(du16, o * f))};
      gemm_batch({&in[0], 1});
      gemm_batch({&in[1], 1});  // accumulates onto the first: in order
    }
  }
  // 2. weight gradients: one GEMM per (expert, matrix), over all of the expert's rows
  std::vector<GemmCall> wg;
  for (int64_t e = 0; e < E; ++e) {
    const int64_t o = offsets[e], n = offsets[e + 1] - o;
    if (n == 0) continue;
    const ExpertWeights& ew = experts[size_t(e)];
    wg.push_back(linear_dw_call(at(hw, o * f), dy + o * d, ew.g2, n, d, f, at(dy16, o * d), at(hw16, o * f)));
    wg.push_back(linear_dw_call(x + o * d, at(dg, o * f), ew.g1, n, f, d, at(dg16, o * f), at(x16, o * d)));
    wg.push_back(linear_dw_call(x + o * d, at(du, o * f), ew.g3, n, f, d, at(du16, o * f), at(x16, o * d)));
  }
  gemm_batch(wg);
  scratch.release(mark);
}

void experts_backward_reference(std::span<const ExpertWeights> experts, const int64_t* offsets,
                                const ExpertShape& s, const float* x, const float* w, const float* g, const float* u,
                                const float* h, const float* dy, float* dx, float* dw, Arena& scratch) {
  const int64_t d = s.d, f = s.f, E = int64_t(experts.size()), rows = offsets[E];
  if (rows == 0) return;
  const auto mark = scratch.mark();
  float* hw = scratch.floats(rows * f);
  float* dhw = scratch.floats(rows * f);
  float* dh = scratch.floats(rows * f);
  float* dg = scratch.floats(rows * f);
  float* du = scratch.floats(rows * f);
  scale_rows(h, w, hw, rows, f);
  for (int64_t e = 0; e < E; ++e) {
    const int64_t o = offsets[e], n = offsets[e + 1] - o;
    if (n == 0) continue;
    linear_backward(hw + o * f, experts[size_t(e)].w2, dy + o * d, dhw + o * f, experts[size_t(e)].g2, n, d, f);
  }
  for (int64_t r = 0; r < rows; ++r) {
    float acc = 0;
    for (int64_t j = 0; j < f; ++j) {
      acc += dhw[r * f + j] * h[r * f + j];
      dh[r * f + j] = dhw[r * f + j] * w[r];
    }
    dw[r] = acc;
  }
  swiglu_backward(g, u, dh, dg, du, rows * f, s.limit);
  for (int64_t e = 0; e < E; ++e) {
    const int64_t o = offsets[e], n = offsets[e + 1] - o;
    if (n == 0) continue;
    linear_backward(x + o * d, experts[size_t(e)].w1, dg + o * f, dx + o * d, experts[size_t(e)].g1, n, f, d);
    linear_backward(x + o * d, experts[size_t(e)].w3, du + o * f, dx + o * d, experts[size_t(e)].g3, n, f, d, true);
  }
  scratch.release(mark);
}

}  // namespace trex::nn
