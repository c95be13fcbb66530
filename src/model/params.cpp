// ParamStore layout: the §11 tensor inventory for any ModelConfig.
#include "model/params.hpp"

#include <algorithm>

#include "util/error.hpp"

namespace trex::model {

int64_t ParamStore::add(const std::string& name, std::vector<int64_t> shape, bool trainable) {
  int64_t n = 1;
  for (auto s : shape) n *= s;
  ParamInfo p{name, std::move(shape), n_float_, n, trainable, n_float_, int64_t(canonical_.size()), 0};
  canonical_index_[name] = canonical_.size();
  canonical_.push_back(std::move(p));
  n_float_ += n;
  return n_float_ - n;
}

int64_t ParamStore::add_int(const std::string& name, std::vector<int64_t> shape) {
  int64_t n = 1;
  for (auto s : shape) n *= s;
  ParamInfo p{name, std::move(shape), n_int_, n, false, n_int_, int64_t(canonical_int_.size()), 0};
  canonical_int_index_[name] = canonical_int_.size();
  canonical_int_.push_back(std::move(p));
  n_int_ += n;
  return n_int_ - n;
}

void ParamStore::add_block(const ModelConfig& c, const std::string& p, int64_t layer) {
  const int64_t d = c.hidden_size, n = c.hc_mult, H = c.num_attention_heads, hd = c.head_dim;
  const int64_t qr = c.q_lora_rank, G = c.o_groups, ro = c.o_lora_rank;
  const int64_t E = c.n_routed_experts, f = c.moe_intermediate_size, k = c.num_experts_per_tok;
  add(p + "attn_norm.weight", {d});
  add(p + "ffn_norm.weight", {d});
  for (const char* w : {"attn", "ffn"}) {
    add(p + "hc_" + w + "_fn", {(2 + n) * n, n * d});
    add(p + "hc_" + w + "_base", {(2 + n) * n});
    add(p + "hc_" + w + "_scale", {3});
  }
  const std::string a = p + "attn.";
  add(a + "wq_a.weight", {qr, d});
  add(a + "q_norm.weight", {qr});
  add(a + "wq_b.weight", {H * hd, qr});
  add(a + "wkv.weight", {hd, d});
  add(a + "kv_norm.weight", {hd});
  add(a + "wo_a.weight", {G * ro, H * hd / G});
  add(a + "wo_b.weight", {d, G * ro});
  add(a + "attn_sink", {H});
  const int64_t m = c.ratio(layer);
  if (m != 0) {
    const int64_t kap = m == 4 ? 2 : 1;
    add(a + "compressor.wkv.weight", {kap * hd, d});
    add(a + "compressor.wgate.weight", {kap * hd, d});
    add(a + "compressor.ape", {m, kap * hd});
    add(a + "compressor.norm.weight", {hd});
  }
  if (m == 4) {
    const int64_t HI = c.index_n_heads, cI = c.index_head_dim;
    add(a + "indexer.wq_b.weight", {HI * cI, qr});
    add(a + "indexer.weights_proj.weight", {HI, d});
    add(a + "indexer.compressor.wkv.weight", {2 * cI, d});
    add(a + "indexer.compressor.wgate.weight", {2 * cI, d});
    add(a + "indexer.compressor.ape", {4, 2 * cI});
    add(a + "indexer.compressor.norm.weight", {cI});
  }
  const std::string fp = p + "ffn.";
  add(fp + "gate.weight", {E, d});
  if (c.is_hash_layer(layer))
    add_int(fp + "gate.tid2eid", {c.vocab_size, k});
  else
    add(fp + "gate.bias", {E}, /*trainable=*/false);
  for (int64_t e = 0; e < E; ++e) {
    const std::string ep = fp + "experts." + std::to_string(e) + ".";
    add(ep + "w1.weight", {f, d});
    add(ep + "w3.weight", {f, d});
    add(ep + "w2.weight", {d, f});
  }
  if (c.n_shared_experts > 0) {
    const int64_t fs = f * c.n_shared_experts;
    add(fp + "shared_experts.w1.weight", {fs, d});
    add(fp + "shared_experts.w3.weight", {fs, d});
    add(fp + "shared_experts.w2.weight", {d, fs});
  }
}

ParamStore::ParamStore(const ModelConfig& c, const ParamPlacement& place, bool with_grads) {
  const int64_t d = c.hidden_size, V = c.vocab_size, n = c.hc_mult;
  add("embed.weight", {V, d});
  add("head.weight", {V, d});
  add("norm.weight", {d});
  add("hc_head_fn", {n, n * d});
  add("hc_head_base", {n});
  add("hc_head_scale", {1});
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) add_block(c, "layers." + std::to_string(l) + ".", l);
  for (int64_t i = 0; i < c.num_nextn_predict_layers; ++i) {
    const std::string p = "mtp." + std::to_string(i) + ".";
    add(p + "e_proj.weight", {d, d});
    add(p + "h_proj.weight", {d, d});
    add(p + "enorm.weight", {d});
    add(p + "hnorm.weight", {d});
    add(p + "norm.weight", {d});
    add(p + "hc_head_fn", {n, n * d});
    add(p + "hc_head_base", {n});
    add(p + "hc_head_scale", {1});
    add_block(c, p, c.num_hidden_layers + i);
  }
  n_canonical_ = n_float_;
  // Local layout: the held tensors, grouped by replica group, canonical order inside a group.
  std::vector<int> groups(canonical_.size());
  int n_groups = 1;
  for (size_t i = 0; i < canonical_.size(); ++i) {
    groups[i] = place ? place(canonical_[i].name) : 0;
    n_groups = std::max(n_groups, groups[i] + 1);
  }
  int64_t off = 0;
  for (int g = 0; g < n_groups; ++g) {
    const int64_t begin = off;
    for (size_t i = 0; i < canonical_.size(); ++i) {
      if (groups[i] != g) continue;
      ParamInfo p = canonical_[i];
      p.offset = off;
      p.group = g;
      off += p.numel;
      index_[p.name] = table_.size();
      table_.push_back(std::move(p));
    }
    group_ranges_.emplace_back(begin, off);
  }
  n_float_ = off;
  int64_t ioff = 0;
  for (const auto& cp : canonical_int_) {
    const int g = place ? place(cp.name) : 0;
    if (g < 0) continue;
    ParamInfo p = cp;
    p.offset = ioff;
    p.group = g;
    ioff += p.numel;
    int_index_[p.name] = int_table_.size();
    int_table_.push_back(std::move(p));
  }
  n_int_ = ioff;
  params_.assign(size_t(n_float_), 0.0f);
  if (with_grads) grads_.assign(size_t(n_float_), 0.0f);
  ints_.assign(size_t(n_int_), 0);
}

int64_t ParamStore::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? -1 : table_[it->second].offset;
}

int64_t ParamStore::held_offset(const std::string& name) const {
  if (!canonical_index_.count(name)) throw Error("model has no parameter '" + name + "'");
  return find(name);
}

const ParamInfo& ParamStore::info(const std::string& name) const {
  auto it = index_.find(name);
  if (it == index_.end()) {
    if (canonical_index_.count(name)) throw Error("parameter '" + name + "' is held by another rank");
    throw Error("model has no parameter '" + name + "'");
  }
  return table_[it->second];
}

int64_t* ParamStore::int_param(const std::string& name) {
  auto it = int_index_.find(name);
  if (it == int_index_.end()) {
    if (canonical_int_index_.count(name)) return nullptr;
    throw Error("model has no integer tensor '" + name + "'");
  }
  return ints_.data() + int_table_[it->second].offset;
}

}  // namespace trex::model
