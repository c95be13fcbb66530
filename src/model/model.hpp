// trex::model::Model: the DeepSeek-V4-style model (DEEPSEEK_V4.md §2-§8, §13, §16) on CPU in fp32 with a
// hand-written backward. Parameters and gradients are flat buffers (ParamStore); activations live in an arena
// sized by the first step and reused afterwards. Parallelism goes through a ProcessGroup.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/config.hpp"
#include "model/params.hpp"
#include "model/process_group.hpp"

namespace trex::model {

// A packed batch: B rows of T tokens. doc_ids (optional) marks documents inside a row: each run of equal id is
// an independent sequence (§16.1). loss_mask (optional, default all 1) marks which tokens are prediction
// targets (§16.2).
struct Batch {
  int64_t B = 0, T = 0;
  const int32_t* tokens = nullptr;     // [B*T]
  const int32_t* doc_ids = nullptr;    // [B*T] or nullptr (one document per row)
  const uint8_t* loss_mask = nullptr;  // [B*T] or nullptr (every token is a target)
  // > 0: divide the summed main / MTP cross-entropy by these instead of this batch's own target counts. Data
  // parallelism passes (global count / data ranks), so that averaging the ranks' losses and gradients gives
  // exactly the one-process mean over the whole batch even when the ranks' slices hold different counts.
  double ce_denominator = 0, mtp_denominator = 0;
};

// Target pairs of `batch` that the loss counts for prediction distance `shift` over the first Tm positions of
// each row (main head: shift 1, Tm = T; MTP module i: shift i + 2, Tm = T - 1 - i).
int64_t count_targets(const Batch& batch, int64_t shift, int64_t Tm);
// The targets themselves: target[b, t] = tokens[b, t + shift] when that token is a marked target in the same
// document, else -1 (rows of length Tm); returns their count (the GPU model builds its targets with this too).
int64_t make_targets(const Batch& batch, int64_t shift, int64_t Tm, int32_t* target);

struct Losses {
  double total = 0;    // ce + mtp_loss_weight * mtp + balance + indexer (what the gradient is of)
  double ce = 0;       // main next-token cross-entropy (mean over counted pairs)
  double mtp = 0;      // MTP cross-entropy (mean over modules)
  double balance = 0;  // sequence-balance loss, alpha included (§16.6)
  double indexer = 0;  // indexer KL loss, coefficient included (§16.5); trains the indexer only
  int64_t ce_count = 0, mtp_count = 0;  // counted target pairs

  // Adds `weight` x l's losses and l's counts (micro-batch means: weight = 1 / micro-batches).
  void add_weighted(const Losses& l, double weight) {
    total += l.total * weight;
    ce += l.ce * weight;
    mtp += l.mtp * weight;
    balance += l.balance * weight;
    indexer += l.indexer * weight;
    ce_count += l.ce_count;
    mtp_count += l.mtp_count;
  }
};

// One pipeline stage's compute, what dist::Pipeline drives (1F1B): model::Model (below) and
// train::RecomputingStage (over the GPU model, train/recompute_stage.hpp) implement it. The contract is
// Model::stage_forward's: a forward of layers [first, last) for the micro-batch of activation slot `slot`, its
// output streams, and later the slot's backward with the gradient wrt those streams, ACCUMULATING into the
// stage's gradients and returning the gradient wrt the stage's input streams (empty on the first stage). Streams
// are host memory [B*T, hc_mult, hidden].
class StageModel {
 public:
  virtual ~StageModel() = default;
  virtual const ModelConfig& config() const = 0;
  virtual Losses stage_forward(int slot, const Batch& batch, int64_t first, int64_t last, const float* input) = 0;
  virtual std::span<const float> stage_output(int slot) const = 0;
  virtual std::span<const float> stage_backward(int slot, const float* output_grad) = 0;
};

class Model final : public StageModel {
 public:
  // place: the tensors this rank holds (model sharding under expert / pipeline parallelism; see params.hpp).
  // A sharded model only ever touches its own tensors: its experts (expert_group() rank j computes experts
  // [j*E/size, (j+1)*E/size)) and the layers of the stage it runs.
  explicit Model(const ModelConfig& cfg, ProcessGroup* pg = nullptr, const ParamPlacement& place = {});
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ModelConfig& config() const override { return cfg_; }

  // Deterministic initialisation from a seed (matrices N(0, init_std), norm weights 1, mHC base 0 and scale 1,
  // sinks and gate biases 0, balanced hash tables from hash_seed + layer).
  void init(uint64_t seed);

  // Forward + backward: gradients are ACCUMULATED into grads() (call zero_grad() first for a fresh step).
  Losses forward_backward(const Batch& batch);
  // Forward only; returns the main logits [B*T, vocab] (valid until the next call). Losses are filled too.
  std::span<const float> forward(const Batch& batch, Losses* losses = nullptr);
  std::span<const float> mtp_logits() const;  // [B*(T-1), vocab] of the first MTP module after a forward

