// The glue op checks (glue_cases.hpp): cuda/model_glue against model/model.cpp's loops, bitwise. Each oracle below
// is the model's loop as it stands in forward_range / backward_range (the variables renamed to the arguments); the
// device does the same operations in the same order (model_glue.hpp), so no tolerance is needed and none is given.
#include "glue_cases.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "cuda/check.hpp"

namespace trex::cuda::check {

// ---------------------------------------------------------------- oracles
void embedding_forward_cpu(const float* embed, const int32_t* tokens, int64_t rows, int64_t n, int64_t d, float* X) {
  // model.cpp forward_range: "embedding: every stream starts as the token's embedding"
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t k = 0; k < n; ++k) std::memcpy(X + (i * n + k) * d, embed + int64_t(tokens[i]) * d, size_t(d) * 4);
}

void embedding_backward_cpu(const int32_t* tokens, int64_t rows, int64_t n, int64_t d, const float* dX, float* gE) {
  // model.cpp backward_range, the last loop (n = 1, tokens = the module's shifted tokens: the MTP module's loop)
  for (int64_t i = 0; i < rows; ++i) {
    float* g = gE + int64_t(tokens[i]) * d;
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < d; ++j) g[j] += dX[(i * n + k) * d + j];
  }
}

void embedding_backward_lists_twin(const EmbeddingLists& L, int64_t n, int64_t d, const float* dX, float* gE,
                                   bool reversed) {
  for (int64_t u = 0; u < L.distinct(); ++u) {
    const int64_t beg = L.offsets[size_t(u)], end = L.offsets[size_t(u + 1)];
    for (int64_t j = 0; j < d; ++j) {
      float acc = gE[int64_t(L.ids[size_t(u)]) * d + j];
      for (int64_t q = 0; q < end - beg; ++q) {
        const int64_t p = L.positions[size_t(reversed ? end - 1 - q : beg + q)];
        for (int64_t k = 0; k < n; ++k) acc += dX[(p * n + k) * d + j];
      }
      gE[int64_t(L.ids[size_t(u)]) * d + j] = acc;
    }
  }
}

void add_to_streams_cpu(float* X, const float* e, int64_t rows, int64_t n, int64_t d) {
  // model.cpp forward_range's MTP module: ms.Xm[(r * n + k) * d + j] += ep[r * d + j]
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < d; ++j) X[(r * n + k) * d + j] += e[r * d + j];
}

void sum_streams_cpu(const float* dX, int64_t rows, int64_t n, int64_t d, float* out) {
  // model.cpp backward_range's MTP module: dep = arena.zeros(Nm * d); dep[r * d + j] += dXm[(r * n + k) * d + j]
  std::fill(out, out + rows * d, 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < d; ++j) out[r * d + j] += dX[(r * n + k) * d + j];
}

std::vector<int32_t> mtp_tokens_cpu(const int32_t* tokens, int64_t B, int64_t T, int64_t Tm, int64_t shift) {
  // model.cpp forward_range's MTP module i (shift = i + 1): embed[bt.tokens[b * T + t + i + 1]]
  std::vector<int32_t> tok(size_t(B * Tm));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < Tm; ++t) tok[size_t(b * Tm + t)] = tokens[b * T + t + shift];
  return tok;
}

std::vector<float> spread(Rng& r, size_t count) {
  std::vector<float> v(count);
  for (float& x : v) {
    const double m = r.uniform(1.0, 2.0) * (r.uniform() < 0.5 ? -1.0 : 1.0);
    x = float(std::ldexp(m, int(r.uniform_int(-12, 11))));
  }
  return v;
}

std::vector<int32_t> draw_tokens(Rng& r, int64_t count, int64_t V, bool skewed) {
  std::vector<int32_t> t(static_cast<size_t>(count));
  for (auto& x : t) x = int32_t(skewed && r.uniform() < 0.4 ? 0 : r.uniform_int(0, V - 1));
  if (skewed && count >= 2) {
    t[size_t(r.uniform_int(0, count - 1))] = 0;
    t[size_t(r.uniform_int(0, count - 1))] = int32_t(V - 1);
  }
  return t;
}

