// Hugging Face (transformers) names, config fields, generation config and tokenizer files (checkpoint_hf.hpp).
#include "model/checkpoint_hf.hpp"

#include <cmath>

#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/jsonl.hpp"

namespace trex::model {
namespace fs = std::filesystem;

namespace {

struct Rename {
  std::string_view from, to;
  bool anchored;  // "^..." in transformers: only at the start of the key
};

// transformers 5.23, src/transformers/conversion_mapping.py, "deepseek_v4" WeightRenaming list, in order (the
// regular expressions there are literal strings with escaped dots, some anchored at the start). Each one replaces
// its first match; later ones see the result of earlier ones, as in transformers' apply_renamings.
constexpr Rename kRenames[] = {
    {".attn.", ".self_attn.", false},
    {".ffn.", ".mlp.", false},
    {".indexer.compressor.", ".compressor.indexer.", false},
    {"embed.weight", "embed_tokens.weight", true},
    {"head.weight", "lm_head.weight", true},
    {"hc_head_fn", "hc_head.hc_fn", true},
    {"hc_head_base", "hc_head.hc_base", true},
    {"hc_head_scale", "hc_head.hc_scale", true},
    {".attn_norm.", ".input_layernorm.", false},
    {".ffn_norm.", ".post_attention_layernorm.", false},
    {".hc_attn_fn", ".attn_hc.fn", false},
    {".hc_attn_base", ".attn_hc.base", false},
    {".hc_attn_scale", ".attn_hc.scale", false},
    {".hc_ffn_fn", ".ffn_hc.fn", false},
    {".hc_ffn_base", ".ffn_hc.base", false},
    {".hc_ffn_scale", ".ffn_hc.scale", false},
    {".attn_sink", ".sinks", false},
    {".indexer.weights_proj.", ".compressor.indexer.scorer.weights_proj.", false},
    {".indexer.wq_b.", ".compressor.indexer.q_b_proj.", false},
    {".norm.", ".kv_norm.", false},
    {".ape", ".position_bias", false},
    {".wq_a.", ".q_a_proj.", false},
    {".self_attn.wq_b.", ".self_attn.q_b_proj.", false},
    {".wkv.", ".kv_proj.", false},
    {".wgate.", ".gate_proj.", false},
    {".wo_a.", ".o_a_proj.", false},
    {".wo_b.", ".o_b_proj.", false},
    {".q_norm.", ".q_a_norm.", false},
    {".gate.bias", ".gate.e_score_correction_bias", false},
    {".shared_experts.w1.", ".shared_experts.gate_proj.", false},
    {".shared_experts.w2.", ".shared_experts.down_proj.", false},
    {".shared_experts.w3.", ".shared_experts.up_proj.", false},
};

const char* hf_layer_type(AttnKind k) {
  switch (k) {
    case AttnKind::SWA: return "sliding_attention";
    case AttnKind::CSA: return "compressed_sparse_attention";
    case AttnKind::HCA: return "heavily_compressed_attention";
  }
  return "?";
}

// The HCA ratio shared by every HCA layer of the trunk (0 if there is none); -1 if they differ.
int64_t common_hca_ratio(const ModelConfig& c) {
  int64_t r = 0;
  for (int64_t l = 0; l < c.num_hidden_layers; ++l)
    if (c.kind(l) == AttnKind::HCA) {
      if (r != 0 && r != c.ratio(l)) return -1;
      r = c.ratio(l);
    }
  return r;
}

constexpr const char* kBosText = "<｜begin▁of▁sentence｜>";
constexpr const char* kEosText = "<｜end▁of▁sentence｜>";

}  // namespace

std::string hf_module_key(std::string_view name) {
  std::string k(name);
  if (k.starts_with("model.")) k.erase(0, 6);
  for (const Rename& r : kRenames) {
    if (r.anchored) {
      if (k.starts_with(r.from)) k.replace(0, r.from.size(), r.to);
    } else if (auto pos = k.find(r.from); pos != std::string::npos) {
      k.replace(pos, r.from.size(), r.to);
    }
  }
  if (!k.starts_with("lm_head.")) k = "model." + k;
  return k;
}

std::string hf_expressible(const ModelConfig& c) {
  if (common_hca_ratio(c) < 0)
    return "its HCA layers have different compress ratios (transformers' DeepseekV4Config has one "
           "compress_rates['heavily_compressed_attention'] for all of them)";
  const int64_t r = c.qk_rope_head_dim, hd = c.head_dim;
  if (int64_t(double(hd) * (double(r) / double(hd))) != r)
    return "qk_rope_head_dim / head_dim does not survive transformers' int(head_dim * partial_rotary_factor)";
  if (c.n_shared_experts != 1)
    return "n_shared_experts is " + std::to_string(c.n_shared_experts) +
           " (transformers builds one shared expert of moe_intermediate_size)";
  return "";
}

void add_hf_config_fields(nlohmann::json& j, const ModelConfig& c) {
  if (std::string why = hf_expressible(c); !why.empty())
    throw Error("config: not expressible as a transformers DeepseekV4Config: " + why);
  nlohmann::json types = nlohmann::json::array(), mlp = nlohmann::json::array();
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    types.push_back(hf_layer_type(c.kind(l)));
    mlp.push_back(c.is_hash_layer(l) ? "hash_moe" : "moe");
  }
  const int64_t hca = common_hca_ratio(c);
  j["layer_types"] = types;
  j["mlp_layer_types"] = mlp;
  j["compress_rates"] = {{"compressed_sparse_attention", 4}, {"heavily_compressed_attention", hca > 0 ? hca : 128}};
  const double prf = double(c.qk_rope_head_dim) / double(c.head_dim);
  j["partial_rotary_factor"] = prf;
  nlohmann::json main = {{"rope_type", "default"}, {"rope_theta", c.rope_theta}, {"partial_rotary_factor", prf}};
  nlohmann::json comp = {{"rope_type", "default"}, {"rope_theta", c.compress_rope_theta}, {"partial_rotary_factor", prf}};
  if (c.yarn()) {
    comp["rope_type"] = "yarn";
    comp["factor"] = c.rope_scaling.factor;
    comp["original_max_position_embeddings"] = c.rope_scaling.original_max_position_embeddings;
    comp["beta_fast"] = c.rope_scaling.beta_fast;
    comp["beta_slow"] = c.rope_scaling.beta_slow;
    comp["attention_factor"] = 1.0;  // no YaRN mscale (DEEPSEEK_V4.md §3); transformers sets the same
  }
  j["rope_parameters"] = {{"main", main}, {"compress", comp}};
  j["dtype"] = c.torch_dtype;
  j["initializer_range"] = c.init_std;
  j["pad_token_id"] = c.eos_token_id;
  j["use_cache"] = true;
}

