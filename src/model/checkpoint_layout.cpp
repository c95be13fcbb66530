// Official DeepSeek-V4 checkpoint inventory (see checkpoint_layout.hpp).
#include "model/checkpoint_layout.hpp"

#include "model/safetensors.hpp"
#include "util/error.hpp"

namespace trex::model {

const char* stored_as_name(StoredAs s) {
  switch (s) {
    case StoredAs::BF16: return "BF16";
    case StoredAs::F32: return "F32";
    case StoredAs::FP8Block: return "F8_E4M3+scale128x128";
    case StoredAs::FP4Packed: return "FP4(I8)+scale32";
    case StoredAs::I64: return "I64";
  }
  return "?";
}

const char* component_name(Component c) {
  switch (c) {
    case Component::Embedding: return "embedding";
    case Component::Head: return "head";
    case Component::FinalNorm: return "final_norm_and_hc_head";
    case Component::Attention: return "attention";
    case Component::Compressor: return "compressor";
    case Component::Indexer: return "indexer";
    case Component::HyperConnections: return "hyper_connections";
    case Component::Norms: return "block_norms";
    case Component::Router: return "router";
    case Component::HashTable: return "hash_table";
    case Component::RoutedExperts: return "routed_experts";
    case Component::SharedExperts: return "shared_experts";
    case Component::MtpProjection: return "mtp_projection";
  }
  return "?";
}

int64_t LayoutTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string LayoutTensor::scale_name() const {
  if (stored != StoredAs::FP8Block && stored != StoredAs::FP4Packed) return "";
  constexpr std::string_view suffix = ".weight";
  if (!name.ends_with(suffix)) throw Error("quantised tensor '" + name + "' does not end in .weight");
  return name.substr(0, name.size() - suffix.size()) + ".scale";
}

std::vector<int64_t> LayoutTensor::stored_shape() const {
  if (stored == StoredAs::FP4Packed) return {shape[0], shape[1] / 2};
  return shape;
}

std::vector<int64_t> LayoutTensor::scale_shape() const {
  if (stored == StoredAs::FP8Block) return {(shape[0] + 127) / 128, (shape[1] + 127) / 128};
  if (stored == StoredAs::FP4Packed) return {shape[0], (shape[1] + 31) / 32};
  return {};
}

uint64_t LayoutTensor::stored_bytes() const {
  const uint64_t n = static_cast<uint64_t>(numel());
  switch (stored) {
    case StoredAs::BF16: return 2 * n;
    case StoredAs::F32: return 4 * n;
    case StoredAs::I64: return 8 * n;
    case StoredAs::FP8Block: {
      auto s = scale_shape();
      return n + static_cast<uint64_t>(s[0] * s[1]);
    }
    case StoredAs::FP4Packed: {
      auto s = scale_shape();
      return n / 2 + static_cast<uint64_t>(s[0] * s[1]);
    }
  }
  return 0;
}

namespace {

constexpr int64_t kMaxTensorElements = int64_t(1) << 48;

struct Builder {
  const ModelConfig& c;
  std::vector<LayoutTensor> out;
  int64_t layer = -1;
  bool mtp = false;

  void add(std::string name, std::vector<int64_t> shape, StoredAs s, Component comp, int64_t expert = -1) {
    int64_t n = 1;
    for (int64_t d : shape)
      if (d <= 0 || __builtin_mul_overflow(n, d, &n) || n > kMaxTensorElements)
        throw Error("config: tensor '" + name + "' would have shape " + shape_str(shape) +
                    ", which is empty or too large (over 2^48 elements)");
    out.push_back(LayoutTensor{std::move(name), std::move(shape), s, comp, layer, mtp, expert});
  }

