// trex::cuda::Model: the DeepSeek-V4-style model on one CUDA device, beside the CPU model::Model (llm.c's
// train_gpt2.cu beside train_gpt2.c; docs/cuda.md says why). It shares with the CPU model what must be shared —
// the ModelConfig, the parameter table (names, shapes, offsets: the device parameter buffer is the host ParamStore's
// flat buffer copied as it is, so checkpoints written from either device load on the other), the packed-sequence
// geometry (detail::Seq::build, computed on the host and uploaded per batch) and the hash tables — and owns its
// forward and backward, one stream, the kernels of src/cuda/. The CPU model is its oracle
// (tests/cuda/gpu/model_test.cpp: losses and every gradient of the same step on the same parameters).
//
// Memory: parameters, gradients and (bf16 products) a bf16 copy of every parameter are allocated once at
// construction; the activations of a step live in one DeviceArena of fixed capacity (ModelOptions), reset at the
// start of every forward. One device per process: the whole model, or under expert parallelism
// (ModelOptions::placement, expert_group) every tensor but the other ranks' routed experts, each MoE block's routed
// rows exchanged with the experts' owners through the host (pinned staging, a blocking all-to-all, not overlapped
// with the computation; compiled, not yet run on a GPU). A pipeline stage (ModelOptions::first_layer, end_layer)
// holds its layers only and runs one micro-batch's stage forward and backward at a time (stage_forward /
// stage_backward, streams through the host); the trainer's step recomputes a slot's forward when other forwards
// came between (train/recompute_stage.hpp). CUDA builds only.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "cuda/blas.hpp"
#include "model/config.hpp"
#include "model/model.hpp"
#include "model/params.hpp"

namespace trex::cuda {

class Model;
namespace gm {  // the internals the GPU decoder reads (gpu_model_impl.hpp)
struct ModelInternals;
ModelInternals internals(Model& m);
}  // namespace gm

struct ModelOptions {
  // Matrix products: fp32 operands, or bf16 operands rounded as nn::float_to_bf16 (the CPU's --matmul bf16
  // recipe; fp32 accumulation either way).
  GemmType matmul = GemmType::fp32;
  // Capacity of the activation arena, allocated once; 0: 85 % of the device memory left free after the
  // parameters, gradients and bf16 copies, less what later_bytes_per_param and device_sharers keep free, divided
  // among the sharers.
  size_t activation_bytes = 0;
  // What the caller allocates per parameter after the model (its optimizer's state: AdamW's m and v, 8 bytes),
  // and how many processes share this device (each of the others assumed to need as much as this one).
  double later_bytes_per_param = 0;
  int device_sharers = 1;
  // false: no gradient buffer (inference, e.g. the decoder's model: half the parameter memory); forward_backward,
  // download_grads and the optimizers then refuse with trex::Error, and device_grads() is null.
  bool gradients = true;
  // Model sharding: which tensors this rank holds (dist::make_placement; empty: the whole model) and the group
  // over which the routed rows are exchanged (host-staged all-to-all in model/moe.cpp's order; nullptr or size 1:
  // all experts local). Rank r of a group of size n holds the routed experts [r E/n, (r+1) E/n) of every MoE block.
  model::ParamPlacement placement;
  model::ProcessGroup* expert_group = nullptr;
  // Pipeline parallelism: this rank's stage, layers [first_layer, end_layer) (end_layer < 0: every layer). The
  // placement must hold what the stage runs (the embedding on the first stage, and with MTP on the last; the head,
  // final norm and MTP modules on the last).
  int64_t first_layer = 0, end_layer = -1;
};

class Model {
 public:
  // Lays out the parameter table of cfg (unsharded, or opt.placement's tensors) and allocates the device buffers.
  // Throws trex::Error when no CUDA device is usable (with the reason), the memory does not suffice, or the
  // placement leaves out a tensor the stage runs (other than other ranks' routed experts) / does not match the
  // expert group.
  explicit Model(const model::ModelConfig& cfg, const ModelOptions& opt = {});
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const model::ModelConfig& config() const;
  const ModelOptions& options() const;
  // The host copy: the parameter table and the checkpoint buffer (model/checkpoint*.cpp read and write it).
  model::ParamStore& host();

  // Host -> device: the host copy's float and integer (hash table) parameters; the bf16 copies are refreshed and
  // the gradients zeroed. Call after init or a checkpoint load into host().
  void upload();
  // Device -> host: the parameters into host().params(); the gradients into `grads` (host().table()'s layout).
  void download();
  void download_grads(std::span<float> grads) const;

  void zero_grad();
  // Forward + backward of one packed batch: gradients ACCUMULATED into the device gradient buffer (zero_grad
  // first for a fresh step), the losses returned (model::Model's definitions and denominators).
  model::Losses forward_backward(const model::Batch& batch);
  // Forward only: the losses (evaluation).
  model::Losses forward(const model::Batch& batch);

  // Pipeline stage (model::Model::stage_forward's contract, one micro-batch at a time): the forward of this rank's
  // layers for `batch` from the embedding (first stage) or `input`, the host streams [B*T, hc_mult, hidden]
  // entering layer first_layer(); returns the stage's share of the losses. stage_output copies the streams leaving
  // the stage into `out` (host). stage_backward runs the backward of that forward (the next forward discards it),
  // gradients ACCUMULATED, from output_grad (host; ignored on the last stage), and writes the gradient wrt the
  // input streams into input_grad (host; the first stage sends it into the embedding, input_grad empty).
  // again: the forward once more for its backward (the activations of another batch came between), without adding
  // the indexer's forward-time gradients a second time.
  model::Losses stage_forward(const model::Batch& batch, const float* input, bool again = false);
  void stage_output(std::span<float> out);
  void stage_backward(const float* output_grad, std::span<float> input_grad);
  int64_t first_layer() const;
  int64_t end_layer() const;

  // Device buffers (host().table() offsets): fp32 parameters and gradients; the bf16 copies (null under fp32
  // products), which the optimizer refreshes after updating a tensor (refresh_bf16 does all of them).
  float* device_params();
  float* device_grads();
  uint16_t* device_params_bf16();
  void refresh_bf16();
  int64_t numel() const;

  // Per MoE block (layers, then MTP blocks): the per-expert token counts of the last forward, all E experts
  // (under expert parallelism those of this rank's tokens, before the exchange: summed over the ranks they are the
  // batch's loads).
  std::span<const int64_t> expert_load(int64_t block) const;
  int64_t n_moe_blocks() const;
  // Auxiliary-loss-free balancing, model::Model::update_gate_bias's rule on the last forward's loads (rate <= 0:
  // cfg.bias_update_rate), applied to the device gate biases. data_group: the loads summed over its ranks first
  // (data parallelism: every replica applies the same update), as the CPU model does.
  void update_gate_bias(double rate = -1, model::ProcessGroup* data_group = nullptr);

  size_t activation_capacity() const;
  size_t activation_high_water() const;

  struct Impl;

 private:
  friend gm::ModelInternals gm::internals(Model&);
  std::unique_ptr<Impl> impl_;
};

}  // namespace trex::cuda