Compare same_bits(const std::string& what, const std::vector<float>& gpu, const std::vector<float>& ref) {
  Compare c;
  c.what = what + " (bitwise)";
  c.n = int64_t(ref.size());
  if (gpu.size() != ref.size()) {
    c.bad = c.n + 1;
    return c;
  }
  for (size_t i = 0; i < ref.size(); ++i)
    if (std::memcmp(&gpu[i], &ref[i], 4) != 0) {
      if (c.worst < 0) c.worst = int64_t(i);
      ++c.bad;
      c.max_abs = std::max(c.max_abs, double(std::fabs(gpu[i] - ref[i])));
    }
  c.worst_ratio = c.bad ? 2.0 : 0.0;
  return c;
}

namespace {

// A device copy of floats, optionally one float past the allocation's (256-byte aligned) start.
struct DevFloats {
  DeviceBuffer b;
  size_t off = 0, n = 0;
  float* p() const { return b.as<float>() + off; }
};

DevFloats dev_floats(size_t n, bool misalign) {
  DevFloats d;
  d.off = misalign ? 1 : 0;
  d.n = n;
  d.b = DeviceBuffer((n + 1) * sizeof(float));
  return d;
}

DevFloats dev_floats(const std::vector<float>& v, bool misalign) {
  DevFloats d = dev_floats(v.size(), misalign);
  if (!v.empty()) d.b.upload(v.data(), v.size() * sizeof(float), d.off * sizeof(float));
  return d;
}

void nan_fill(Harness& h, const DevFloats& d) {  // every element a kernel must write starts as NaN (0xffffffff)
  TREX_CUDA_CHECK(cudaMemsetAsync(d.b.as<void>(), 0xff, d.b.bytes(), h.stream()));
}

std::vector<float> get(Harness& h, const DevFloats& d) {
  h.stream().synchronize();
  std::vector<float> v(d.n);
  if (d.n) d.b.download(v.data(), d.n * sizeof(float), d.off * sizeof(float));
  return v;
}

std::vector<float> nans(size_t n) {
  std::vector<float> v(n);
  std::memset(v.data(), 0xff, n * sizeof(float));
  return v;
}

struct DevLists {
  DeviceBuffer ids, offsets, positions;
  int64_t distinct = 0;
};

DevLists upload_lists(Harness& h, const EmbeddingLists& L) {
  return DevLists{h.upload(L.ids), h.upload(L.offsets), h.upload(L.positions), L.distinct()};
}

void run_backward(Harness& h, const DevLists& L, const DevFloats& dX, int64_t n, int64_t d, const DevFloats& gE) {
  embedding_backward(L.ids.as<int32_t>(), L.offsets.as<int32_t>(), L.positions.as<int32_t>(), L.distinct, dX.p(), n,
                     d, gE.p(), h.stream());
}

std::string tag(bool misalign) { return misalign ? " misaligned" : ""; }

}  // namespace

