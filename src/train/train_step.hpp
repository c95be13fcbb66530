// The pieces of one optimizer step, shared by the trainer loop and the twin-parity test: gradient
// accumulation over micro-batches (gradients and losses averaged), the global gradient norm over the tensors
// the optimizer updates, and the update itself (global-norm clip, optimizer step, aux-loss-free gate-bias
// update). The trainer puts the NaN check and the spike guard between the norm and the update.
#pragma once
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "model/model.hpp"
#include "train/optimizer.hpp"

namespace trex::train {

using TensorRanges = std::vector<std::pair<int64_t, int64_t>>;  // (offset, numel) in the flat buffers

// Optimizer slots for the model's tensors; with freeze_router the gate weights are not trainable, with
// indexer_only (dense indexer warm-up) only the lightning indexers' tensors are. `updated` receives the ranges
// the optimizer updates (the gradient norm and clipping cover exactly these).
std::vector<TensorSlot> optimizer_slots(const std::vector<model::ParamInfo>& table, bool freeze_router,
                                        TensorRanges& updated, bool indexer_only = false);
inline std::vector<TensorSlot> optimizer_slots(const model::Model& m, bool freeze_router, TensorRanges& updated,
                                               bool indexer_only = false) {
  return optimizer_slots(m.param_table(), freeze_router, updated, indexer_only);
}

// The global-norm clip: the factor the gradients are multiplied by (1 when clip <= 0 or the norm is within it).
inline double clip_scale(double norm, double clip) { return clip > 0 && norm > clip ? clip / norm : 1.0; }

// zero_grad, forward_backward of every micro-batch, gradients and losses divided by their count,
// reduce_gradients. Returns the averaged losses.
model::Losses accumulate_gradients(model::Model& m, std::span<const model::Batch> micro);

// Sum of the squared gradients over `ranges` (the squared L2 norm; train::ShardedOptimizer::grad_norm adds these
// over its shards and ranks): fixed chunks of 64K elements summed in order, the same bits for any thread count.
double grad_sq_sum(std::span<const float> grads, const TensorRanges& ranges);

}  // namespace trex::train
