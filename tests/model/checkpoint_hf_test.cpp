// Hugging Face side of checkpoints (checkpoint_hf.hpp, docs/huggingface.md): transformers' tensor names (its
// module paths and what its save_pretrained writes) map to the official ones; a folder in transformers' layout
// (renamed tensors, fused experts, no MTP) loads bit-exactly; the transformers config fields round-trip and a
// config with only those fields parses to the same model; sharded saves; the tokenizer files.
// The live check against transformers itself is tests/reference/hf/hf_check.py (not part of make test).
#include "model/checkpoint_hf.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <filesystem>
#include <set>

#include "model/checkpoint.hpp"
#include "model/checkpoint_layout.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/jsonl.hpp"
#include "util/rng.hpp"

#include "model/param_store_testing.hpp"
#include "temp_dir.hpp"

using namespace trex::model;
namespace fs = std::filesystem;

namespace {

ModelConfig hf_config() {
  ModelConfig c = ModelConfig::preset("tiny");
  c.vocab_size = 64;
  c.hidden_size = 32;
  c.num_hidden_layers = 4;
  c.compress_ratios = {0, 4, 8, 4, 0};
  c.num_attention_heads = 2;
  c.head_dim = 32;
  c.qk_rope_head_dim = 8;
  c.q_lora_rank = 16;
  c.o_groups = 2;
  c.o_lora_rank = 8;
  c.sliding_window = 8;
  c.index_n_heads = 2;
  c.index_head_dim = 16;
  c.index_topk = 3;
  c.n_routed_experts = 4;
  c.num_experts_per_tok = 2;
  c.moe_intermediate_size = 16;
  c.num_hash_layers = 1;
  c.validate();
  return c;
}

using trex::testing::ScopedTempDir;
using trex::testing::fill_random;
using trex::testing::same_bits;

}  // namespace

