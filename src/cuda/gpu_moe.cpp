// cuda::Model's MoE block (DEEPSEEK_V4.md §7, §13, §16.6-16.7), model/moe.cpp's forward and backward on the
// device: the router product, routing and grouping (cuda/moe_route.hpp), the per-expert counts to the host (a wait:
// they size the expert products), the routed experts (cuda/experts.hpp), the shared expert, the combine and the
// sequence-balance loss.
// Expert parallelism (Ctx::ep_group of size > 1; the experts array then holds this rank's experts only): the routed
// rows go to the ranks owning their experts and the results come back in model/moe.cpp's order, with its plan and
// permutations (detail::ep_plan, ep_to_expert_order, ep_from_expert_order) on the host. Each exchange is staged
// through pinned host buffers — device -> host, the group's blocking all-to-all, host -> device — and the host waits
// once, for the downloads alone: the shared expert's kernels are queued behind them, so the device runs them while
// the host exchanges (the CPU overlaps the two as well): in the forward its up and gate products with the dispatch
// and its down product with the combine, in the backward its down and SwiGLU backward with the dispatch and its
// up and gate backward with the combine. Without expert parallelism the shared expert's up and gate products run
// likewise while the host waits for the per-expert counts (pinned). The same kernels as without the overlap, each
// reading and writing what it did, so the same bits. Compiled; not yet run on a GPU.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <functional>
#include <initializer_list>

#include "cuda/check.hpp"
#include "cuda/gpu_model_impl.hpp"
#include "cuda/moe_route.hpp"
#include "cuda/ops.hpp"
#include "util/error.hpp"

