// Parameter counts and FLOPs per token (see model_info.hpp for the conventions).
#include "model/model_info.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "model/checkpoint_layout.hpp"
#include "util/error.hpp"

namespace trex::model {

ParamCounts count_parameters(const ModelConfig& cfg) {
  ParamCounts pc;
  for (const LayoutTensor& t : checkpoint_layout(cfg)) {
    pc.stored_tensors += t.stored_tensor_count();
    pc.stored_bytes += t.stored_bytes();
    if (!t.is_parameter()) continue;
    const int64_t n = t.numel();
    // A token uses num_experts_per_tok of each layer's routed experts; all experts have the same size, so
    // counting experts 0..k-1 as active gives the exact per-token count.
    int64_t active = n;
    if (t.component == Component::Embedding) active = 0;
    if (t.component == Component::RoutedExperts && t.expert >= cfg.num_experts_per_tok) active = 0;
    // Overflow guard: a config typo must give an error, not a wrapped count.
    if (pc.total_with_mtp > std::numeric_limits<int64_t>::max() - n) throw Error("config: parameter count overflows");
    pc.total_with_mtp += n;
    if (t.mtp) {
      pc.mtp_total += n;
      pc.mtp_active += active;
      continue;
    }
    pc.total += n;
    pc.active += active;
    pc.total_by_component[component_name(t.component)] += n;
    pc.active_by_component[component_name(t.component)] += active;
    if (t.component == Component::Embedding) pc.embedding += n;
  }
  pc.active_with_mtp = pc.active + pc.mtp_active;
  for (int64_t l = 0; l < cfg.num_hidden_layers; ++l) {
    switch (cfg.kind(l)) {
      case AttnKind::SWA: ++pc.swa_layers; break;
      case AttnKind::CSA: ++pc.csa_layers; break;
      case AttnKind::HCA: ++pc.hca_layers; break;
    }
  }
  pc.mtp_layers = cfg.num_nextn_predict_layers;
  return pc;
}

namespace {
// §10: matmul parameters of block `l` touched per token.
int64_t block_matmul_params(const ModelConfig& c, int64_t l) {
  const int64_t d = c.hidden_size, H = c.num_attention_heads, hd = c.head_dim, qr = c.q_lora_rank;
  const int64_t G = c.o_groups, ro = c.o_lora_rank, n = c.hc_mult;
  int64_t attn = d * qr + qr * H * hd + d * hd + H * hd * ro + G * ro * d;
  const int64_t ratio = c.ratio(l);
  if (ratio != 0) attn += 2 * d * (ratio == 4 ? 2 : 1) * hd;
  if (ratio == 4) attn += qr * c.index_n_heads * c.index_head_dim + d * c.index_n_heads + 2 * d * 2 * c.index_head_dim;
  const int64_t ffn = d * c.n_routed_experts + (c.num_experts_per_tok + c.n_shared_experts) * 3 * d * c.moe_intermediate_size;
  const int64_t hc = 2 * (2 + n) * n * n * d;
  return attn + ffn + hc;
}
}  // namespace

int64_t matmul_params_per_token(const ModelConfig& c, bool with_mtp) {
  const int64_t d = c.hidden_size;
  int64_t n = d * c.vocab_size;  // head
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) n += block_matmul_params(c, l);
  if (with_mtp)
    for (int64_t m = 0; m < c.num_nextn_predict_layers; ++m)
      n += block_matmul_params(c, c.num_hidden_layers + m) + 2 * d * d + d * c.vocab_size;
  return n;
}

namespace {
// Σ_{u=1..S} floor(u/m), in closed form: q = floor(S/m) full steps, r = S mod m.
double sum_floor_div(int64_t S, int64_t m) {
  const double q = double(S / m), r = double(S % m);
  return double(m) * q * (q - 1) / 2 + q * (r + 1);
}
}  // namespace

KeySums key_sums(int64_t S, int64_t window, int64_t ratio, int64_t topk) {
  KeySums k;
  k.window = S <= window ? double(S) * double(S + 1) / 2 : double(window) * double(window + 1) / 2 + double(S - window) * double(window);
  if (ratio == 4) {
    k.indexer = sum_floor_div(S, 4);
    // min(topk, floor(u/4)) saturates from u = 4*topk on.
    k.compressed = S < 4 * topk ? k.indexer : sum_floor_div(4 * topk - 1, 4) + double(S - 4 * topk + 1) * double(topk);
  } else if (ratio != 0) {
    k.compressed = sum_floor_div(S, ratio);
  }
  return k;
}