  // Pipeline stages (pipeline parallelism, dist/pipeline.hpp). stage_forward runs layers [first, last) for the
  // micro-batch held in activation slot `slot` (each slot keeps its activations until its stage_backward, so
  // several micro-batches can be in flight, 1F1B). first == 0: the streams start as the embedding of
  // batch.tokens; otherwise `input` holds the residual streams [B*T, hc_mult, hidden] entering layer `first`
  // (copied). last == num_hidden_layers: the head, the cross-entropy and the MTP modules run too. Returns this
  // range's share of the losses (balance and indexer of its blocks; CE and MTP on the last stage). The batch's
  // arrays must stay valid until the slot's backward. forward_backward == stage_forward(0, b, 0, L) +
  // stage_backward(0, nullptr): the same code, operation for operation.
  Losses stage_forward(int slot, const Batch& batch, int64_t first, int64_t last, const float* input) override;
  std::span<const float> stage_output(int slot) const override;  // streams leaving layer last-1
  // stage_forward once more for the slot's backward after its activations were dropped (a pipeline that keeps one
  // batch at a time): the same activations, without adding the indexer's forward-time gradients again.
  Losses stage_recompute(int slot, const Batch& batch, int64_t first, int64_t last, const float* input);
  // Backward of the slot's range, gradients ACCUMULATED into grads(). output_grad: gradient wrt stage_output
  // (ignored on the last stage). Returns the gradient wrt the range's input streams (valid until the slot's
  // next forward); empty when first == 0 (it went into the embedding).
  std::span<const float> stage_backward(int slot, const float* output_grad) override;

  // Called during backward right after block `block`'s gradients are final (MTP blocks first, then layers
  // L-1..0; block numbering as n_moe_blocks()). Data parallelism starts each bucket's all-reduce from here and
  // drives MPI progress; an empty function (the default) disables it.
  void set_backward_hook(std::function<void(int64_t block)> hook) { backward_hook_ = std::move(hook); }
  const std::function<void(int64_t)>& backward_hook() const { return backward_hook_; }

  // The group MoE token dispatch/combine goes through (expert parallelism). Default: the constructor's group.
  // Under pure data parallelism set it to single_process_group(): every rank holds every expert.
  void set_expert_group(ProcessGroup* g) { expert_pg_ = g; }
  ProcessGroup& expert_group() { return expert_pg_ ? *expert_pg_ : *pg_; }

  void zero_grad();
  void scale_grads(float s);  // every gradient *= s (averaging over micro-batches or data ranks)
  // Sums gradients over the process group and divides by its size (data parallelism).
  void reduce_gradients();

  // Flat storage and the named-tensor table (§11 names), for the optimiser and checkpoint I/O.
  ParamStore& store() { return store_; }
  const ParamStore& store() const { return store_; }
  std::span<float> params() { return store_.params(); }
  std::span<float> grads() { return store_.grads(); }
  const std::vector<ParamInfo>& param_table() const { return store_.table(); }

  // MoE blocks in order (layers 0..L-1, then MTP blocks): the per-expert token counts of the last forward.
  int64_t n_moe_blocks() const;
  std::span<const int64_t> expert_load(int64_t block) const;
  // Auxiliary-loss-free balancing (§7): b_i += rate * sign(mean_load - load_i) for every non-hash block, using
  // the loads of the last forward (rate <= 0: cfg.bias_update_rate).
  void update_gate_bias(double rate = -1);

  // Indexer selections of the last forward for a CSA block: [B*T, index_topk], -1 = unused slot.
  std::span<const int32_t> indexer_selection(int64_t block) const;

  size_t arena_bytes() const;
  int64_t arena_regrowths() const;

  struct Impl;

 private:
  ModelConfig cfg_;
  ParamStore store_;
  ProcessGroup* pg_;
  ProcessGroup* expert_pg_ = nullptr;
  std::function<void(int64_t)> backward_hook_;
  std::unique_ptr<Impl> impl_;
};

// Model::init's deterministic initialisation of a parameter store laid out for cfg (any holder of the table: the
// CPU model, the GPU model's host copy).
void init_params(ParamStore& store, const ModelConfig& cfg, uint64_t seed);

// The auxiliary-loss-free rule of §7 on one block's gate bias: b_e += rate * sign(mean load - load_e) (E = load.size()
// entries; Model::update_gate_bias, and the GPU model on its biases).
void apply_gate_bias_update(float* bias, std::span<const int64_t> load, double rate);

// Builds the balanced hash table of §16.12 for `layer`: [vocab, k] experts, distinct per token, loads equal
// up to one token when vocab*k is not a multiple of E.
std::vector<int64_t> make_hash_table(const ModelConfig& cfg, int64_t layer);

}  // namespace trex::model
