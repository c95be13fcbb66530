// Hugging Face side of trex checkpoints (issue #22, docs/huggingface.md).
//
// Export: a trex checkpoint folder is also a transformers model folder. The weights keep the official DeepSeek-V4
// names (DEEPSEEK_V4.md §11), which transformers' DeepseekV4ForCausalLM renames on load (its
// conversion_mapping "deepseek_v4"); config.json carries both the official/legacy fields trex reads and the
// DeepseekV4Config fields (layer_types, compress_rates, mlp_layer_types, partial_rotary_factor, rope_parameters);
// generation_config.json and the tokenizer (tokenizer.json + tokenizer_config.json with a Jinja chat template
// that renders trex's chat format) sit beside them.
//
// Import: a folder written by transformers' save_pretrained has other tensor names (its module paths, with a
// "model." prefix, partly renamed back) and may hold the routed experts fused ([E, 2f, d] gate_up_proj,
// [E, d, f] down_proj); hf_module_key() maps any of these spellings and the official one to the same key, so the
// loader finds each official tensor under whichever name the file uses. Its config.json has the transformers
// fields only; hf_config_to_trex() derives the official ones from them.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "model/config.hpp"

namespace trex::model {

// transformers' module path of a tensor, from its official name (layers.3.attn.wq_a.weight ->
// model.layers.3.self_attn.q_a_proj.weight) or from any spelling transformers writes or reads (its own module
// path, or what save_pretrained writes after reverting its renames): the renames of transformers 5.23's
// conversion_mapping "deepseek_v4", applied in its order after a leading "model." is stripped, then "model."
// prefixed (except lm_head). Routed experts stay per expert (model.layers.3.mlp.experts.5.w1.weight).
std::string hf_module_key(std::string_view name);

// Adds the DeepseekV4Config fields of `c` to `j` (the official/legacy ones are already there). Fails (trex::Error)
// when the config cannot be expressed (compressed layers of different HCA ratios, CSA ratio other than 4 is
// impossible by construction); hf_expressible() says why beforehand ("" when it can).
void add_hf_config_fields(nlohmann::json& j, const ModelConfig& c);
std::string hf_expressible(const ModelConfig& c);

// A config.json written by transformers (DeepseekV4Config.to_dict) gets the official fields trex reads:
// compress_ratios from layer_types + compress_rates (+ num_nextn_predict_layers zeros for MTP), num_hash_layers
// from mlp_layer_types (hash layers must lead), qk_rope_head_dim from partial_rotary_factor, rope_theta /
// compress_rope_theta / rope_scaling from rope_parameters, torch_dtype from dtype. Fields already present win
// (trex's own export has both, and they agree). Throws trex::Error (naming `where`) for what trex's model does
// not compute: a main (SWA) rope other than plain, a YaRN attention factor other than 1, hash layers that do not
// lead, an unknown layer type.
nlohmann::json hf_config_to_trex(const nlohmann::json& j, const std::string& where = "");

// generation_config.json for the model: bos/eos/pad ids, greedy by default.
nlohmann::json hf_generation_config(const ModelConfig& c);

// The chat template (Jinja, as transformers' apply_chat_template runs it) that renders trex's chat format
// (src/text/chat_template.hpp, DEEPSEEK_V4.md §12): BOS, the system messages joined by "\n\n", user turns
// "<｜User｜>…", assistant turns "<｜Assistant｜></think>…EOS" (the last one, when not prompting, with
// "<think>reasoning</think>"), and with add_generation_prompt "<｜Assistant｜></think>" (or "<think>" when
// the template variable `thinking` is true).
std::string hf_chat_template();

// Copies `tokenizer_json` into `dir` (atomically) and writes tokenizer_config.json (PreTrainedTokenizerFast,
// BOS/EOS/pad tokens, no automatic BOS, the chat template). Throws if the file is not a tokenizer.json.
void write_hf_tokenizer(const std::filesystem::path& dir, const std::filesystem::path& tokenizer_json,
                        int64_t model_max_length);

}  // namespace trex::model
