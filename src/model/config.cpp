// ModelConfig parsing, validation, serialisation and presets.
#include "model/config.hpp"

#include <fstream>
#include <sstream>

#include "model/checkpoint_hf.hpp"
#include "util/error.hpp"
#include "util/jsonl.hpp"

namespace trex::model {

const char* attn_kind_name(AttnKind k) {
  switch (k) {
    case AttnKind::SWA: return "SWA";
    case AttnKind::CSA: return "CSA";
    case AttnKind::HCA: return "HCA";
  }
  return "?";
}

int64_t ModelConfig::ratio(int64_t layer) const {
  if (layer < 0 || layer >= int64_t(compress_ratios.size())) throw Error("layer index out of range");
  return compress_ratios[size_t(layer)];
}

AttnKind ModelConfig::kind(int64_t layer) const {
  int64_t r = ratio(layer);
  if (r == 0) return AttnKind::SWA;
  if (r == 4) return AttnKind::CSA;
  return AttnKind::HCA;
}

std::vector<int64_t> layer_pattern(int64_t n_layers, int64_t lead, int64_t lead_ratio, int64_t hca_ratio,
                                   int64_t n_mtp) {
  std::vector<int64_t> r;
  for (int64_t l = 0; l < n_layers; ++l) {
    if (l < lead) r.push_back(lead_ratio);
    else r.push_back(((l - lead) % 2 == 0) ? 4 : hca_ratio);
  }
  for (int64_t i = 0; i < n_mtp; ++i) r.push_back(0);
  return r;
}

namespace {

// Line of the first occurrence of "key" in the raw text (0 if unknown), so field errors can name file:line.
long line_of_key(const std::string& text, const std::string& key) {
  if (text.empty()) return 0;
  auto pos = text.find("\"" + key + "\"");
  if (pos == std::string::npos) return 0;
  long line = 1;
  for (size_t i = 0; i < pos; ++i)
    if (text[i] == '\n') ++line;
  return line;
}

struct Reader {
  const nlohmann::json& j;
  std::string file;
  const std::string& text;