KeySums key_sums_ref(int64_t S, int64_t window, int64_t ratio, int64_t topk) {
  KeySums k;
  for (int64_t t = 0; t < S; ++t) {
    k.window += double(std::min(t + 1, window));
    if (ratio == 4) {
      k.compressed += double(std::min(topk, (t + 1) / 4));
      k.indexer += double((t + 1) / 4);
    } else if (ratio != 0) {
      k.compressed += double((t + 1) / ratio);
    }
  }
  return k;
}

FlopsPerToken flops_per_token(const ModelConfig& c, int64_t S, bool with_mtp) {
  if (S <= 0) throw Error("flops_per_token: sequence length must be positive");
  FlopsPerToken f;
  f.seq_len = S;
  f.matmul = 2.0 * static_cast<double>(matmul_params_per_token(c, with_mtp));
  // Layers grouped by compress ratio; per position t the key count depends only on the ratio.
  std::map<int64_t, int64_t> layers_by_ratio;
  const int64_t n_blocks = c.num_hidden_layers + (with_mtp ? c.num_nextn_predict_layers : 0);
  for (int64_t l = 0; l < n_blocks; ++l) ++layers_by_ratio[c.ratio(l)];
  const double per_key = 4.0 * static_cast<double>(c.num_attention_heads * c.head_dim);
  const double per_entry_idx = 2.0 * static_cast<double>(c.index_n_heads * c.index_head_dim);
  double attn = 0, idx = 0;
  for (const auto& [ratio, count] : layers_by_ratio) {
    const KeySums k = key_sums(S, c.sliding_window, ratio, c.index_topk);
    attn += static_cast<double>(count) * per_key * (k.window + k.compressed);
    idx += static_cast<double>(count) * per_entry_idx * k.indexer;
  }
  f.attention = attn / static_cast<double>(S);
  f.indexer = idx / static_cast<double>(S);
  f.forward = f.matmul + f.attention + f.indexer;
  f.train = 3.0 * f.forward;
  return f;
}

BlockFlops block_forward_flops(const ModelConfig& c, int64_t S) {
  if (S <= 0) throw Error("block_forward_flops: sequence length must be positive");
  BlockFlops f;
  const double per_key = 4.0 * static_cast<double>(c.num_attention_heads * c.head_dim);
  const double per_entry_idx = 2.0 * static_cast<double>(c.index_n_heads * c.index_head_dim);
  const int64_t d = c.hidden_size;
  for (int64_t l = 0; l < c.num_hidden_layers + c.num_nextn_predict_layers; ++l) {
    const KeySums k = key_sums(S, c.sliding_window, c.ratio(l), c.index_topk);
    double x = 2.0 * static_cast<double>(block_matmul_params(c, l)) +
               (per_key * (k.window + k.compressed) + per_entry_idx * k.indexer) / static_cast<double>(S);
    if (l < c.num_hidden_layers) {
      f.layers.push_back(x);
    } else {
      f.head += x + 2.0 * static_cast<double>(2 * d * d + d * c.vocab_size);  // MTP block, projections, head
    }
  }
  f.head += 2.0 * static_cast<double>(d * c.vocab_size);
  return f;
}

ModelConfig load_model_config(const std::string& config) {
  for (const auto& name : ModelConfig::preset_names())
    if (name == config) return ModelConfig::preset(name);
  std::filesystem::path p(config);
  if (std::filesystem::is_directory(p)) p /= "config.json";
  if (!std::filesystem::exists(p)) {
    std::string names;
    for (const auto& n : ModelConfig::preset_names()) names += (names.empty() ? "" : ", ") + n;
    throw Error(SourceLocation{p.string()}, "no such config file, and not a preset name (" + names + ")");
  }
  return ModelConfig::from_hf_json(p);
}

namespace {
const char* kFlopsConvention =
    "DEEPSEEK_V4.md §10: forward = 2*N_mm (matmul params per token, incl. head; MTP included) + attention "
    "4*H*c*(window+compressed keys) + indexer 2*H_I*c_I*floor((t+1)/4), averaged over causal positions "
    "0..S-1; train = 3*forward, no recompute; element-wise work not counted";
const char* kParamConvention =
    "total: all floating-point checkpoint tensors without MTP (scales and tid2eid hash tables excluded); "
    "active: per token, without MTP and without the input embedding, k routed + shared experts";
}  // namespace

