// trex::model::ModelConfig: the DeepSeek-V4 architecture hyper-parameters (Hugging Face config.json field
// names, DEEPSEEK_V4.md §1), trex-only training knobs, the per-layer attention pattern, and the presets
// tiny / bench / small.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trex::model {

// Attention kind of a layer, decided by its compress ratio (§1, §16.10): 0 = sliding window only,
// 4 = compressed sparse attention (overlapping compressor + lightning indexer), other = heavily compressed.
enum class AttnKind { SWA, CSA, HCA };
const char* attn_kind_name(AttnKind k);

struct RopeScaling {
  std::string type = "yarn";  // "yarn" or "none" (absent in config.json)
  double factor = 16.0;
  int64_t original_max_position_embeddings = 65536;
  double beta_fast = 32.0;
  double beta_slow = 1.0;
};

struct ModelConfig {
  // --- Hugging Face config.json fields (names as in the file) ---
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;               // d
  int64_t num_hidden_layers = 0;         // L (without MTP)
  int64_t num_attention_heads = 0;       // H
  int64_t num_key_value_heads = 1;       // must be 1: one shared K == V vector
  int64_t head_dim = 0;                  // c
  int64_t qk_rope_head_dim = 0;          // r: the LAST r dims of a head are rotary
  int64_t q_lora_rank = 0;               // q_r
  int64_t o_groups = 0;                  // G
  int64_t o_lora_rank = 0;               // r_o
  int64_t n_routed_experts = 0;          // E
  int64_t n_shared_experts = 1;
  int64_t num_experts_per_tok = 0;       // k
  int64_t moe_intermediate_size = 0;     // f
  std::string scoring_func = "sqrtsoftplus";
  std::string topk_method = "noaux_tc";
  bool norm_topk_prob = true;
  double routed_scaling_factor = 1.5;    // R
  int64_t num_hash_layers = 0;           // layers 0..num_hash_layers-1 route by a fixed token table
  int64_t sliding_window = 0;            // w
  std::vector<int64_t> compress_ratios;  // L + num_nextn_predict_layers entries (last ones: MTP blocks)
  int64_t index_n_heads = 0;             // H_I
  int64_t index_head_dim = 0;            // c_I
  int64_t index_topk = 0;
  int64_t hc_mult = 4;                   // n streams
  int64_t hc_sinkhorn_iters = 20;
  double hc_eps = 1e-6;
  double rope_theta = 10000.0;           // ratio-0 layers (incl. MTP), no YaRN
  double compress_rope_theta = 160000.0; // compressed layers, compressors, indexer (YaRN)
  RopeScaling rope_scaling;
  int64_t max_position_embeddings = 0;
  double swiglu_limit = 10.0;
  int64_t num_nextn_predict_layers = 1;
  double rms_norm_eps = 1e-6;
  std::string hidden_act = "silu";
  bool attention_bias = false;
  bool tie_word_embeddings = false;
  int64_t bos_token_id = 0;
  int64_t eos_token_id = 1;
  std::string torch_dtype = "bfloat16";
  nlohmann::json quantization_config;    // kept verbatim (modelio reads the FP8 layout from it); null if absent
  std::string expert_dtype;              // "fp4" in inference/config.json; empty if absent

  // --- trex-only knobs (optional in config.json, key "trex" object or top level) ---
  double indexer_loss_coeff = 1.0;       // §16.5
  double seq_balance_alpha = 1e-4;       // §16.6 (value returned already includes alpha)
  double mtp_loss_weight = 0.3;          // §8, §16.3
  double bias_update_rate = 1e-3;        // aux-loss-free gate-bias step γ (§7)
  uint64_t hash_seed = 1234;             // hash table of layer l is built from hash_seed + l (§16.12)
  double init_std = 0.02;                // N(0, init_std) for matrices
  bool clamp_shared_expert = false;      // §16.7
  // Dense indexer warm-up (DEEPSEEK_V4.md §5, V3.2 recipe): CSA layers attend to EVERY visible compressed entry
  // (no top-k) and the indexer's KL loss runs over all visible entries instead of its top-k; the indexer still
  // learns only from that loss (inputs detached). Training then usually updates the indexer alone.
  bool indexer_dense_warmup = false;

  // --- derived ---
  int64_t n_layers_total() const { return num_hidden_layers + num_nextn_predict_layers; }
  int64_t ratio(int64_t layer) const;    // compress ratio of block `layer` (>= L: MTP block)
  AttnKind kind(int64_t layer) const;
  bool is_hash_layer(int64_t layer) const { return layer < num_hash_layers && layer < num_hidden_layers; }
  bool yarn() const { return rope_scaling.type == "yarn"; }
  int64_t n_nope() const { return head_dim - qk_rope_head_dim; }

  // Throws trex::Error (naming `where` when given) if the fields are inconsistent.
  void validate(const std::string& where = "") const;

  // Parses a Hugging Face config.json. Unknown fields are ignored; a missing required field, a wrong
  // type or an inconsistent value is a trex::Error naming file:line.
  static ModelConfig from_hf_json(const std::filesystem::path& path);
  static ModelConfig from_json(const nlohmann::json& j, const std::string& where = "", const std::string& text = "");
  nlohmann::json to_hf_json() const;  // round-trips through from_json

  // Named presets: "tiny" (CI, trains in minutes on 2 cores), "bench" (throughput comparisons, MACHINE.md §7
  // MoE shape), "small" (single accelerator). Unknown name: trex::Error listing the valid ones.
  static ModelConfig preset(const std::string& name);
  static std::vector<std::string> preset_names();
};

// The compress_ratios pattern of §1/§15: `lead` leading layers with ratio `lead_ratio` (0 = SWA or an HCA
// ratio), then alternating CSA (4) / HCA (`hca_ratio`) starting with CSA, then `n_mtp` zeros.
std::vector<int64_t> layer_pattern(int64_t n_layers, int64_t lead, int64_t lead_ratio, int64_t hca_ratio,
                                   int64_t n_mtp);

}  // namespace trex::model
