// One optimizer step's pieces (see train_step.hpp).
#include "train/train_step.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace trex::train {

std::vector<TensorSlot> optimizer_slots(const std::vector<model::ParamInfo>& table, bool freeze_router,
                                        TensorRanges& updated, bool indexer_only) {
  std::vector<TensorSlot> slots;
  updated.clear();
  for (const auto& p : table) {
    TensorSlot s;
    s.name = p.name;
    s.offset = p.offset;
    s.numel = p.numel;
    s.ndim = int(p.shape.size());
    s.rows = p.shape.empty() ? 1 : p.shape[0];
    s.cols = s.rows > 0 ? p.numel / s.rows : 1;
    const std::string suffix = "ffn.gate.weight";
    const bool router = p.name.size() >= suffix.size() &&
                        p.name.compare(p.name.size() - suffix.size(), suffix.size(), suffix) == 0;
    const bool indexer = p.name.find(".attn.indexer.") != std::string::npos;
    s.trainable = p.trainable && !(freeze_router && router) && (!indexer_only || indexer);
    if (s.trainable) updated.emplace_back(s.offset, s.numel);
    slots.push_back(std::move(s));
  }
  return slots;
}

model::Losses accumulate_gradients(model::Model& m, std::span<const model::Batch> micro) {
  m.zero_grad();
  model::Losses sum;
  const double inv = 1.0 / double(micro.size());
  for (const auto& b : micro) {
    model::Losses l = m.forward_backward(b);
    sum.add_weighted(l, inv);
  }
  if (micro.size() > 1) m.scale_grads(float(inv));
  m.reduce_gradients();
  return sum;
}

double grad_sq_sum(std::span<const float> grads, const TensorRanges& ranges) {
  constexpr int64_t kChunk = int64_t(1) << 16;
  std::vector<std::pair<int64_t, int64_t>> chunks;  // (offset, length); a few hundred entries
  for (auto [off, n] : ranges)
    for (int64_t c = 0; c < n; c += kChunk) chunks.emplace_back(off + c, std::min(kChunk, n - c));
  std::vector<double> partial(chunks.size(), 0.0);
  const int64_t nc = int64_t(chunks.size());
#pragma omp parallel for schedule(static) if (nc > 1)
  for (int64_t c = 0; c < nc; ++c) {
    const float* g = grads.data() + chunks[size_t(c)].first;
    const int64_t n = chunks[size_t(c)].second;
    // eight running sums (element i into sum i % 8), added in a fixed order: vectorises, and the bits depend only
    // on the chunking, not on the threads or the vector width
    double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      for (int l = 0; l < 8; ++l) lane[l] += double(g[i + l]) * double(g[i + l]);
    for (; i < n; ++i) lane[i % 8] += double(g[i]) * double(g[i]);
    partial[size_t(c)] = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
  }
  double sq = 0;
  for (double p : partial) sq += p;
  return sq;
}

}  // namespace trex::train
