// The cost model's formulas (PLANNER_AND_TUNER.md §A3); approximations are listed in docs/plan.md.
#include "plan/cost_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/checkpoint_layout.hpp"
#include "model/model_info.hpp"
#include "util/error.hpp"

namespace trex::plan {

namespace {
constexpr double kGB = 1e9;

// Activation bytes per token per layer on one rank before the tensor-parallel split, by recompute policy (bf16,
// derived from DEEPSEEK_V4.md's shapes rather than a dense transformer's 34·d: a V4 query is H·c wide, 9× d
// for Pro). Attention: block input, q_a and its norm (2·q_r), q before and after norm/RoPE and the attention
// output (3·H·c), the shared K=V entry and its norm (2·c), the grouped o_lora output (G·r_o). mHC: the n
// streams at the input and the pre/post mixes (3·n·d). MoE: per routed expert the dispatched input, gate, up
// and activation product (d + 3f), and the same for the shared expert. Full recompute keeps the n input
// streams only; selective recomputes the routed experts' insides and keeps their inputs.
double activation_bytes_per_token(const ModelProfile& m, Recompute r) {
  const double d = double(m.hidden), n = double(m.hc_mult), f = double(m.expert_ffn), k = double(m.top_k);
  if (m.dense_gpt) {
    switch (r) {
      case Recompute::Full: return 2 * d;
      case Recompute::Selective: return 34 * d;
      case Recompute::None: break;
    }
    return 34 * d + 5.0 * double(m.heads) * double(m.seq_len);
  }
  const double attention = d + 2.0 * double(m.q_lora) + 3.0 * double(m.heads * m.head_dim) +
                           2.0 * double(m.head_dim) + double(m.o_groups * m.o_lora);
  const double mhc = 3 * n * d, shared = d + 3 * f;
  switch (r) {
    case Recompute::Full: return n * d * 2;
    case Recompute::Selective: return (attention + mhc + k * d + shared) * 2;
    case Recompute::None: break;
  }
  return (attention + mhc + k * (d + 3 * f) + shared) * 2;
}
}  // namespace

ModelProfile profile_model(const model::ModelConfig& cfg, int64_t seq_len, const std::string& name) {
  if (seq_len <= 0) throw Error("plan: sequence length must be positive");
  ModelProfile m;
  m.name = name;
  m.seq_len = seq_len;
  m.hidden = cfg.hidden_size;
  m.heads = cfg.num_attention_heads;
  m.experts = cfg.n_routed_experts;
  m.top_k = cfg.num_experts_per_tok;
  m.expert_ffn = cfg.moe_intermediate_size;
  m.vocab = cfg.vocab_size;
  m.hc_mult = cfg.hc_mult;
  m.head_dim = cfg.head_dim;
  m.q_lora = cfg.q_lora_rank;
  m.o_groups = cfg.o_groups;
  m.o_lora = cfg.o_lora_rank;
  const int64_t L = cfg.num_hidden_layers;
  m.layers.assign(size_t(L), LayerProfile{});
  for (const auto& t : model::checkpoint_layout(cfg)) {
    if (!t.is_parameter()) continue;
    const double n = double(t.numel());
    const bool expert = t.component == model::Component::RoutedExperts;
    if (t.mtp || t.layer >= L) {
      (expert ? m.head_expert_params : m.head_params) += n;
    } else if (t.layer >= 0) {
      (expert ? m.layers[size_t(t.layer)].expert_params : m.layers[size_t(t.layer)].dense_params) += n;
    } else if (t.component == model::Component::Embedding) {
      m.embedding_params += n;
    } else {
      m.head_params += n;
    }
  }
  const auto bf = model::block_forward_flops(cfg, seq_len);
  const double per_key = 4.0 * double(cfg.num_attention_heads * cfg.head_dim);
  const double per_entry = 2.0 * double(cfg.index_n_heads * cfg.index_head_dim);
  const double routed = 2.0 * double(cfg.num_experts_per_tok) * 3.0 * double(cfg.hidden_size * cfg.moe_intermediate_size);
  for (int64_t l = 0; l < L; ++l) {
    auto& lp = m.layers[size_t(l)];
    const auto ks = model::key_sums(seq_len, cfg.sliding_window, cfg.ratio(l), cfg.index_topk);
    lp.moe = lp.expert_params > 0;
    lp.attention_flops = (per_key * (ks.window + ks.compressed) + per_entry * ks.indexer) / double(seq_len);
    lp.expert_flops = lp.moe ? routed : 0.0;
    lp.dense_flops = bf.layers[size_t(l)] - lp.attention_flops - lp.expert_flops;
    m.forward_flops += bf.layers[size_t(l)];
  }
  m.head_flops = bf.head;
  m.forward_flops += bf.head;
  return m;
}

std::vector<DenseGpt> dense_gpt_presets() {
  return {{"gpt-175b", 96, 12288, 96, 51200}, {"gpt-530b", 105, 20480, 128, 51200}, {"gpt-1t", 128, 25600, 160, 51200}};
}

ModelProfile profile_dense_gpt(const DenseGpt& g, int64_t seq_len) {
  if (seq_len <= 0 || g.layers <= 0 || g.hidden <= 0 || g.heads <= 0 || g.vocab <= 0)
    throw Error("plan: a dense GPT needs positive layers, hidden, heads, vocab and sequence length");
  ModelProfile m;
  m.name = g.name;
  m.dense_gpt = true;
  m.seq_len = seq_len;
  m.hidden = g.hidden;
  m.heads = g.heads;
  m.vocab = g.vocab;
  m.hc_mult = 1;  // one residual stream: pipeline sends carry s·b·d
  m.head_dim = g.hidden / g.heads;
  const double d = double(g.hidden), s = double(seq_len);
  for (int64_t l = 0; l < g.layers; ++l) {
    LayerProfile lp;
    lp.moe = false;
    lp.dense_params = 12 * d * d + 13 * d;
    lp.dense_flops = 24 * d * d;
    lp.attention_flops = 4 * s * d;
    m.layers.push_back(lp);
    m.forward_flops += lp.dense_flops + lp.attention_flops;
  }
  m.embedding_params = double(g.vocab) * d + s * d;
  m.head_params = double(g.vocab) * d + 2 * d;
  m.head_flops = 2 * double(g.vocab) * d;
  m.forward_flops += m.head_flops;
  return m;
}

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
  }
  return "?";
}

