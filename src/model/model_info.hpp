// Model size and cost from a ModelConfig: total and active parameter counts with a per-component breakdown
// (summed over the official checkpoint inventory, checkpoint_layout.hpp) and FLOPs per token by the
// formula of DEEPSEEK_V4.md §10.
//
// Conventions (the published "284B total / 13B active" for Flash and "1.6T / 49B" for Pro):
// - total_params: every floating-point tensor of the checkpoint WITHOUT the MTP module(s), dequantised
//   element counts (FP4/FP8 scales and the integer hash tables `tid2eid` are not parameters);
// - active_params: parameters one token touches, WITHOUT MTP and WITHOUT the input embedding (a lookup):
//   all non-expert weights, the shared expert(s) and num_experts_per_tok routed experts per layer;
// - *_with_mtp variants add the MTP module(s).
// FLOPs (§10): forward = 2 * N_mm + attention + indexer, where N_mm is the matmul parameters touched per
// token (per layer: attention projections, compressor, indexer, router, k+shared experts, mHC mixes; plus
// the head; MTP adds one block, e_proj/h_proj and the head again), attention is 4*H*c*(W_t + C_t) per
// layer and the indexer 2*H_I*c_I*floor((t+1)/4) per CSA layer, both averaged over the causal positions
// t = 0..S-1 of a sequence of length S; training = 3 * forward (no recompute). Element-wise work (norms,
// mHC, compressor pooling, softmax) is not counted. MTP is included in the FLOPs by default, as in §10.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/config.hpp"

namespace trex::model {

struct ParamCounts {
  int64_t total = 0, total_with_mtp = 0;
  int64_t active = 0, active_with_mtp = 0;
  int64_t embedding = 0;
  int64_t mtp_total = 0, mtp_active = 0;
  // Per component (component_name()), main model only (MTP excluded; its tensors are in mtp_total).
  std::map<std::string, int64_t> total_by_component, active_by_component;
  int64_t stored_tensors = 0;  // official safetensors tensor count incl. scales and MTP
  uint64_t stored_bytes = 0;   // official data bytes (BF16/F32/FP8/FP4 + scales), headers excluded
  int64_t swa_layers = 0, csa_layers = 0, hca_layers = 0, mtp_layers = 0;
};
ParamCounts count_parameters(const ModelConfig& cfg);

// Matmul parameters touched per token (§10 N_mm); with_mtp adds the MTP blocks.
int64_t matmul_params_per_token(const ModelConfig& cfg, bool with_mtp);

struct FlopsPerToken {
  int64_t seq_len = 0;
  double matmul = 0;     // 2 * N_mm
  double attention = 0;  // score + value FLOPs, averaged over positions
  double indexer = 0;    // lightning indexer scoring, averaged over positions
  double forward = 0, train = 0;
};
FlopsPerToken flops_per_token(const ModelConfig& cfg, int64_t seq_len, bool with_mtp = true);

// flops_per_token's forward split by where it runs (pipeline stage balance): each layer's block (matmuls,
// attention, indexer), and the head part (final head + every MTP module: block, projections, its head). The
// pieces sum to flops_per_token(cfg, S, true).forward.
struct BlockFlops {
  std::vector<double> layers;  // [num_hidden_layers]
  double head = 0;
};
BlockFlops block_forward_flops(const ModelConfig& cfg, int64_t seq_len);

// Key counts of one layer summed over the positions t = 0..S-1: window keys min(t+1, w), compressed entries
// (CSA: min(topk, floor((t+1)/4)); HCA ratio m: floor((t+1)/m)) and indexer-scored entries (CSA:
// floor((t+1)/4)). Closed form (any S in O(1)) and the readable per-position loop it is tested against.
struct KeySums {
  double window = 0, compressed = 0, indexer = 0;
};
KeySums key_sums(int64_t S, int64_t window, int64_t ratio, int64_t topk);
KeySums key_sums_ref(int64_t S, int64_t window, int64_t ratio, int64_t topk);

// CONFIG is a preset name (ModelConfig::preset_names) or a path to a config.json (or a folder holding one).
ModelConfig load_model_config(const std::string& config);

nlohmann::ordered_json model_info_json(const ModelConfig& cfg, const std::vector<int64_t>& seq_lens);
std::string model_info_text(const ModelConfig& cfg, const std::vector<int64_t>& seq_lens);

}  // namespace trex::model
