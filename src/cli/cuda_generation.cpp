// generate's and serve's decoder options and factory (cuda_support.hpp): infer::SequenceDecoder over cuda::Decoder
// for --device cuda in CUDA builds.
#include "cli/cuda_support.hpp"

#include <algorithm>
#include <memory>
#include <mutex>

#include "cuda/device_select.hpp"
#include "util/error.hpp"
#if TREX_HAVE_CUDA_MODEL
#include "cuda/gpu_decode.hpp"
#include "cuda/gpu_model.hpp"
#endif

namespace trex::cli {

namespace {

#if TREX_HAVE_CUDA_MODEL

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

#endif

}  // namespace

void add_decoder_options(CLI::App& sub, std::string& device, std::string& matmul) {
  sub.add_option("--device", device,
                 kGeneratesOnCuda
                     ? "cpu (default) or cuda (the incremental decoder on the GPU model, first device; refused with "
                       "the reason when there is none)"
                     : "cpu (default) or cuda (this build has no CUDA backend: refused, with the reason)")
      ->check(CLI::IsMember(cuda::device_names()));
  sub.add_option("--matmul", matmul, "Matrix products of the GPU decoder: fp32 (default) or bf16 (operands rounded, "
                                     "fp32 accumulation; --device cuda only)")
      ->check(CLI::IsMember({"fp32", "bf16"}));
}

infer::DecoderFactory checked_decoder_factory(const std::string& device_name, const std::string& matmul,
                                              int sequences, const std::string& command) {
  const cuda::Device device = cuda::parse_device(device_name);
  cuda::require_device(device, command, kGeneratesOnCuda);
  if (matmul != "fp32" && matmul != "bf16")
    throw Error(command + ": --matmul must be fp32 or bf16, not '" + matmul + "'");
  if (device == cuda::Device::cpu) {
    if (matmul == "bf16")
      throw Error(command + " --matmul bf16: bf16 products are the GPU decoder's (--device cuda); the CPU decoder's "
                  "products are fp32");
    return {};
  }
#if TREX_HAVE_CUDA_MODEL
  const bool bf16 = matmul == "bf16";
  return [sequences, bf16](model::Model& host, int max_context) -> std::unique_ptr<infer::SequenceDecoder> {
    return std::make_unique<CudaSequenceDecoder>(host, max_context, sequences, bf16);
  };
#else
  (void)sequences;
  throw Error(command + ": this build has no GPU decoder");  // (require_device refused cuda already)
#endif
}

}  // namespace trex::cli
