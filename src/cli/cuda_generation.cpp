// cuda_decoder_factory (cuda_support.hpp): infer::SequenceDecoder over cuda::Decoder, for `trex generate` and
// `trex serve` with --device cuda (CUDA builds only), and the check of their --matmul option (every build).
#include "cli/cuda_support.hpp"

#include "util/error.hpp"

namespace trex::cli {

bool decoder_matmul_is_bf16(const std::string& matmul, bool cuda, const std::string& command) {
  if (matmul == "fp32") return false;
  if (matmul != "bf16") throw Error(command + ": --matmul must be fp32 or bf16, not '" + matmul + "'");
  if (!cuda)
    throw Error(command + " --matmul bf16: bf16 products are the GPU decoder's (--device cuda); the CPU decoder's "
                "products are fp32");
  return true;
}

}  // namespace trex::cli

#if TREX_HAVE_CUDA_MODEL
#include <algorithm>
#include <memory>
#include <mutex>

#include "cuda/gpu_decode.hpp"
#include "cuda/gpu_model.hpp"

namespace trex::cli {

namespace {

class CudaSequenceDecoder : public infer::SequenceDecoder {
 public:
  CudaSequenceDecoder(model::Model& host, int max_context, int sequences, bool bf16)
      : model_(host.config(), model_options(bf16)) {
    auto src = host.params();
    std::copy(src.begin(), src.end(), model_.host().params().begin());
    auto ints = host.store().int_params();
    std::copy(ints.begin(), ints.end(), model_.host().int_params().begin());
    model_.upload();
    cuda::DecoderOptions o;
    o.sequences = std::max(1, sequences);
    o.tokens = std::max(1, max_context);
    decoder_ = std::make_unique<cuda::Decoder>(model_, o);
  }
  std::string device() const override { return "cuda"; }
  int64_t max_sequences() const override { return decoder_->capacity().sequences; }
  int64_t open(int64_t /*expected_tokens: the caches are sized to the context already*/) override {
    std::lock_guard<std::mutex> lock(mu_);
    return decoder_->open();
  }
  void close(int64_t id) override {
    std::lock_guard<std::mutex> lock(mu_);
    decoder_->close(id);
  }
  std::span<const float> step(std::span<const int64_t> ids, std::span<const std::span<const int32_t>> tokens) override {
    std::lock_guard<std::mutex> lock(mu_);  // open / close of other sequences wait for the step
    return decoder_->step(ids, tokens);
  }
  std::span<const float> step_all_positions(int64_t id, std::span<const int32_t> tokens) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::span<const int32_t> one[1] = {tokens};
    return decoder_->step(std::span<const int64_t>(&id, 1), one, true);
  }
  bool scores_prompts() const override { return true; }

 private:
  static cuda::ModelOptions model_options(bool bf16) {
    cuda::ModelOptions o;
    o.matmul = bf16 ? cuda::GemmType::bf16 : cuda::GemmType::fp32;
    o.activation_bytes = size_t(64) << 20;  // the training arena is unused: the decoder has its own
    o.gradients = false;                      // forward only
    return o;
  }
  cuda::Model model_;
  std::unique_ptr<cuda::Decoder> decoder_;
  std::mutex mu_;
};

}  // namespace

infer::DecoderFactory cuda_decoder_factory(int sequences, bool bf16) {
  return [sequences, bf16](model::Model& host, int max_context) -> std::unique_ptr<infer::SequenceDecoder> {
    return std::make_unique<CudaSequenceDecoder>(host, max_context, sequences, bf16);
  };
}

}  // namespace trex::cli
#endif