namespace trex::cuda::gm {

PinnedFloats::~PinnedFloats() {
  if (p_) cudaFreeHost(p_);  // no throw from a destructor
}

float* PinnedFloats::reserve(int64_t n, cudaStream_t s) {
  const size_t want = std::max<size_t>(1, size_t(std::max<int64_t>(0, n)));
  if (want <= n_) return p_;
  TREX_CUDA_CHECK(cudaStreamSynchronize(s));
  if (p_) TREX_CUDA_CHECK(cudaFreeHost(p_));
  p_ = nullptr;
  n_ = 0;
  void* p = nullptr;
  TREX_CUDA_CHECK(cudaMallocHost(&p, want * sizeof(float)));
  p_ = static_cast<float*>(p);
  n_ = want;
  return p_;
}

namespace {

bool expert_parallel(const Ctx& c) { return c.ep_group && c.ep_group->size() > 1; }

// One device array of routed rows that an exchange moves: src on this side, dst on the other, row_len floats a row.
struct RowArray {
  const float* src;
  float* dst;
  int64_t row_len;
};

// The staging buffers of each array, every one reserved for the larger side before any copy is queued (growing
// drains the stream).
void reserve_staging(Ctx& c, const model::detail::EpPlan& P, int64_t token_rows, std::initializer_list<RowArray> arrays,
                     float** local, float** exchanged) {
  if (arrays.size() > size_t(MoeHostBuffers::kArrays)) throw Error("internal: too many arrays in one expert exchange");
  const int64_t rows = std::max(token_rows, P.rows);
  int i = 0;
  for (const RowArray& a : arrays) {
    local[i] = c.moe_host->local[i].reserve(rows * a.row_len, c.s);
    exchanged[i] = c.moe_host->exchanged[i].reserve(rows * a.row_len, c.s);
    ++i;
  }
}

// Device work queued while an exchange's downloads are in flight (the shared expert's part of the block): the
// device runs it while the host waits for the downloads and exchanges; its results are read after the exchange.
using Meanwhile = std::function<void()>;

// An event recorded after the downloads queued so far, `meanwhile` queued behind it, then a wait for the event alone:
// the device runs `meanwhile` while the host waits for the downloads (and then works with them).
void wait_for_downloads(Ctx& c, const Meanwhile& meanwhile) {
  std::optional<Event>& downloaded = c.moe_host->downloaded;
  if (!downloaded) downloaded.emplace();
  downloaded->record(c.s);
  meanwhile();
  downloaded->synchronize();
}

// Each array's first `rows` rows device -> local staging, then `meanwhile` queued behind them, then one wait for the
// downloads (an event recorded after them). The wait also completes every upload queued earlier from the staging
// buffers, so the host may rewrite them afterwards.
void download_rows(Ctx& c, int64_t rows, std::initializer_list<RowArray> arrays, float** local,
                   const Meanwhile& meanwhile) {
  int i = 0;
  for (const RowArray& a : arrays) {
    const size_t bytes = sizeof(float) * size_t(rows * a.row_len);
    if (bytes) TREX_CUDA_CHECK(cudaMemcpyAsync(local[i], a.src, bytes, cudaMemcpyDeviceToHost, c.s));
    ++i;
  }
  wait_for_downloads(c, meanwhile);
}

void upload_rows(Ctx& c, const float* host, float* dst, int64_t rows, int64_t row_len) {
  const size_t bytes = sizeof(float) * size_t(rows * row_len);
  if (bytes) upload_async(dst, host, bytes, c.s);
}

// Token side -> expert side (model/moe.cpp's dispatch): src holds this rank's token_rows = N k routed rows in
// all-expert order, which is rank-major (each rank owns a contiguous range of experts), so it is sent as it is;
// dst receives the P.rows rows of this rank's experts from every rank, in local expert order.
void dispatch(Ctx& c, const model::detail::EpPlan& P, int64_t token_rows, std::initializer_list<RowArray> arrays,
              const Meanwhile& meanwhile) {
  float *local[MoeHostBuffers::kArrays], *exchanged[MoeHostBuffers::kArrays];
  reserve_staging(c, P, token_rows, arrays, local, exchanged);
  download_rows(c, token_rows, arrays, local, meanwhile);
  int i = 0;
  for (const RowArray& a : arrays) {
    c.ep_group->all_to_all_rows(local[i], P.send_rows, exchanged[i], P.recv_rows, a.row_len);
    model::detail::ep_to_expert_order(P, exchanged[i], local[i], a.row_len);
    upload_rows(c, local[i], a.dst, P.rows, a.row_len);
    ++i;
  }
}

// Expert side -> token side (model/moe.cpp's combine): src holds P.rows rows in local expert order; each goes back to
// the rank whose token it is, and dst receives this rank's token_rows rows in its all-expert order.
void combine(Ctx& c, const model::detail::EpPlan& P, int64_t token_rows, std::initializer_list<RowArray> arrays,
             const Meanwhile& meanwhile) {
  float *local[MoeHostBuffers::kArrays], *exchanged[MoeHostBuffers::kArrays];
  reserve_staging(c, P, token_rows, arrays, local, exchanged);
  download_rows(c, P.rows, arrays, local, meanwhile);
  int i = 0;
  for (const RowArray& a : arrays) {
    model::detail::ep_from_expert_order(P, local[i], exchanged[i], a.row_len);
    c.ep_group->all_to_all_rows(exchanged[i], P.recv_rows, local[i], P.send_rows, a.row_len);
    upload_rows(c, local[i], a.dst, token_rows, a.row_len);
    ++i;
  }
}

// The routed rows this rank's experts process, how many experts and their row offsets: the exchange's plan under
// expert parallelism, else every routed row and expert.
struct LocalExperts {
  int64_t rows = 0, count = 0;
  const int64_t* offsets = nullptr;
};
LocalExperts local_experts(const MoeSaved& s, bool ep, int64_t rows, int64_t E) {
  if (ep) return {s.ep.rows, s.ep.local_experts, s.ep.offsets.data()};
  return {rows, E, s.offsets.data()};
}

}  // namespace

double moe_forward(Ctx& c, const DeviceSeq& seq, const BlockOff& b, const DeviceExpertWeights* experts,
                   const float* x, MoeSaved& s, float* out) {
  const ModelConfig& cfg = c.cfg;
  const int64_t N = seq.N, d = cfg.hidden_size, E = cfg.n_routed_experts, k = cfg.num_experts_per_tok;
  const int64_t f = cfg.moe_intermediate_size, fs = f * cfg.n_shared_experts;
  const float R = float(cfg.routed_scaling_factor), limit = float(cfg.swiglu_limit);
  s.x = x;
  s.x16 = bf16_copy(c, x, N * d);  // read by the router and the shared expert's two products
  s.s = c.arena.floats(N * E);
  s.a = c.arena.floats(N * E);
  s.w = c.arena.floats(N * k);
  s.sel = c.arena.ints(N * k);
  linear(c, x, s.x16, b.gate, s.s, N, E, d);
  const float* bias = b.gate_bias >= 0 ? c.p(b.gate_bias) : nullptr;
  const int64_t* tid2eid = b.hash ? c.tid2eid(b) : nullptr;
  moe_route_forward(s.s, b.hash ? nullptr : bias, tid2eid, seq.tokens, N, E, k, R, s.a, s.sel, s.w, c.s);
  int64_t* counts_d = reinterpret_cast<int64_t*>(c.arena.raw(sizeof(int64_t) * size_t(E)));
  int64_t* offsets_d = reinterpret_cast<int64_t*>(c.arena.raw(sizeof(int64_t) * size_t(E + 1)));
  s.order_tok = c.arena.ints(N * k);
  s.order_slot = c.arena.ints(N * k);
  s.row_of = c.arena.ints(N * k);
  moe_group_rows(s.sel, N, E, k, counts_d, offsets_d, s.order_tok, s.order_slot, s.row_of, c.arena, c.s);
  s.counts.assign(size_t(E), 0);
  // the shared expert's up and gate products and SwiGLU: with the counts' download without expert parallelism, with
  // the dispatch under it — either way the device runs them while the host waits
  auto shared_up = [&] {
    if (fs == 0) return;
    s.sg = c.arena.floats(N * fs);
    s.su = c.arena.floats(N * fs);
    s.sh = c.arena.floats(N * fs);
    linear(c, x, s.x16, b.sw1, s.sg, N, fs, d);
    linear(c, x, s.x16, b.sw3, s.su, N, fs, d);
    swiglu_forward(s.sg, s.su, s.sh, N * fs, cfg.clamp_shared_expert ? limit : 0.0f, c.s);
  };
  const bool ep = expert_parallel(c);
  const bool up_with_counts = !ep && fs > 0 && c.moe_host;
  if (up_with_counts) {
    auto* pinned = reinterpret_cast<int64_t*>(c.moe_host->counts.reserve(2 * E, c.s));
    TREX_CUDA_CHECK(cudaMemcpyAsync(pinned, counts_d, sizeof(int64_t) * size_t(E), cudaMemcpyDeviceToHost, c.s));
    wait_for_downloads(c, shared_up);
    std::copy(pinned, pinned + E, s.counts.begin());
  } else {
    moe_counts_to_host(counts_d, E, s.counts.data(), c.s);
  }
  s.offsets.assign(size_t(E) + 1, 0);
  for (int64_t e = 0; e < E; ++e) s.offsets[size_t(e) + 1] = s.offsets[size_t(e)] + s.counts[size_t(e)];
  const int64_t rows = N * k;
  s.xg = c.arena.floats(rows * d);
  s.wl = c.arena.floats(rows);
  moe_gather_rows(x, s.w, s.order_tok, s.order_slot, rows, k, d, s.xg, s.wl, c.s);
  // this rank's experts' rows: exchanged under expert parallelism, else the gathered rows themselves
  if (ep) {
    model::detail::ep_plan(*c.ep_group, s.counts, E, s.ep);
    s.xe = c.arena.floats(s.ep.rows * d);
    s.we = c.arena.floats(s.ep.rows);
    dispatch(c, s.ep, rows, {{s.xg, s.xe, d}, {s.wl, s.we, 1}}, shared_up);
  } else {
    s.xe = s.xg;
    s.we = s.wl;
    if (!up_with_counts) shared_up();
  }
  const LocalExperts L = local_experts(s, ep, rows, E);
  const int64_t Re = L.rows;
  s.g = c.arena.floats(Re * f);
  s.u = c.arena.floats(Re * f);
  s.h = c.arena.floats(Re * f);
  float* ye = c.arena.floats(Re * d);
  experts_forward(c.blas, c.type, experts, L.count, L.offsets, {d, f, limit}, s.xe, s.we, s.g, s.u, s.h, ye, c.arena,
                  c.s);
  // out := the shared expert's down product (with the combine under expert parallelism), then the routed rows added
  auto shared_down = [&] {
    if (fs > 0)
      linear(c, s.sh, nullptr, b.sw2, out, N, d, fs);
    else
      zero_async(out, sizeof(float) * size_t(N * d), c.s);
  };
  float* yg = ye;  // [rows, d] the results of this rank's routed rows, all-expert order
  if (ep) {
    yg = c.arena.floats(rows * d);
    combine(c, s.ep, rows, {{ye, yg, d}}, shared_down);
  } else {
    shared_down();
  }
  moe_scatter_add_rows(s.row_of, N, k, d, yg, out, c.s);
  s.seq_counts = nullptr;
  if (b.hash || !c.balance_loss) return 0.0;  // (the decoder: no loss to report, and no synchronisation for it)
  double* row_loss = c.arena.doubles(seq.B);
  s.seq_counts = c.arena.ints(seq.B * E);
  moe_balance_loss(s.a, s.sel, seq.B, seq.T, E, k, cfg.seq_balance_alpha, row_loss, s.seq_counts, c.arena, c.s);
  return sum_row_losses(row_loss, seq.B, c.s);
}

void moe_backward(Ctx& c, const DeviceSeq& seq, const BlockOff& b, const DeviceExpertWeights* experts,
                  const MoeSaved& s, const float* dout, float* dx) {
  const ModelConfig& cfg = c.cfg;
  const int64_t N = seq.N, d = cfg.hidden_size, E = cfg.n_routed_experts, k = cfg.num_experts_per_tok;
  const int64_t f = cfg.moe_intermediate_size, fs = f * cfg.n_shared_experts;
  const float R = float(cfg.routed_scaling_factor), limit = float(cfg.swiglu_limit);
  const int64_t rows = N * k;
  const bool ep = expert_parallel(c);
  const LocalExperts L = local_experts(s, ep, rows, E);
  const int64_t Re = L.rows;
  float* dyg = c.arena.floats(rows * d);
  moe_gather_rows(dout, nullptr, s.order_tok, s.order_slot, rows, k, d, dyg, nullptr, c.s);
  // the shared expert's down product and SwiGLU backward (with the dispatch under expert parallelism)
  float *dsg = nullptr, *dsu = nullptr;
  auto shared_down_backward = [&] {
    if (fs == 0) return;
    float* dsh = c.arena.floats(N * fs);
    linear_backward(c, s.sh, nullptr, b.sw2, dout, nullptr, dsh, false, N, d, fs);
    dsg = c.arena.floats(N * fs);
    dsu = c.arena.floats(N * fs);
    swiglu_backward(s.sg, s.su, dsh, dsg, dsu, N * fs, cfg.clamp_shared_expert ? limit : 0.0f, c.s);
  };
  float* dye = dyg;  // [Re, d] the output gradients of the rows this rank's experts processed
  if (ep) {
    dye = c.arena.floats(Re * d);
    dispatch(c, s.ep, rows, {{dyg, dye, d}}, shared_down_backward);
  } else {
    shared_down_backward();
  }
  float* dwe = c.arena.floats(Re);
  float* dxe = c.arena.floats(Re * d);
  experts_backward(c.blas, c.type, experts, L.count, L.offsets, {d, f, limit}, s.xe, s.we, s.g, s.u, s.h, dye, dxe,
                   dwe, c.arena, c.s);
  // [rows, d], [rows]: the input and routing-weight gradients of this rank's routed rows, all-expert order (under
  // expert parallelism sent back from the experts' owners)
  // the shared expert's up and gate backward into dx (with the combine under expert parallelism), then the routed
  // rows' input gradients added: dx's sums in the same order either way
  auto shared_up_backward = [&] {
    if (fs == 0) return;
    linear_backward(c, s.x, s.x16, b.sw1, dsg, nullptr, dx, true, N, fs, d);
    linear_backward(c, s.x, s.x16, b.sw3, dsu, nullptr, dx, true, N, fs, d);
  };
  float *dxg = dxe, *dwl = dwe;
  if (ep) {
    dxg = c.arena.floats(rows * d);
    dwl = c.arena.floats(rows);
    combine(c, s.ep, rows, {{dxe, dxg, d}, {dwe, dwl, 1}}, shared_up_backward);
  } else {
    shared_up_backward();
  }
  moe_scatter_add_rows(s.row_of, N, k, d, dxg, dx, c.s);
  float* ds = c.arena.floats(N * E);
  moe_route_backward(s.s, s.a, s.sel, dwl, s.row_of, b.hash ? nullptr : s.seq_counts, N, E, k, R, seq.B, seq.T,
                     cfg.seq_balance_alpha, ds, c.s);
  linear_backward(c, s.x, s.x16, b.gate, ds, nullptr, dx, true, N, E, d);
}

}  // namespace trex::cuda::gm