// Expected spellings: DeepseekV4ForCausalLM(config).state_dict() keys and save_pretrained's file keys, read off
// transformers 5.23 for a config with these layer kinds.
TEST(CheckpointHf, ModuleKeysAreTransformersNames) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"embed.weight", "model.embed_tokens.weight"},
      {"head.weight", "lm_head.weight"},
      {"norm.weight", "model.norm.weight"},
      {"hc_head_fn", "model.hc_head.hc_fn"},
      {"hc_head_scale", "model.hc_head.hc_scale"},
      {"layers.0.attn_norm.weight", "model.layers.0.input_layernorm.weight"},
      {"layers.0.ffn_norm.weight", "model.layers.0.post_attention_layernorm.weight"},
      {"layers.0.hc_attn_fn", "model.layers.0.attn_hc.fn"},
      {"layers.0.hc_ffn_base", "model.layers.0.ffn_hc.base"},
      {"layers.0.attn.attn_sink", "model.layers.0.self_attn.sinks"},
      {"layers.0.attn.wq_a.weight", "model.layers.0.self_attn.q_a_proj.weight"},
      {"layers.0.attn.q_norm.weight", "model.layers.0.self_attn.q_a_norm.weight"},
      {"layers.0.attn.wq_b.weight", "model.layers.0.self_attn.q_b_proj.weight"},
      {"layers.0.attn.wkv.weight", "model.layers.0.self_attn.kv_proj.weight"},
      {"layers.0.attn.kv_norm.weight", "model.layers.0.self_attn.kv_norm.weight"},
      {"layers.0.attn.wo_a.weight", "model.layers.0.self_attn.o_a_proj.weight"},
      {"layers.0.attn.wo_b.weight", "model.layers.0.self_attn.o_b_proj.weight"},
      {"layers.2.attn.compressor.ape", "model.layers.2.self_attn.compressor.position_bias"},
      {"layers.2.attn.compressor.wkv.weight", "model.layers.2.self_attn.compressor.kv_proj.weight"},
      {"layers.2.attn.compressor.wgate.weight", "model.layers.2.self_attn.compressor.gate_proj.weight"},
      {"layers.2.attn.compressor.norm.weight", "model.layers.2.self_attn.compressor.kv_norm.weight"},
      {"layers.1.attn.indexer.compressor.ape", "model.layers.1.self_attn.compressor.indexer.position_bias"},
      {"layers.1.attn.indexer.compressor.wkv.weight", "model.layers.1.self_attn.compressor.indexer.kv_proj.weight"},
      {"layers.1.attn.indexer.compressor.norm.weight", "model.layers.1.self_attn.compressor.indexer.kv_norm.weight"},
      {"layers.1.attn.indexer.wq_b.weight", "model.layers.1.self_attn.compressor.indexer.q_b_proj.weight"},
      {"layers.1.attn.indexer.weights_proj.weight",
       "model.layers.1.self_attn.compressor.indexer.scorer.weights_proj.weight"},
      {"layers.0.ffn.gate.weight", "model.layers.0.mlp.gate.weight"},
      {"layers.0.ffn.gate.tid2eid", "model.layers.0.mlp.gate.tid2eid"},
      {"layers.1.ffn.gate.bias", "model.layers.1.mlp.gate.e_score_correction_bias"},
      {"layers.1.ffn.shared_experts.w1.weight", "model.layers.1.mlp.shared_experts.gate_proj.weight"},
      {"layers.1.ffn.shared_experts.w2.weight", "model.layers.1.mlp.shared_experts.down_proj.weight"},
      {"layers.1.ffn.shared_experts.w3.weight", "model.layers.1.mlp.shared_experts.up_proj.weight"},
      {"layers.1.ffn.experts.3.w1.weight", "model.layers.1.mlp.experts.3.w1.weight"},
      // transformers' own module paths are fixed points
      {"model.layers.0.self_attn.kv_norm.weight", "model.layers.0.self_attn.kv_norm.weight"},
      {"model.norm.weight", "model.norm.weight"},
      {"model.layers.1.mlp.experts.gate_up_proj", "model.layers.1.mlp.experts.gate_up_proj"},
      // what save_pretrained writes (its renames reverted, "model." kept; attention kv_norm comes back as "norm")
      {"model.layers.0.attn.norm.weight", "model.layers.0.self_attn.kv_norm.weight"},
      {"model.layers.0.hc_attn_fn", "model.layers.0.attn_hc.fn"},
      {"model.layers.2.attn.compressor.norm.weight", "model.layers.2.self_attn.compressor.kv_norm.weight"},
      {"model.layers.1.ffn.experts.0.w2.weight", "model.layers.1.mlp.experts.0.w2.weight"},
  };
  for (const auto& [from, to] : cases) EXPECT_EQ(hf_module_key(from), to) << from;
  // One transformers name per official tensor, MTP included (transformers skips those).
  std::set<std::string> seen;
  for (const auto& t : checkpoint_layout(hf_config())) EXPECT_TRUE(seen.insert(hf_module_key(t.name)).second) << t.name;
}