const char* to_string(OptimizerPlacement o) {
  switch (o) {
    case OptimizerPlacement::Replicated: return "replicated";
    case OptimizerPlacement::Sharded: return "sharded";
    case OptimizerPlacement::HostSwap: return "host_swap";
  }
  return "?";
}

std::string Candidate::str() const {
  std::string s = fmt::format("TP{} PP{} VPP{} EP{} ETP{} DP{} EDP{}", tp, pp, vpp, ep, etp, dp, edp);
  if (cp > 1) s += fmt::format(" CP{}", cp);
  return s + fmt::format(" MBS{} m{} {} {}", mbs, micro_batches, to_string(recompute), to_string(optimizer));
}

double allreduce_seconds(double bytes, long n, double gbps, double latency_us) {
  if (n <= 1) return 0.0;
  const double nn = double(n);
  return 2.0 * (nn - 1) / nn * bytes / (gbps * kGB) + 2.0 * (nn - 1) * latency_us * 1e-6;
}

double reduce_scatter_seconds(double bytes, long n, double gbps, double latency_us) {
  if (n <= 1) return 0.0;
  const double nn = double(n);
  return (nn - 1) / nn * bytes / (gbps * kGB) + (nn - 1) * latency_us * 1e-6;
}

double alltoall_seconds(double bytes_per_rank, long n, double gbps, double latency_us) {
  if (n <= 1) return 0.0;
  const double nn = double(n);
  return (nn - 1) / nn * bytes_per_rank / (gbps * kGB) + latency_us * 1e-6;
}

double pipeline_seconds(const std::vector<double>& t, int64_t m, int v) {
  if (t.empty() || m <= 0 || v <= 0) throw Error("pipeline_seconds: needs stages, m >= 1 and v >= 1");
  double sum = 0, mx = 0;
  for (double x : t) {
    sum += x;
    mx = std::max(mx, x);
  }
  return double(m) * mx + (sum - mx) / double(v);
}

double bytes_per_param(long shards, bool optimizer_on_device) {
  if (shards < 1) throw Error("bytes_per_param: shards must be >= 1");
  return 6.0 + (optimizer_on_device ? 12.0 / double(shards) : 0.0);
}

double inflight_micro_batches(int stage, int pp, int vpp, int64_t m) {
  const double held = double(std::min<int64_t>(m, pp - stage));
  return vpp > 1 ? held * (1.0 + double(pp - 1) / double(pp * vpp)) : held;
}