nlohmann::json hf_config_to_trex(const nlohmann::json& in, const std::string& where) {
  if (!in.is_object()) return in;
  nlohmann::json j = in;
  auto bad = [&](const std::string& m) { throw Error(SourceLocation{where, 0, 0}, "config: " + m); };
  auto has = [&](const char* k) { return j.contains(k) && !j[k].is_null(); };
  const bool hf_style = !has("compress_ratios");
  if (hf_style && has("layer_types")) {
    const nlohmann::json& lt = j["layer_types"];
    if (!lt.is_array()) bad("'layer_types' must be an array");
    int64_t csa = 4, hca = 128;
    if (has("compress_rates")) {
      const auto& cr = j["compress_rates"];
      if (!cr.is_object()) bad("'compress_rates' must be an object");
      if (cr.contains("compressed_sparse_attention")) csa = cr["compressed_sparse_attention"].get<int64_t>();
      if (cr.contains("heavily_compressed_attention")) hca = cr["heavily_compressed_attention"].get<int64_t>();
    }
    if (has("compress_rate_csa")) csa = j["compress_rate_csa"].get<int64_t>();
    if (has("compress_rate_hca")) hca = j["compress_rate_hca"].get<int64_t>();
    if (csa != 4) bad("compressed_sparse_attention rate " + std::to_string(csa) + " unsupported (CSA is ratio 4, §16.10)");
    if (hca == 4 || hca < 2) bad("heavily_compressed_attention rate " + std::to_string(hca) + " unsupported");
    nlohmann::json ratios = nlohmann::json::array();
    for (const auto& t : lt) {
      const std::string s = t.is_string() ? t.get<std::string>() : "";
      if (s == "sliding_attention") ratios.push_back(0);
      else if (s == "compressed_sparse_attention") ratios.push_back(csa);
      else if (s == "heavily_compressed_attention") ratios.push_back(hca);
      else bad("unknown layer type " + t.dump() + " in 'layer_types'");
    }
    const int64_t n_mtp = has("num_nextn_predict_layers") ? j["num_nextn_predict_layers"].get<int64_t>() : 1;
    for (int64_t i = 0; i < n_mtp; ++i) ratios.push_back(0);  // MTP blocks: SWA (§1)
    j["compress_ratios"] = ratios;
  }
  if (!has("num_hash_layers")) {
    if (has("mlp_layer_types")) {
      const auto& mt = j["mlp_layer_types"];
      if (!mt.is_array()) bad("'mlp_layer_types' must be an array");
      int64_t n = 0;
      bool moe_seen = false;
      for (const auto& t : mt) {
        const std::string s = t.is_string() ? t.get<std::string>() : "";
        if (s == "hash_moe") {
          if (moe_seen) bad("'mlp_layer_types': a hash_moe layer after a moe layer (trex's hash layers lead)");
          ++n;
        } else if (s == "moe") {
          moe_seen = true;
        } else {
          bad("unknown MLP layer type " + t.dump() + " in 'mlp_layer_types'");
        }
      }
      j["num_hash_layers"] = n;
    } else if (hf_style && has("num_hidden_layers")) {
      j["num_hash_layers"] = std::min<int64_t>(3, j["num_hidden_layers"].get<int64_t>());  // transformers' default
    }
  }
  if (!has("qk_rope_head_dim") && has("head_dim")) {
    const double f = has("partial_rotary_factor") ? j["partial_rotary_factor"].get<double>() : 64.0 / 512.0;
    j["qk_rope_head_dim"] = int64_t(double(j["head_dim"].get<int64_t>()) * f);  // transformers: int(head_dim * f)
  }
  if (!has("rope_scaling") && has("rope_parameters")) {
    const auto& rp = j["rope_parameters"];
    if (!rp.is_object()) bad("'rope_parameters' must be an object");
    const bool nested = rp.contains("main") && rp["main"].is_object() && rp.contains("compress") && rp["compress"].is_object();
    const nlohmann::json comp = nested ? rp["compress"] : rp;
    if (nested) {
      const auto& main = rp["main"];
      const std::string mt = main.value("rope_type", main.value("type", std::string("default")));
      if (mt != "default")
        bad("rope_parameters.main.rope_type '" + mt + "' unsupported (sliding-window layers use plain RoPE, §3)");
      if (main.contains("rope_theta")) j["rope_theta"] = main["rope_theta"];
      if (comp.contains("rope_theta")) j["compress_rope_theta"] = comp["rope_theta"];
    } else if (rp.contains("rope_theta") && !has("rope_theta")) {
      j["rope_theta"] = rp["rope_theta"];
    }
    const std::string ct = comp.value("rope_type", comp.value("type", std::string("default")));
    if (ct == "yarn") {
      if (comp.contains("attention_factor") && comp["attention_factor"].is_number() &&
          comp["attention_factor"].get<double>() != 1.0)
        bad("rope_parameters: YaRN attention_factor " + comp["attention_factor"].dump() +
            " unsupported (DeepSeek-V4 applies no mscale, §3)");
      if (comp.contains("truncate") && comp["truncate"].is_boolean() && !comp["truncate"].get<bool>())
        bad("rope_parameters: YaRN truncate=false unsupported");
      nlohmann::json rs = {{"type", "yarn"}};
      for (const char* k : {"factor", "original_max_position_embeddings", "beta_fast", "beta_slow"})
        if (comp.contains(k)) rs[k] = comp[k];
      j["rope_scaling"] = rs;
    } else if (ct != "default") {
      bad("rope_parameters.compress.rope_type '" + ct + "' unsupported (yarn or default)");
    }
  }
  if (!has("torch_dtype") && has("dtype") && j["dtype"].is_string()) j["torch_dtype"] = j["dtype"];
  return j;
}