// A folder as transformers' save_pretrained leaves it (renamed tensors, no MTP) and one with its in-memory layout
// (fused experts) load into trex bit-exactly; the MTP tensors keep their values and the report says so.
TEST(CheckpointHf, LoadsTransformersLayoutsBitExactly) {
  const ModelConfig cfg = hf_config();
  ParamStore a(cfg);
  fill_random(a, 7, 4);
  ScopedTempDir d("trex_hf_layouts");
  for (bool fused : {false, true}) {
    std::vector<TensorToWrite> ts;
    std::vector<std::vector<float>> keep;
    keep.reserve(size_t(2 * cfg.num_hidden_layers));  // spans into these must stay valid
    std::map<std::string, std::vector<std::pair<std::string, int64_t>>> groups;  // fused key -> (w, expert)
    for (const auto& p : a.table()) {
      if (p.name.starts_with("mtp.")) continue;
      std::string k = hf_module_key(p.name);
      if (k == "lm_head.weight") k = "head.weight";  // as save_pretrained writes it
      const auto pos = p.name.find(".experts.");
      if (fused && pos != std::string::npos && p.name.find("shared") == std::string::npos) continue;
      ts.push_back({k, DType::F32, p.shape, std::as_bytes(a.params().subspan(size_t(p.offset), size_t(p.numel)))});
    }
    for (const auto& p : a.int_table())
      ts.push_back({hf_module_key(p.name), DType::I64, p.shape,
                    std::as_bytes(a.int_params().subspan(size_t(p.offset), size_t(p.numel)))});
    if (fused) {
      const int64_t E = cfg.n_routed_experts, f = cfg.moe_intermediate_size, dm = cfg.hidden_size;
      for (int64_t l = 0; l < cfg.num_hidden_layers; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".ffn.experts.";
        auto& gu = keep.emplace_back();
        auto& dn = keep.emplace_back();
        for (int64_t e = 0; e < E; ++e) {
          for (const char* w : {"w1", "w3"}) {
            const float* src = a.param(p + std::to_string(e) + "." + w + ".weight");
            gu.insert(gu.end(), src, src + f * dm);
          }
          const float* src = a.param(p + std::to_string(e) + ".w2.weight");
          dn.insert(dn.end(), src, src + dm * f);
        }
        const std::string m = "model.layers." + std::to_string(l) + ".mlp.experts.";
        ts.push_back({m + "gate_up_proj", DType::F32, {E, 2 * f, dm}, as_bytes_of(gu)});
        ts.push_back({m + "down_proj", DType::F32, {E, dm, f}, as_bytes_of(dn)});
      }
    }
    const fs::path dir = d.path / (fused ? "fused" : "saved");
    fs::create_directories(dir);
    write_safetensors(dir / "model.safetensors", ts);
    ParamStore b(cfg);
    fill_random(b, 99, 4);
    ParamStore before(cfg);
    std::copy(b.params().begin(), b.params().end(), before.params().begin());
    const LoadReport rep = load_weights(dir, b);
    EXPECT_TRUE(rep.missing.empty() && rep.unexpected.empty()) << rep.summary();
    EXPECT_GT(rep.mtp_absent, 0) << rep.summary();
    EXPECT_NE(rep.summary().find("MTP absent"), std::string::npos) << rep.summary();
    for (const auto& p : a.table()) {
      auto x = a.params().subspan(size_t(p.offset), size_t(p.numel));
      auto y = b.params().subspan(size_t(p.offset), size_t(p.numel));
      auto z = before.params().subspan(size_t(p.offset), size_t(p.numel));
      if (p.name.starts_with("mtp.")) EXPECT_TRUE(same_bits(y, z)) << p.name << " changed";
      else EXPECT_TRUE(same_bits(x, y)) << p.name;
    }
    EXPECT_TRUE(std::equal(a.int_params().begin(), a.int_params().end(), b.int_params().begin()));
    // Strict mode: the absent MTP module is "missing" like any tensor.
    LoadOptions strict;
    strict.allow_absent_mtp = false;
    EXPECT_THROW(load_weights(dir, b, strict), trex::Error);
  }
}

// Partly missing MTP is still an error (only a checkpoint without any mtp.* tensor is transformers' layout);
// the same tensor under two spellings is an error.
TEST(CheckpointHf, PartialMtpAndDoubleSpellingsAreErrors) {
  const ModelConfig cfg = hf_config();
  ParamStore a(cfg);
  fill_random(a, 3, 4);
  ScopedTempDir d("trex_hf_errors");
  std::vector<TensorToWrite> ts;
  for (const auto& p : a.table()) {
    if (p.name == "mtp.0.e_proj.weight") continue;
    ts.push_back({p.name, DType::F32, p.shape, std::as_bytes(a.params().subspan(size_t(p.offset), size_t(p.numel)))});
  }
  for (const auto& p : a.int_table())
    ts.push_back({p.name, DType::I64, p.shape, std::as_bytes(a.int_params().subspan(size_t(p.offset), size_t(p.numel)))});
  write_safetensors(d.path / "partial.safetensors", ts);
  ParamStore b(cfg);
  try {
    load_weights(d.path / "partial.safetensors", b);
    FAIL() << "a missing MTP tensor was accepted";
  } catch (const trex::Error& e) {
    EXPECT_NE(std::string(e.what()).find("mtp.0.e_proj.weight"), std::string::npos) << e.what();
  }
  ts.push_back({"lm_head.weight", DType::F32, {cfg.vocab_size, cfg.hidden_size},
                std::as_bytes(a.params().subspan(size_t(a.info("head.weight").offset),
                                                 size_t(a.info("head.weight").numel)))});
  write_safetensors(d.path / "twice.safetensors", ts);
  EXPECT_THROW(load_weights(d.path / "twice.safetensors", b), trex::Error);
}