  SourceLocation at(const std::string& key) const { return {file, line_of_key(text, key), 0}; }
  const nlohmann::json* find(const char* key) const {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return nullptr;
    return &*it;
  }
  const nlohmann::json& need(const char* key) const {
    auto* v = find(key);
    if (!v) throw Error(SourceLocation{file, 0, 0}, std::string("config: missing required field '") + key + "'");
    return *v;
  }
  int64_t as_int(const nlohmann::json& v, const char* key) const {
    if (v.is_number_integer() || v.is_number_unsigned()) return v.get<int64_t>();
    if (v.is_number_float() && v.get<double>() == double(int64_t(v.get<double>()))) return int64_t(v.get<double>());
    throw Error(at(key), std::string("config: field '") + key + "' must be an integer");
  }
  double as_num(const nlohmann::json& v, const char* key) const {
    if (!v.is_number()) throw Error(at(key), std::string("config: field '") + key + "' must be a number");
    return v.get<double>();
  }
  void req(const char* key, int64_t& out) const { out = as_int(need(key), key); }
  void req(const char* key, double& out) const { out = as_num(need(key), key); }
  void opt(const char* key, int64_t& out) const {
    if (auto* v = find(key)) out = as_int(*v, key);
  }
  void opt(const char* key, uint64_t& out) const {
    if (auto* v = find(key)) out = uint64_t(as_int(*v, key));
  }
  void opt(const char* key, double& out) const {
    if (auto* v = find(key)) out = as_num(*v, key);
  }
  void opt(const char* key, bool& out) const {
    if (auto* v = find(key)) {
      if (!v->is_boolean()) throw Error(at(key), std::string("config: field '") + key + "' must be true/false");
      out = v->get<bool>();
    }
  }
  void opt(const char* key, std::string& out) const {
    if (auto* v = find(key)) {
      if (!v->is_string()) throw Error(at(key), std::string("config: field '") + key + "' must be a string");
      out = v->get<std::string>();
    }
  }
};

}  // namespace

ModelConfig ModelConfig::from_json(const nlohmann::json& j_in, const std::string& where, const std::string& text) {
  if (!j_in.is_object()) throw Error(SourceLocation{where, 1, 0}, "config: expected a JSON object");
  // A transformers config.json (DeepseekV4Config fields only) gets the official fields (checkpoint_hf.hpp).
  const nlohmann::json j = hf_config_to_trex(j_in, where);
  Reader rd{j, where, text};
  ModelConfig c;
  rd.req("vocab_size", c.vocab_size);
  rd.req("hidden_size", c.hidden_size);
  rd.req("num_hidden_layers", c.num_hidden_layers);
  rd.req("num_attention_heads", c.num_attention_heads);
  rd.opt("num_key_value_heads", c.num_key_value_heads);
  rd.req("head_dim", c.head_dim);
  rd.req("qk_rope_head_dim", c.qk_rope_head_dim);
  rd.req("q_lora_rank", c.q_lora_rank);
  rd.req("o_groups", c.o_groups);
  rd.req("o_lora_rank", c.o_lora_rank);
  rd.req("n_routed_experts", c.n_routed_experts);
  rd.opt("n_shared_experts", c.n_shared_experts);
  rd.req("num_experts_per_tok", c.num_experts_per_tok);
  rd.req("moe_intermediate_size", c.moe_intermediate_size);
  rd.opt("scoring_func", c.scoring_func);
  rd.opt("topk_method", c.topk_method);
  rd.opt("norm_topk_prob", c.norm_topk_prob);
  rd.opt("routed_scaling_factor", c.routed_scaling_factor);
  rd.opt("num_hash_layers", c.num_hash_layers);
  rd.req("sliding_window", c.sliding_window);
  {
    const auto& v = rd.need("compress_ratios");
    if (!v.is_array()) throw Error(rd.at("compress_ratios"), "config: field 'compress_ratios' must be an array");
    for (const auto& e : v) c.compress_ratios.push_back(rd.as_int(e, "compress_ratios"));
  }
  rd.req("index_n_heads", c.index_n_heads);
  rd.req("index_head_dim", c.index_head_dim);
  rd.req("index_topk", c.index_topk);
  rd.req("hc_mult", c.hc_mult);
  rd.opt("hc_sinkhorn_iters", c.hc_sinkhorn_iters);
  rd.opt("hc_eps", c.hc_eps);
  rd.opt("rope_theta", c.rope_theta);
  rd.opt("compress_rope_theta", c.compress_rope_theta);
  if (auto* rs = rd.find("rope_scaling")) {
    if (!rs->is_object()) throw Error(rd.at("rope_scaling"), "config: field 'rope_scaling' must be an object");
    Reader r2{*rs, where, text};
    std::string type;
    r2.opt("type", type);
    if (type.empty()) r2.opt("rope_type", type);
    if (type != "yarn") throw Error(rd.at("rope_scaling"), "config: rope_scaling type '" + type + "' unsupported (yarn)");
    c.rope_scaling.type = type;
    r2.req("factor", c.rope_scaling.factor);
    r2.req("original_max_position_embeddings", c.rope_scaling.original_max_position_embeddings);
    r2.opt("beta_fast", c.rope_scaling.beta_fast);
    r2.opt("beta_slow", c.rope_scaling.beta_slow);
  } else {
    c.rope_scaling.type = "none";
  }
  rd.opt("max_position_embeddings", c.max_position_embeddings);
  rd.opt("swiglu_limit", c.swiglu_limit);
  rd.opt("num_nextn_predict_layers", c.num_nextn_predict_layers);
  rd.opt("rms_norm_eps", c.rms_norm_eps);
  rd.opt("hidden_act", c.hidden_act);
  rd.opt("attention_bias", c.attention_bias);
  rd.opt("tie_word_embeddings", c.tie_word_embeddings);
  rd.opt("bos_token_id", c.bos_token_id);
  rd.opt("eos_token_id", c.eos_token_id);
  rd.opt("torch_dtype", c.torch_dtype);
  if (auto* q = rd.find("quantization_config")) c.quantization_config = *q;
  rd.opt("expert_dtype", c.expert_dtype);
  // trex knobs: top level or inside a "trex" object
  for (const nlohmann::json* src : {&j, rd.find("trex")}) {
    if (!src) continue;
    Reader r3{*src, where, text};
    r3.opt("indexer_loss_coeff", c.indexer_loss_coeff);
    r3.opt("seq_balance_alpha", c.seq_balance_alpha);
    r3.opt("mtp_loss_weight", c.mtp_loss_weight);
    r3.opt("bias_update_rate", c.bias_update_rate);
    r3.opt("hash_seed", c.hash_seed);
    r3.opt("init_std", c.init_std);
    r3.opt("clamp_shared_expert", c.clamp_shared_expert);
    r3.opt("indexer_dense_warmup", c.indexer_dense_warmup);
  }
  c.validate(where);
  return c;
}

ModelConfig ModelConfig::from_hf_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw Error(SourceLocation{path.string(), 0, 0}, "cannot open config file");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  nlohmann::json j = parse_json_text(text, SourceLocation{path.string(), 0, 0});
  return from_json(j, path.string(), text);
}