nlohmann::json hf_generation_config(const ModelConfig& c) {
  return {{"bos_token_id", c.bos_token_id},
          {"eos_token_id", c.eos_token_id},
          {"pad_token_id", c.eos_token_id},
          {"do_sample", false}};
}

std::string hf_chat_template() {
  return "{{ bos_token }}"
         "{%- set ns = namespace(first=true, last=-1) -%}"
         "{%- for m in messages -%}"
         "{%- if m['role'] == 'system' -%}{%- if not ns.first -%}{{ '\\n\\n' }}{%- endif -%}"
         "{{ m['content'] }}{%- set ns.first = false -%}{%- endif -%}"
         "{%- if m['role'] == 'assistant' -%}{%- set ns.last = loop.index0 -%}{%- endif -%}"
         "{%- endfor -%}"
         "{%- for m in messages -%}"
         "{%- if m['role'] == 'user' -%}{{ '<｜User｜>' + m['content'] }}"
         "{%- elif m['role'] == 'assistant' -%}{{ '<｜Assistant｜>' }}"
         "{%- if m.get('reasoning_content') and loop.index0 == ns.last and not add_generation_prompt -%}"
         "{{ '<think>' + m['reasoning_content'] + '</think>' }}"
         "{%- else -%}{{ '</think>' }}{%- endif -%}"
         "{{ m['content'] + eos_token }}"
         "{%- endif -%}"
         "{%- endfor -%}"
         "{%- if add_generation_prompt -%}{{ '<｜Assistant｜>' }}"
         "{%- if thinking is defined and thinking -%}{{ '<think>' }}{%- else -%}{{ '</think>' }}{%- endif -%}"
         "{%- endif -%}";
}