// ---------------------------------------------------------------- checks
OpReport check_embedding(Harness& h, int64_t B, int64_t T, int64_t n, int64_t d, int64_t V, bool skewed,
                         bool misalign) {
  OpReport rep;
  rep.op = "embedding";
  rep.shape = "B=" + std::to_string(B) + " T=" + std::to_string(T) + " n=" + std::to_string(n) +
              " d=" + std::to_string(d) + " V=" + std::to_string(V) + (skewed ? " skewed" : "") + tag(misalign);
  Rng r(0x91e0 + uint64_t(B * 1000003 + T * 101 + n * 7 + d) + (skewed ? 1 : 0));
  const int64_t N = B * T, Tm = T - 1, Nm = B * Tm;
  const std::vector<int32_t> tokens = draw_tokens(r, N, V, skewed);
  const std::vector<int32_t> etok = mtp_tokens_cpu(tokens.data(), B, T, Tm, 1);
  const std::vector<float> embed = spread(r, size_t(V * d)), gE0 = spread(r, size_t(V * d));
  const std::vector<float> dX = spread(r, size_t(N * n * d)), de = spread(r, size_t(std::max<int64_t>(Nm, 0) * d));

  DeviceBuffer tok_d = h.upload(tokens);
  const DevFloats embed_d = dev_floats(embed, misalign);
  // forward: X0 [N, n, d] and the MTP's e [Nm, d]
  {
    const DevFloats X = dev_floats(size_t(N * n * d), misalign);
    nan_fill(h, X);
    embedding_forward(embed_d.p(), tok_d.as<int32_t>(), N, n, d, X.p(), h.stream());
    std::vector<float> ref(size_t(N * n * d));
    embedding_forward_cpu(embed.data(), tokens.data(), N, n, d, ref.data());
    rep.checks.push_back(same_bits("X0 = embed[tokens]", get(h, X), ref));
  }
  if (Nm > 0) {
    DeviceBuffer etok_d = h.upload(etok);
    const DevFloats e = dev_floats(size_t(Nm * d), misalign);
    nan_fill(h, e);
    embedding_forward(embed_d.p(), etok_d.as<int32_t>(), Nm, 1, d, e.p(), h.stream());
    std::vector<float> ref(size_t(Nm * d));
    embedding_forward_cpu(embed.data(), etok.data(), Nm, 1, d, ref.data());
    rep.checks.push_back(same_bits("MTP e = embed[tokens shifted by 1]", get(h, e), ref));
  }
  // backward in the model's order: the MTP module's rows, then the main path's, onto gE0
  const DevFloats gE = dev_floats(gE0, misalign);
  embedding_backward(nullptr, nullptr, nullptr, 0, nullptr, n, d, gE.p(), h.stream());  // nothing to add: a no-op
  std::vector<float> ref = gE0;
  rep.checks.push_back(same_bits("gE after an empty list", get(h, gE), ref));
  if (Nm > 0) {
    const DevFloats de_d = dev_floats(de, misalign);
    const DevLists L = upload_lists(h, build_embedding_lists(etok.data(), Nm, V));
    run_backward(h, L, de_d, 1, d, gE);
    embedding_backward_cpu(etok.data(), Nm, 1, d, de.data(), ref.data());
    rep.checks.push_back(same_bits("gE += MTP rows", get(h, gE), ref));
  }
  const DevFloats dX_d = dev_floats(dX, misalign);
  const DevLists L = upload_lists(h, build_embedding_lists(tokens.data(), N, V));
  run_backward(h, L, dX_d, n, d, gE);
  embedding_backward_cpu(tokens.data(), N, n, d, dX.data(), ref.data());
  rep.checks.push_back(same_bits("gE += main streams", get(h, gE), ref));
  return rep;
}

OpReport check_streams(Harness& h, int64_t rows, int64_t n, int64_t d, bool misalign) {
  OpReport rep;
  rep.op = "streams";
  rep.shape = "rows=" + std::to_string(rows) + " n=" + std::to_string(n) + " d=" + std::to_string(d) + tag(misalign);
  Rng r(0x57e0 + uint64_t(rows * 1009 + n * 31 + d));
  const std::vector<float> X0 = spread(r, size_t(rows * n * d)), e = spread(r, size_t(rows * d));
  const std::vector<float> dX = spread(r, size_t(rows * n * d));
  {
    const DevFloats X = dev_floats(X0, misalign), e_d = dev_floats(e, misalign);
    add_to_streams(X.p(), e_d.p(), rows, n, d, h.stream());
    std::vector<float> ref = X0;
    add_to_streams_cpu(ref.data(), e.data(), rows, n, d);
    rep.checks.push_back(same_bits("Xm += ep over the streams", get(h, X), ref));
  }
  {
    const DevFloats dX_d = dev_floats(dX, misalign), out = dev_floats(size_t(rows * d), misalign);
    nan_fill(h, out);
    sum_streams(dX_d.p(), rows, n, d, out.p(), h.stream());
    std::vector<float> ref(size_t(rows * d));
    sum_streams_cpu(dX.data(), rows, n, d, ref.data());
    rep.checks.push_back(same_bits("dep = sum of the streams", get(h, out), ref));
  }
  return rep;
}