void ModelConfig::validate(const std::string& where) const {
  auto bad = [&](const std::string& m) { throw Error(SourceLocation{where, 0, 0}, "config: " + m); };
  auto pos = [&](int64_t v, const char* name) {
    if (v <= 0) bad(std::string(name) + " must be positive");
  };
  pos(vocab_size, "vocab_size");
  pos(hidden_size, "hidden_size");
  pos(num_hidden_layers, "num_hidden_layers");
  pos(num_attention_heads, "num_attention_heads");
  pos(head_dim, "head_dim");
  pos(qk_rope_head_dim, "qk_rope_head_dim");
  pos(q_lora_rank, "q_lora_rank");
  pos(o_groups, "o_groups");
  pos(o_lora_rank, "o_lora_rank");
  pos(n_routed_experts, "n_routed_experts");
  pos(num_experts_per_tok, "num_experts_per_tok");
  pos(moe_intermediate_size, "moe_intermediate_size");
  pos(sliding_window, "sliding_window");
  pos(index_n_heads, "index_n_heads");
  pos(index_head_dim, "index_head_dim");
  pos(index_topk, "index_topk");
  pos(hc_mult, "hc_mult");
  pos(hc_sinkhorn_iters, "hc_sinkhorn_iters");
  if (hc_mult > 8) bad("hc_mult must be <= 8 (the Sinkhorn kernels hold n x n matrices of at most 8 x 8)");
  if (num_key_value_heads != 1) bad("num_key_value_heads must be 1 (one shared K == V vector)");
  if (qk_rope_head_dim % 2 != 0) bad("qk_rope_head_dim must be even");
  if (head_dim <= qk_rope_head_dim) bad("head_dim must exceed qk_rope_head_dim (§16.13)");
  if (index_head_dim <= qk_rope_head_dim) bad("index_head_dim must exceed qk_rope_head_dim (§16.13)");
  if ((num_attention_heads * head_dim) % o_groups != 0 || num_attention_heads % o_groups != 0)
    bad("num_attention_heads must split into o_groups equal groups");
  if (num_experts_per_tok > n_routed_experts) bad("num_experts_per_tok exceeds n_routed_experts");
  if (n_shared_experts < 0) bad("n_shared_experts must be >= 0");
  if (num_nextn_predict_layers < 0) bad("num_nextn_predict_layers must be >= 0");
  if (num_hash_layers < 0 || num_hash_layers > num_hidden_layers) bad("num_hash_layers out of range");
  if (int64_t(compress_ratios.size()) != num_hidden_layers + num_nextn_predict_layers)
    bad("compress_ratios must have num_hidden_layers + num_nextn_predict_layers = " +
        std::to_string(num_hidden_layers + num_nextn_predict_layers) + " entries, has " +
        std::to_string(compress_ratios.size()));
  for (auto r : compress_ratios)
    if (r < 0 || r == 1) bad("compress_ratios entries must be 0 or >= 2");
  if (scoring_func != "sqrtsoftplus") bad("scoring_func '" + scoring_func + "' unsupported (sqrtsoftplus)");
  if (hidden_act != "silu") bad("hidden_act '" + hidden_act + "' unsupported (silu)");
  if (attention_bias) bad("attention_bias=true unsupported");
  if (tie_word_embeddings) bad("tie_word_embeddings=true unsupported (V4 head is untied)");
  if (rms_norm_eps <= 0 || hc_eps <= 0) bad("rms_norm_eps and hc_eps must be positive");
  if (swiglu_limit <= 0) bad("swiglu_limit must be positive");
}