  // One transformer block (attention + MoE with their mHC wrappers), names prefixed by `p`.
  void block(const std::string& p, int64_t l, bool hash_layer) {
    const int64_t d = c.hidden_size, n = c.hc_mult, H = c.num_attention_heads, hd = c.head_dim;
    const int64_t G = c.o_groups, ro = c.o_lora_rank, qr = c.q_lora_rank, E = c.n_routed_experts;
    const int64_t f = c.moe_intermediate_size, fs = c.n_shared_experts * f;
    add(p + "attn_norm.weight", {d}, StoredAs::BF16, Component::Norms);
    add(p + "ffn_norm.weight", {d}, StoredAs::BF16, Component::Norms);
    for (const char* s : {"attn", "ffn"}) {
      add(p + "hc_" + s + "_fn", {(2 + n) * n, n * d}, StoredAs::F32, Component::HyperConnections);
      add(p + "hc_" + s + "_base", {(2 + n) * n}, StoredAs::F32, Component::HyperConnections);
      add(p + "hc_" + s + "_scale", {3}, StoredAs::F32, Component::HyperConnections);
    }
    add(p + "attn.wq_a.weight", {qr, d}, StoredAs::FP8Block, Component::Attention);
    add(p + "attn.q_norm.weight", {qr}, StoredAs::BF16, Component::Attention);
    add(p + "attn.wq_b.weight", {H * hd, qr}, StoredAs::FP8Block, Component::Attention);
    add(p + "attn.wkv.weight", {hd, d}, StoredAs::FP8Block, Component::Attention);
    add(p + "attn.kv_norm.weight", {hd}, StoredAs::BF16, Component::Attention);
    add(p + "attn.wo_a.weight", {G * ro, H * hd / G}, StoredAs::FP8Block, Component::Attention);
    add(p + "attn.wo_b.weight", {d, G * ro}, StoredAs::FP8Block, Component::Attention);
    add(p + "attn.attn_sink", {H}, StoredAs::F32, Component::Attention);
    const int64_t ratio = c.ratio(l);
    if (ratio != 0) {
      const int64_t kappa = ratio == 4 ? 2 : 1;
      add(p + "attn.compressor.wkv.weight", {kappa * hd, d}, StoredAs::BF16, Component::Compressor);
      add(p + "attn.compressor.wgate.weight", {kappa * hd, d}, StoredAs::BF16, Component::Compressor);
      add(p + "attn.compressor.ape", {ratio, kappa * hd}, StoredAs::F32, Component::Compressor);
      add(p + "attn.compressor.norm.weight", {hd}, StoredAs::BF16, Component::Compressor);
    }
    if (ratio == 4) {
      const int64_t HI = c.index_n_heads, cI = c.index_head_dim;
      add(p + "attn.indexer.wq_b.weight", {HI * cI, qr}, StoredAs::FP8Block, Component::Indexer);
      add(p + "attn.indexer.weights_proj.weight", {HI, d}, StoredAs::BF16, Component::Indexer);
      add(p + "attn.indexer.compressor.wkv.weight", {2 * cI, d}, StoredAs::BF16, Component::Indexer);
      add(p + "attn.indexer.compressor.wgate.weight", {2 * cI, d}, StoredAs::BF16, Component::Indexer);
      add(p + "attn.indexer.compressor.ape", {4, 2 * cI}, StoredAs::F32, Component::Indexer);
      add(p + "attn.indexer.compressor.norm.weight", {cI}, StoredAs::BF16, Component::Indexer);
    }
    add(p + "ffn.gate.weight", {E, d}, StoredAs::BF16, Component::Router);
    if (hash_layer)
      add(p + "ffn.gate.tid2eid", {c.vocab_size, c.num_experts_per_tok}, StoredAs::I64, Component::HashTable);
    else
      add(p + "ffn.gate.bias", {E}, StoredAs::F32, Component::Router);
    for (int64_t e = 0; e < E; ++e) {
      const std::string q = p + "ffn.experts." + std::to_string(e) + ".";
      add(q + "w1.weight", {f, d}, StoredAs::FP4Packed, Component::RoutedExperts, e);
      add(q + "w3.weight", {f, d}, StoredAs::FP4Packed, Component::RoutedExperts, e);
      add(q + "w2.weight", {d, f}, StoredAs::FP4Packed, Component::RoutedExperts, e);
    }
    if (fs > 0) {
      add(p + "ffn.shared_experts.w1.weight", {fs, d}, StoredAs::FP8Block, Component::SharedExperts);
      add(p + "ffn.shared_experts.w3.weight", {fs, d}, StoredAs::FP8Block, Component::SharedExperts);
      add(p + "ffn.shared_experts.w2.weight", {d, fs}, StoredAs::FP8Block, Component::SharedExperts);
    }
  }

  void hc_head(const std::string& p) {
    const int64_t d = c.hidden_size, n = c.hc_mult;
    add(p + "hc_head_fn", {n, n * d}, StoredAs::F32, Component::FinalNorm);
    add(p + "hc_head_base", {n}, StoredAs::F32, Component::FinalNorm);
    add(p + "hc_head_scale", {1}, StoredAs::F32, Component::FinalNorm);
  }
};

}  // namespace

std::vector<LayoutTensor> checkpoint_layout(const ModelConfig& cfg) {
  cfg.validate();
  // Refuse configs whose inventory could not be listed in memory (a config typo, not a model).
  const double blocks = double(cfg.num_hidden_layers) + double(cfg.num_nextn_predict_layers);
  if (blocks * (3.0 * double(cfg.n_routed_experts) + 64.0) > 2e7)
    throw Error("config: " + std::to_string(cfg.num_hidden_layers) + " layers x " +
                std::to_string(cfg.n_routed_experts) + " experts is more than 20 million tensors");
  Builder b{cfg, {}};
  const int64_t d = cfg.hidden_size, V = cfg.vocab_size;
  b.add("embed.weight", {V, d}, StoredAs::BF16, Component::Embedding);
  b.add("head.weight", {V, d}, StoredAs::BF16, Component::Head);
  b.add("norm.weight", {d}, StoredAs::BF16, Component::FinalNorm);
  b.hc_head("");
  for (int64_t l = 0; l < cfg.num_hidden_layers; ++l) {
    b.layer = l;
    b.block("layers." + std::to_string(l) + ".", l, cfg.is_hash_layer(l));
  }
  b.mtp = true;
  for (int64_t m = 0; m < cfg.num_nextn_predict_layers; ++m) {
    const int64_t l = cfg.num_hidden_layers + m;
    const std::string p = "mtp." + std::to_string(m) + ".";
    b.layer = l;
    b.add(p + "e_proj.weight", {d, d}, StoredAs::FP8Block, Component::MtpProjection);
    b.add(p + "h_proj.weight", {d, d}, StoredAs::FP8Block, Component::MtpProjection);
    b.add(p + "enorm.weight", {d}, StoredAs::BF16, Component::MtpProjection);
    b.add(p + "hnorm.weight", {d}, StoredAs::BF16, Component::MtpProjection);
    b.add(p + "norm.weight", {d}, StoredAs::BF16, Component::FinalNorm);
    b.hc_head(p);
    b.block(p, l, false);  // MTP blocks use a non-hash gate with their own bias (§8)
  }
  return std::move(b.out);
}

}  // namespace trex::model