LayerCosts layer_costs(const ModelProfile& m, const Cluster& c, const Workload& w, const Candidate& k) {
  LayerCosts lc;
  const double peak = c.peak_tflops * 1e12;
  const double tokens = double(m.seq_len) * double(k.mbs);          // one micro-batch of one pipeline replica
  const double tokens_rank = tokens / double(k.tp * k.cp);         // sequence-parallel share of one rank
  const double d = double(m.hidden);
  // Grouped GEMM efficiency falls with the rows each local expert receives.
  const double rows = tokens_rank * double(m.top_k) * double(k.ep) / double(std::max<int64_t>(1, m.experts));
  const double eff_expert = c.eff_expert * rows / (rows + c.expert_half_rows);
  const bool opt_dev = k.optimizer != OptimizerPlacement::HostSwap;
  const long dense_shards = k.optimizer == OptimizerPlacement::Replicated ? 1 : long(k.dp) * k.cp;
  const long expert_shards = k.optimizer == OptimizerPlacement::Replicated ? 1 : k.edp;
  const double recompute_factor = k.recompute == Recompute::Full ? 4.0 : 3.0;  // fwd + 2·fwd backward (+ fwd)

  const Tier& tp_tier = c.tier_for(long(k.tp) * k.cp);
  const Tier& ep_tier = c.tier_for(long(k.ep) * k.etp);
  const Tier& etp_tier = c.tier_for(k.etp);
  const double tp_bytes = tokens / double(k.cp) * d * 2;  // one gathered activation (bf16)
  const int tp_collectives = 8 + (k.recompute == Recompute::Full ? 4 : 0);
  const int a2a_pairs = 2 + (k.recompute != Recompute::None ? 1 : 0);
  const double act_token = activation_bytes_per_token(m, k.recompute);
  const double act_full = activation_bytes_per_token(m, Recompute::None);

  for (const auto& lp : m.layers) {
    const double f_dense = lp.dense_flops * tokens_rank, f_attn = lp.attention_flops * tokens_rank;
    const double f_exp = lp.expert_flops * tokens_rank * w.expert_imbalance;
    const double t_dense = f_dense / (peak * c.eff_dense) + f_attn / (peak * c.eff_attention);
    const double t_exp = lp.moe ? f_exp / (peak * eff_expert) : 0.0;
    double compute = 3.0 * (t_dense + t_exp);
    if (k.recompute == Recompute::Full) compute += t_dense + t_exp;
    if (k.recompute == Recompute::Selective) compute += t_exp;
    double comm = k.tp * k.cp > 1 ? tp_collectives * reduce_scatter_seconds(tp_bytes, long(k.tp) * k.cp,
                                                                             tp_tier.gbps, tp_tier.latency_us)
                                  : 0.0;
    const double tp_comm = comm;
    if (lp.moe && k.ep > 1) {
      const double routed = tokens_rank * double(m.top_k) * d * (1.0 - 1.0 / double(k.ep));
      const double pair = alltoall_seconds(routed * w.dispatch_bytes, k.ep, ep_tier.a2a_gbps, ep_tier.latency_us) +
                          alltoall_seconds(routed * w.combine_bytes, k.ep, ep_tier.a2a_gbps, ep_tier.latency_us);
      comm += (1.0 - c.overlap_ep) * a2a_pairs * pair * w.expert_imbalance;
    }
    if (lp.moe && k.etp > 1)
      comm += 2 * a2a_pairs *
              reduce_scatter_seconds(tokens_rank * double(m.top_k) * d * 2, k.etp, etp_tier.gbps, etp_tier.latency_us);
    lc.tp_s.push_back(tp_comm);
    lc.ep_s.push_back(comm - tp_comm);
    lc.seconds.push_back(compute + comm);
    lc.static_gb.push_back((lp.dense_params / k.tp * bytes_per_param(dense_shards, opt_dev) +
                            lp.expert_params / (double(k.ep) * k.etp) * bytes_per_param(expert_shards, opt_dev)) /
                           kGB);
    lc.activation_gb.push_back(act_token * tokens_rank / kGB);
  }
  if (k.recompute == Recompute::Full) lc.working_gb = act_full * tokens_rank / kGB;
  lc.first_static_gb = m.embedding_params / k.tp * bytes_per_param(dense_shards, opt_dev) / kGB;
  lc.last_static_gb = (m.head_params / k.tp * bytes_per_param(dense_shards, opt_dev) +
                       m.head_expert_params / (double(k.ep) * k.etp) * bytes_per_param(expert_shards, opt_dev)) /
                      kGB;
  // Vocabulary-parallel fp32 logits of the current micro-batch (one copy: memory-efficient MTP logits).
  lc.last_activation_gb = tokens / double(k.cp) * double(m.vocab) / k.tp * 4 / kGB;
  lc.last_seconds = recompute_factor * m.head_flops * tokens_rank / (peak * c.eff_dense);
  return lc;
}