nlohmann::json ModelConfig::to_hf_json() const {
  nlohmann::json j;
  j["architectures"] = {"DeepseekV4ForCausalLM"};
  j["model_type"] = "deepseek_v4";
  j["vocab_size"] = vocab_size;
  j["hidden_size"] = hidden_size;
  j["num_hidden_layers"] = num_hidden_layers;
  j["num_attention_heads"] = num_attention_heads;
  j["num_key_value_heads"] = num_key_value_heads;
  j["head_dim"] = head_dim;
  j["qk_rope_head_dim"] = qk_rope_head_dim;
  j["q_lora_rank"] = q_lora_rank;
  j["o_groups"] = o_groups;
  j["o_lora_rank"] = o_lora_rank;
  j["n_routed_experts"] = n_routed_experts;
  j["n_shared_experts"] = n_shared_experts;
  j["num_experts_per_tok"] = num_experts_per_tok;
  j["moe_intermediate_size"] = moe_intermediate_size;
  j["scoring_func"] = scoring_func;
  j["topk_method"] = topk_method;
  j["norm_topk_prob"] = norm_topk_prob;
  j["routed_scaling_factor"] = routed_scaling_factor;
  j["num_hash_layers"] = num_hash_layers;
  j["sliding_window"] = sliding_window;
  j["compress_ratios"] = compress_ratios;
  j["index_n_heads"] = index_n_heads;
  j["index_head_dim"] = index_head_dim;
  j["index_topk"] = index_topk;
  j["hc_mult"] = hc_mult;
  j["hc_sinkhorn_iters"] = hc_sinkhorn_iters;
  j["hc_eps"] = hc_eps;
  j["rope_theta"] = rope_theta;
  j["compress_rope_theta"] = compress_rope_theta;
  if (yarn())
    j["rope_scaling"] = {{"type", "yarn"},
                         {"factor", rope_scaling.factor},
                         {"original_max_position_embeddings", rope_scaling.original_max_position_embeddings},
                         {"beta_fast", rope_scaling.beta_fast},
                         {"beta_slow", rope_scaling.beta_slow}};
  j["max_position_embeddings"] = max_position_embeddings;
  j["swiglu_limit"] = swiglu_limit;
  j["num_nextn_predict_layers"] = num_nextn_predict_layers;
  j["rms_norm_eps"] = rms_norm_eps;
  j["hidden_act"] = hidden_act;
  j["attention_bias"] = attention_bias;
  j["tie_word_embeddings"] = tie_word_embeddings;
  j["bos_token_id"] = bos_token_id;
  j["eos_token_id"] = eos_token_id;
  j["torch_dtype"] = torch_dtype;
  if (!quantization_config.is_null()) j["quantization_config"] = quantization_config;
  if (!expert_dtype.empty()) j["expert_dtype"] = expert_dtype;
  j["trex"] = {{"indexer_loss_coeff", indexer_loss_coeff}, {"seq_balance_alpha", seq_balance_alpha},
               {"mtp_loss_weight", mtp_loss_weight},       {"bias_update_rate", bias_update_rate},
               {"hash_seed", hash_seed},                   {"init_std", init_std},
               {"clamp_shared_expert", clamp_shared_expert}};
  if (indexer_dense_warmup) j["trex"]["indexer_dense_warmup"] = true;
  // transformers' DeepseekV4Config fields beside the official ones, when the config can be expressed there.
  if (hf_expressible(*this).empty()) add_hf_config_fields(j, *this);
  return j;
}