nlohmann::ordered_json model_info_json(const ModelConfig& cfg, const std::vector<int64_t>& seq_lens) {
  const ParamCounts pc = count_parameters(cfg);
  nlohmann::ordered_json j;
  j["total_params"] = pc.total;
  j["active_params"] = pc.active;
  j["total_params_with_mtp"] = pc.total_with_mtp;
  j["active_params_with_mtp"] = pc.active_with_mtp;
  j["active_params_with_embedding"] = pc.active + pc.embedding;
  j["embedding_params"] = pc.embedding;
  j["mtp_total_params"] = pc.mtp_total;
  j["mtp_active_params"] = pc.mtp_active;
  j["param_convention"] = kParamConvention;
  nlohmann::ordered_json comp = nlohmann::ordered_json::object();
  for (const auto& [name, n] : pc.total_by_component)
    comp[name] = {{"total", n}, {"active", pc.active_by_component.at(name)}};
  j["params_by_component"] = comp;
  j["layers"] = {{"num_hidden_layers", cfg.num_hidden_layers}, {"swa", pc.swa_layers}, {"csa", pc.csa_layers},
                 {"hca", pc.hca_layers}, {"mtp", pc.mtp_layers}};
  j["checkpoint"] = {{"stored_tensors", pc.stored_tensors}, {"stored_data_bytes", pc.stored_bytes}};
  j["matmul_params_per_token"] = matmul_params_per_token(cfg, false);
  j["matmul_params_per_token_with_mtp"] = matmul_params_per_token(cfg, true);
  nlohmann::ordered_json fl = nlohmann::ordered_json::array();
  for (int64_t s : seq_lens) {
    FlopsPerToken f = flops_per_token(cfg, s, true);
    fl.push_back({{"seq_len", s}, {"matmul", f.matmul}, {"attention", f.attention}, {"indexer", f.indexer},
                  {"forward", f.forward}, {"train", f.train}});
  }
  j["flops_per_token"] = {{"convention", kFlopsConvention}, {"per_seq_len", fl}};
  return j;
}

namespace {
std::string human(double n) {
  const double a = std::abs(n);
  if (a >= 1e12) return fmt::format("{:.3f}T", n / 1e12);
  if (a >= 1e9) return fmt::format("{:.2f}B", n / 1e9);
  if (a >= 1e6) return fmt::format("{:.2f}M", n / 1e6);
  if (a >= 1e3) return fmt::format("{:.1f}K", n / 1e3);
  return fmt::format("{:.0f}", n);
}
}  // namespace

std::string model_info_text(const ModelConfig& cfg, const std::vector<int64_t>& seq_lens) {
  const ParamCounts pc = count_parameters(cfg);
  std::string s;
  s += fmt::format("layers: {} ({} SWA, {} CSA, {} HCA) + {} MTP; d={} heads={} experts={} (top-{}, {} shared)\n",
                   cfg.num_hidden_layers, pc.swa_layers, pc.csa_layers, pc.hca_layers, pc.mtp_layers,
                   cfg.hidden_size, cfg.num_attention_heads, cfg.n_routed_experts, cfg.num_experts_per_tok,
                   cfg.n_shared_experts);
  s += fmt::format("total params:  {:>10} ({})   with MTP {:>10}\n", human(double(pc.total)), pc.total,
                   human(double(pc.total_with_mtp)));
  s += fmt::format("active params: {:>10} ({})   with MTP {:>10}   (+embedding {})\n", human(double(pc.active)),
                   pc.active, human(double(pc.active_with_mtp)), human(double(pc.active + pc.embedding)));
  s += fmt::format("  ({})\n", kParamConvention);
  s += fmt::format("{:<24} {:>12} {:>12}\n", "component", "total", "active");
  for (const auto& [name, n] : pc.total_by_component)
    s += fmt::format("{:<24} {:>12} {:>12}\n", name, human(double(n)), human(double(pc.active_by_component.at(name))));
  s += fmt::format("{:<24} {:>12} {:>12}\n", "mtp (all)", human(double(pc.mtp_total)), human(double(pc.mtp_active)));
  s += fmt::format("official checkpoint: {} tensors, {:.2f} GiB of data\n", pc.stored_tensors,
                   double(pc.stored_bytes) / double(1ull << 30));
  s += fmt::format("matmul params per token: {} (with MTP {})\n", human(double(matmul_params_per_token(cfg, false))),
                   human(double(matmul_params_per_token(cfg, true))));
  s += fmt::format("FLOPs per token ({})\n", kFlopsConvention);
  s += fmt::format("{:>8} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "seq", "matmul", "attention", "indexer", "forward",
                   "train");
  for (int64_t sl : seq_lens) {
    FlopsPerToken f = flops_per_token(cfg, sl, true);
    s += fmt::format("{:>8} {:>10} {:>10} {:>10} {:>10} {:>10}\n", sl, human(f.matmul), human(f.attention),
                     human(f.indexer), human(f.forward), human(f.train));
  }
  return s;
}

}  // namespace trex::model