StageProblem stage_problem(const LayerCosts& lc, const Cluster& c, const Candidate& k) {
  StageProblem p;
  p.seconds = lc.seconds;
  p.static_gb = lc.static_gb;
  p.activation_gb = lc.activation_gb;
  for (int s = 0; s < k.pp; ++s) p.inflight.push_back(inflight_micro_batches(s, k.pp, k.vpp, k.micro_batches));
  p.first_gb = lc.first_static_gb;
  p.last_gb = lc.last_static_gb + lc.last_activation_gb;
  p.last_seconds = lc.last_seconds;
  p.fixed_gb = lc.working_gb + (k.optimizer == OptimizerPlacement::HostSwap ? kHostSwapBufferGB : 0.0);
  p.cap_gb = c.hbm_gb - c.reserve_gb;
  return p;
}

double stage_seconds(const StageProblem& p, int stage, int64_t begin, int64_t end) {
  double t = stage == p.stages() - 1 ? p.last_seconds : 0.0;
  for (int64_t l = begin; l < end; ++l) t += p.seconds[size_t(l)];
  return t;
}

double stage_memory_gb(const StageProblem& p, int stage, int64_t begin, int64_t end) {
  double m = p.fixed_gb + (stage == 0 ? p.first_gb : 0.0) + (stage == p.stages() - 1 ? p.last_gb : 0.0);
  for (int64_t l = begin; l < end; ++l)
    m += p.static_gb[size_t(l)] + p.inflight[size_t(stage)] * p.activation_gb[size_t(l)];
  return m;
}