std::vector<std::string> ModelConfig::preset_names() { return {"tiny", "bench", "small"}; }

ModelConfig ModelConfig::preset(const std::string& name) {
  ModelConfig c;
  c.rope_scaling = RopeScaling{};  // YaRN kept at small scale to exercise the code path (§15)
  c.max_position_embeddings = 65536;
  c.num_nextn_predict_layers = 1;
  c.torch_dtype = "float32";
  if (name == "tiny") {  // §15 tiny: ~17M params, trains in minutes on 2 cores
    c.vocab_size = 8192;
    c.hidden_size = 256;
    c.num_hidden_layers = 6;
    c.compress_ratios = layer_pattern(6, 2, 0, 16, 1);  // [0,0,4,16,4,16] + [0]
    c.num_attention_heads = 4;
    c.head_dim = 128;
    c.qk_rope_head_dim = 32;
    c.q_lora_rank = 128;
    c.o_groups = 2;
    c.o_lora_rank = 64;
    c.sliding_window = 32;
    c.index_n_heads = 4;
    c.index_head_dim = 64;
    c.index_topk = 8;
    c.n_routed_experts = 8;
    c.num_experts_per_tok = 2;
    c.moe_intermediate_size = 256;
    c.num_hash_layers = 1;
  } else if (name == "bench") {  // MACHINE.md §7 MoE shape: d 256, 4 layers, 4 heads, 8 experts f 512, top-2, V 4096
    c.vocab_size = 4096;
    c.hidden_size = 256;
    c.num_hidden_layers = 4;
    c.compress_ratios = layer_pattern(4, 2, 0, 16, 1);  // [0,0,4,16] + [0]
    c.num_attention_heads = 4;
    c.head_dim = 64;
    c.qk_rope_head_dim = 16;
    c.q_lora_rank = 128;
    c.o_groups = 2;
    c.o_lora_rank = 64;
    c.sliding_window = 64;
    c.index_n_heads = 4;
    c.index_head_dim = 32;
    c.index_topk = 16;
    c.n_routed_experts = 8;
    c.num_experts_per_tok = 2;
    c.moe_intermediate_size = 512;
    c.num_hash_layers = 1;
  } else if (name == "small") {  // §15 small
    c.vocab_size = 32768;
    c.hidden_size = 1024;
    c.num_hidden_layers = 8;
    c.compress_ratios = layer_pattern(8, 2, 0, 32, 1);
    c.num_attention_heads = 16;
    c.head_dim = 512;
    c.qk_rope_head_dim = 64;
    c.q_lora_rank = 512;
    c.o_groups = 4;
    c.o_lora_rank = 256;
    c.sliding_window = 64;
    c.index_n_heads = 16;
    c.index_head_dim = 128;
    c.index_topk = 64;
    c.n_routed_experts = 16;
    c.num_experts_per_tok = 2;
    c.moe_intermediate_size = 512;
    c.num_hash_layers = 2;
  } else {
    std::string names;
    for (auto& n : preset_names()) names += (names.empty() ? "" : ", ") + n;
    throw Error("unknown model preset '" + name + "' (valid: " + names + ")");
  }
  c.validate("preset " + name);
  return c;
}

}  // namespace trex::model