OpReport check_row_blocks(Harness& h, int64_t B, int64_t T, int64_t Tm, int64_t n, int64_t d, bool misalign) {
  OpReport rep;
  rep.op = "row blocks";
  rep.shape = "B=" + std::to_string(B) + " T=" + std::to_string(T) + " Tm=" + std::to_string(Tm) +
              " n=" + std::to_string(n) + " d=" + std::to_string(d) + tag(misalign);
  Rng r(0xb10c + uint64_t(B * 7919 + T * 131 + Tm * 17 + n * 3 + d));
  const int64_t wide = T * n * d, narrow = Tm * n * d;
  const std::vector<float> Xprev = spread(r, size_t(B * wide)), dprev0 = spread(r, size_t(B * wide));
  const std::vector<float> dXin = spread(r, size_t(B * narrow));
  const DevFloats Xprev_d = dev_floats(Xprev, misalign);
  {
    // model.cpp: memcpy(ms.Xin + b * Tm * n * d, Xprev + b * Tprev * n * d, Tm * n * d floats)
    const DevFloats Xin = dev_floats(size_t(B * narrow), misalign);
    nan_fill(h, Xin);
    copy_row_blocks(Xprev_d.p(), wide, Xin.p(), narrow, narrow, B, h.stream());
    std::vector<float> ref(size_t(B * narrow));
    for (int64_t b = 0; b < B; ++b) std::memcpy(ref.data() + b * narrow, Xprev.data() + b * wide, size_t(narrow) * 4);
    rep.checks.push_back(same_bits("Xin = Xprev[:, :Tm]", get(h, Xin), ref));
  }
  {
    // model.cpp: dprev[b * Tprev_i * n * d + j] += dXin[b * Tm * n * d + j] for j < Tm n d
    const DevFloats dprev = dev_floats(dprev0, misalign), dXin_d = dev_floats(dXin, misalign);
    add_row_blocks(dXin_d.p(), narrow, dprev.p(), wide, narrow, B, h.stream());
    std::vector<float> ref = dprev0;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < narrow; ++j) ref[size_t(b * wide + j)] += dXin[size_t(b * narrow + j)];
    rep.checks.push_back(same_bits("dprev[:, :Tm] += dXin", get(h, dprev), ref));
  }
  {
    // the other direction, into rows wider than the copy: each row's tail keeps its NaN
    const DevFloats dXin_d = dev_floats(dXin, misalign), back = dev_floats(size_t(B * wide), misalign);
    nan_fill(h, back);
    copy_row_blocks(dXin_d.p(), narrow, back.p(), wide, narrow, B, h.stream());
    std::vector<float> ref = nans(size_t(B * wide));
    for (int64_t b = 0; b < B; ++b) std::memcpy(ref.data() + b * wide, dXin.data() + b * narrow, size_t(narrow) * 4);
    rep.checks.push_back(same_bits("[B, Tm] copied into [B, T], tails untouched", get(h, back), ref));
  }
  return rep;
}

OpReport check_flat(Harness& h, int64_t count, bool misalign) {
  OpReport rep;
  rep.op = "scale, accumulate";
  rep.shape = "count=" + std::to_string(count) + tag(misalign);
  Rng r(0xf1a7 + uint64_t(count));
  const std::vector<float> x = spread(r, size_t(count)), y0 = spread(r, size_t(count));
  const float a = float(r.uniform(0.1, 3.0));
  {
    const DevFloats xd = dev_floats(x, misalign);
    scale_in_place(xd.p(), count, a, h.stream());
    std::vector<float> ref = x;
    for (auto& v : ref) v *= a;
    rep.checks.push_back(same_bits("x *= a", get(h, xd), ref));
  }
  {
    const DevFloats xd = dev_floats(x, misalign), yd = dev_floats(y0, misalign);
    add_in_place(yd.p(), xd.p(), count, h.stream());
    std::vector<float> ref = y0;
    for (int64_t i = 0; i < count; ++i) ref[size_t(i)] += x[size_t(i)];
    rep.checks.push_back(same_bits("y += x", get(h, yd), ref));
  }
  return rep;
}

}  // namespace trex::cuda::check