void write_hf_tokenizer(const fs::path& dir, const fs::path& tokenizer_json, int64_t model_max_length) {
  const std::string text = read_file(tokenizer_json);
  const nlohmann::json tj = parse_json_text(text, SourceLocation{tokenizer_json.string(), 0, 0});
  if (!tj.is_object() || !tj.contains("model"))
    throw Error(SourceLocation{tokenizer_json.string(), 0, 0}, "not a Hugging Face tokenizer.json (no 'model')");
  bool has_bos = false, has_eos = false;
  if (tj.contains("added_tokens") && tj["added_tokens"].is_array())
    for (const auto& t : tj["added_tokens"]) {
      const std::string c = t.value("content", std::string());
      has_bos = has_bos || c == kBosText;
      has_eos = has_eos || c == kEosText;
    }
  nlohmann::ordered_json cfg;
  cfg["tokenizer_class"] = "PreTrainedTokenizerFast";
  if (has_bos) cfg["bos_token"] = kBosText;
  if (has_eos) {
    cfg["eos_token"] = kEosText;
    cfg["pad_token"] = kEosText;
  }
  cfg["add_bos_token"] = false;  // the chat template writes BOS (DEEPSEEK_V4.md §12)
  cfg["add_eos_token"] = false;
  cfg["clean_up_tokenization_spaces"] = false;
  cfg["model_max_length"] = model_max_length;
  cfg["chat_template"] = hf_chat_template();
  if (fs::absolute(tokenizer_json).lexically_normal() != fs::absolute(dir / "tokenizer.json").lexically_normal())
    write_file_atomic(dir / "tokenizer.json", text);
  write_file_atomic(dir / "tokenizer_config.json", cfg.dump(2) + "\n");
}

}  // namespace trex::model