// config.json carries transformers' DeepseekV4Config fields; a config with only those (as transformers writes
// it) parses to the same model; what trex does not compute is refused.
TEST(CheckpointHf, ConfigFieldsRoundTrip) {
  ModelConfig cfg = hf_config();
  cfg.num_hidden_layers = 5;
  cfg.compress_ratios = {0, 4, 8, 4, 8, 0};
  cfg.num_hash_layers = 2;
  cfg.validate();
  const nlohmann::json j = cfg.to_hf_json();
  EXPECT_EQ(j["model_type"], "deepseek_v4");
  EXPECT_EQ(j["layer_types"], nlohmann::json({"sliding_attention", "compressed_sparse_attention",
                                              "heavily_compressed_attention", "compressed_sparse_attention",
                                              "heavily_compressed_attention"}));
  EXPECT_EQ(j["mlp_layer_types"], nlohmann::json({"hash_moe", "hash_moe", "moe", "moe", "moe"}));
  EXPECT_EQ(j["compress_rates"]["heavily_compressed_attention"], 8);
  EXPECT_EQ(j["partial_rotary_factor"], 0.25);
  EXPECT_EQ(j["rope_parameters"]["compress"]["rope_type"], "yarn");
  EXPECT_EQ(j["rope_parameters"]["compress"]["attention_factor"], 1.0);
  EXPECT_EQ(j["rope_parameters"]["main"]["rope_theta"], 10000.0);

  nlohmann::json hf = j;
  for (const char* k : {"compress_ratios", "num_hash_layers", "qk_rope_head_dim", "rope_scaling", "rope_theta",
                        "compress_rope_theta", "torch_dtype", "trex"})
    hf.erase(k);
  const ModelConfig back = ModelConfig::from_json(hf, "hf-config");
  nlohmann::json want = j, got = back.to_hf_json();
  want.erase("trex");
  got.erase("trex");
  EXPECT_EQ(got, want);

  auto refused = [&](nlohmann::json bad, const std::string& what) {
    try {
      ModelConfig::from_json(bad, "bad");
      ADD_FAILURE() << "accepted: " << what;
    } catch (const trex::Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  nlohmann::json b1 = hf;
  b1["rope_parameters"]["compress"]["attention_factor"] = 1.2772588722239782;  // transformers' default mscale
  refused(b1, "attention_factor");
  nlohmann::json b2 = hf;
  b2["mlp_layer_types"] = {"moe", "hash_moe", "moe", "moe", "moe"};
  refused(b2, "hash_moe");
  nlohmann::json b3 = hf;
  b3["layer_types"][1] = "full_attention";
  refused(b3, "full_attention");
  nlohmann::json b4 = hf;
  b4["rope_parameters"]["main"]["rope_type"] = "yarn";
  refused(b4, "main.rope_type");

  // Different HCA ratios cannot be written as one compress_rates: the legacy fields only.
  ModelConfig mixed = hf_config();
  mixed.compress_ratios = {0, 4, 8, 16, 0};
  EXPECT_FALSE(hf_expressible(mixed).empty());
  EXPECT_FALSE(mixed.to_hf_json().contains("layer_types"));
}

// Above the shard size the weights are split with an index; a later unsharded save removes the shards.
TEST(CheckpointHf, ShardedSaveWithIndex) {
  const ModelConfig cfg = hf_config();
  ParamStore a(cfg), b(cfg), c(cfg);
  fill_random(a, 5, 4);
  ScopedTempDir d("trex_hf_shards");
  SaveOptions so;
  so.max_shard_bytes = 64 << 10;
  save_weights(d.path, a, cfg, DType::F32, so);
  const auto index = trex::parse_json_file(d.path / "model.safetensors.index.json");
  std::set<std::string> files;
  for (auto& [k, v] : index["weight_map"].items()) files.insert(v.get<std::string>());
  EXPECT_GT(files.size(), 2u);
  uint64_t total = 0;
  for (const auto& f : files) {
    EXPECT_TRUE(f.starts_with("model-000") && f.find("-of-") != std::string::npos) << f;
    EXPECT_LE(fs::file_size(d.path / f), uint64_t(64 << 10) + 65536) << f;
    total += SafetensorsFile::open(d.path / f).tensors().size();
  }
  EXPECT_EQ(total, a.table().size() + a.int_table().size());
  EXPECT_FALSE(fs::exists(d.path / "model.safetensors"));
  EXPECT_TRUE(load_weights(d.path, b).missing.empty());
  EXPECT_TRUE(same_bits(a.params(), b.params()));
  EXPECT_TRUE(fs::exists(d.path / "generation_config.json"));

  save_weights(d.path, a, cfg);  // unsharded again
  EXPECT_FALSE(fs::exists(d.path / "model.safetensors.index.json"));
  for (const auto& f : files) EXPECT_FALSE(fs::exists(d.path / f)) << f;
  load_weights(d.path, c);
  EXPECT_TRUE(same_bits(a.params(), c.params()));
}

// The tokenizer beside the weights: tokenizer.json copied, tokenizer_config.json with the chat template.
TEST(CheckpointHf, TokenizerFilesAndGenerationConfig) {
  const ModelConfig cfg = hf_config();
  ParamStore a(cfg);
  ScopedTempDir d("trex_hf_tok");
  const nlohmann::json tok = {
      {"version", "1.0"},
      {"added_tokens", {{{"id", 0}, {"content", "<｜begin▁of▁sentence｜>"}, {"special", true}},
                        {{"id", 1}, {"content", "<｜end▁of▁sentence｜>"}, {"special", true}}}},
      {"model", {{"type", "BPE"}, {"vocab", nlohmann::json::object()}, {"merges", nlohmann::json::array()}}}};
  trex::write_file_atomic(d.path / "src_tokenizer.json", tok.dump());
  SaveOptions so;
  so.tokenizer = d.path / "src_tokenizer.json";
  save_weights(d.path / "ck", a, cfg, DType::F32, so);
  EXPECT_EQ(trex::read_file(d.path / "ck" / "tokenizer.json"), tok.dump());
  const auto tc = trex::parse_json_file(d.path / "ck" / "tokenizer_config.json");
  EXPECT_EQ(tc["tokenizer_class"], "PreTrainedTokenizerFast");
  EXPECT_EQ(tc["bos_token"], "<｜begin▁of▁sentence｜>");
  EXPECT_EQ(tc["eos_token"], "<｜end▁of▁sentence｜>");
  EXPECT_EQ(tc["add_bos_token"], false);
  EXPECT_EQ(tc["chat_template"], hf_chat_template());
  const auto gc = trex::parse_json_file(d.path / "ck" / "generation_config.json");
  EXPECT_EQ(gc["eos_token_id"], cfg.eos_token_id);
  EXPECT_EQ(gc["bos_token_id"], cfg.bos_token_id);
  trex::write_file_atomic(d.path / "not_tok.json", "{\"a\": 1}");
  so.tokenizer = d.path / "not_tok.json";
  EXPECT_THROW(save_weights(d.path / "ck2", a, cfg, DType::F32, so), trex::Error);
}