Estimate estimate(const ModelProfile& m, const Cluster& c, const Workload& w, const Candidate& k,
                  const LayerCosts& lc, const std::vector<int64_t>& first) {
  const int p = k.pp;
  if (int(first.size()) != p + 1 || first.front() != 0 || first.back() != int64_t(m.layers.size()))
    throw Error("plan::estimate: the stage cut must cover every layer once");
  const StageProblem prob = stage_problem(lc, c, k);
  Estimate e;
  e.cand = k;
  e.memory_cap_gb = c.hbm_gb - c.reserve_gb;
  const double tokens_rank = double(m.seq_len) * k.mbs / double(k.tp * k.cp);
  // Pipeline sends: the n mHC streams (bf16, sequence-parallel over TP) cross each boundary once forward and
  // once backward per micro-batch and chunk; counted on the critical path.
  const Tier& pp_tier = c.tier_for(w.ranks);  // pipeline peers are N/pp ranks apart
  const double pp_one = p > 1 ? 2.0 * k.vpp *
                                    (tokens_rank * double(m.hc_mult * m.hidden) * 2 / (pp_tier.gbps * kGB) +
                                     pp_tier.latency_us * 1e-6)
                              : 0.0;
  const Tier& dp_tier = c.tier_for(w.ranks / p);
  std::vector<double> times;
  int critical = 0;
  for (int s = 0; s < p; ++s) {
    StageCost sc;
    sc.first_layer = first[size_t(s)];
    sc.end_layer = first[size_t(s) + 1];
    if (sc.end_layer <= sc.first_layer) throw Error("plan::estimate: every stage needs at least one layer");
    double stat = 0, dense_params = 0, expert_params = 0;
    for (int64_t l = sc.first_layer; l < sc.end_layer; ++l) {
      stat += lc.static_gb[size_t(l)];
      dense_params += m.layers[size_t(l)].dense_params / k.tp;
      expert_params += m.layers[size_t(l)].expert_params / (double(k.ep) * k.etp);
    }
    if (s == 0) {
      stat += lc.first_static_gb;
      dense_params += m.embedding_params / k.tp;
    }
    if (s == p - 1) {
      stat += lc.last_static_gb;
      dense_params += m.head_params / k.tp;
      expert_params += m.head_expert_params / (double(k.ep) * k.etp);
    }
    const double secs = stage_seconds(prob, s, sc.first_layer, sc.end_layer);
    sc.memory_gb = stage_memory_gb(prob, s, sc.first_layer, sc.end_layer);
    // Split the memory back into weights / grads / optimizer / activations for the report.
    const double params = dense_params + expert_params;
    sc.weights_gb = 2 * params / kGB;
    sc.grads_gb = 4 * params / kGB;
    sc.optimizer_gb = std::max(0.0, stat - sc.weights_gb - sc.grads_gb);  // 0 with host swap (rounding aside)
    sc.activations_gb = sc.memory_gb - stat - (k.optimizer == OptimizerPlacement::HostSwap ? kHostSwapBufferGB : 0.0);
    sc.compute_s = secs;
    sc.comm_s = pp_one;
    times.push_back(secs + pp_one);
    if (times.back() > times[size_t(critical)]) critical = s;
    e.peak_memory_gb = std::max(e.peak_memory_gb, sc.memory_gb);
    // Data-parallel gradient reduction (and parameter all-gather when sharded), exposed part; optimizer step.
    const long dense_group = long(k.dp) * k.cp, expert_group = k.edp;
    double dp_s = 0;
    if (k.optimizer == OptimizerPlacement::Replicated) {
      dp_s = allreduce_seconds(4 * dense_params, dense_group, dp_tier.gbps, dp_tier.latency_us) +
             allreduce_seconds(4 * expert_params, expert_group, dp_tier.gbps, dp_tier.latency_us);
    } else {
      // Reduce-scatter of fp32 gradients, then all-gather of bf16 parameters (the same cost formula).
      for (const auto& [params_in, group] : {std::pair{dense_params, dense_group}, std::pair{expert_params, expert_group}})
        dp_s += reduce_scatter_seconds(4 * params_in, group, dp_tier.gbps, dp_tier.latency_us) +
                reduce_scatter_seconds(2 * params_in, group, dp_tier.gbps, dp_tier.latency_us);
    }
    e.dp_exposed_s = std::max(e.dp_exposed_s, (1.0 - c.overlap_dp) * dp_s);
    const double shard = k.optimizer == OptimizerPlacement::Replicated
                             ? params
                             : dense_params / double(dense_group) + expert_params / double(expert_group);
    double opt = 32.0 * shard / (c.hbm_gbps * kGB);  // read w, g, master, m, v; write w, master, m, v
    if (k.optimizer == OptimizerPlacement::HostSwap) opt += (1.0 - c.overlap_swap) * 2.0 * 12.0 * shard / (c.host_gbps * kGB);
    e.optimizer_s = std::max(e.optimizer_s, opt);
    e.stages.push_back(sc);
  }
  e.pipeline_s = pipeline_seconds(times, k.micro_batches, k.vpp);
  e.bubble_s = e.pipeline_s - double(k.micro_batches) * times[size_t(critical)];
  // The critical stage's communication per step (for the breakdown).
  for (int64_t l = e.stages[size_t(critical)].first_layer; l < e.stages[size_t(critical)].end_layer; ++l) {
    e.tp_s += lc.tp_s[size_t(l)] * double(k.micro_batches);
    e.ep_s += lc.ep_s[size_t(l)] * double(k.micro_batches);
  }
  e.pp_s = pp_one * double(k.micro_batches);
  e.step_s = e.pipeline_s + e.dp_exposed_s + e.optimizer_s;
  const double tokens = double(w.gbs) * double(m.seq_len);
  e.tokens_per_s = tokens / e.step_s;
  const double denom = e.step_s * double(w.ranks) * c.peak_tflops * 1e12;
  e.mfu_3f = 3.0 * m.forward_flops * tokens / denom;
  e.mfu_4f = 4.0 * m.forward_flops * tokens / denom;
  e.memory_ok = true;
  for (int s = 0; s < p; ++s)
    if (e.stages[size_t(s)].memory_gb > e.memory_cap_gb) {
      e.memory_ok = false;
      e.binding = fmt::format("memory (stage {}: {:.1f} of {:.1f} GB)", s, e.stages[size_t(s)].memory_gb,
                              e.memory_cap_gb);
      break;
    }
  if (e.memory_ok) {
    const std::pair<double, const char*> parts[] = {
        {double(k.micro_batches) * e.stages[size_t(critical)].compute_s - e.tp_s - e.ep_s, "compute"},
        {e.bubble_s, "bubble"}, {e.tp_s, "tp_comm"}, {e.ep_s, "ep_comm"}, {e.pp_s, "pp_comm"},
        {e.dp_exposed_s, "dp_comm"}, {e.optimizer_s, "optimizer"}};
    const auto* best = &parts[0];
    for (const auto& pr : parts)
      if (pr.first > best->first) best = &pr;
    e.binding = best->second;
  }
  return e;
}

}  // namespace trex::plan
