// The generation engine: a trained trex model + its tokenizer loaded from a checkpoint folder, and token
// generation (sampling, stop strings, max tokens, EOS, streaming deltas). Decoding is incremental
// (a SequenceDecoder — model::Decoder on the CPU, or the GPU's: one prefill step for the prompt, then one cached
// step per new token; --echo's prompt scoring runs on the GPU decoder there, on the CPU model's full forward
// otherwise).
// Concurrent generations share the model through a step combiner: decode steps that are waiting at the same time
// run as one batched step (on the CPU batch-invariant kernels, so batching never changes a request's output; the
// GPU decoder's cuBLASLt products choose their algorithm by shape, so there a batched step may round differently,
// not yet measured); a prompt's prefill always runs as a step of its own, so its arithmetic never depends on other
// requests either.
//
// Checkpoint folder (--ckpt DIR), checked in this order:
//   DIR/latest (a file naming a step folder, as `trex train` writes) -> DIR/<that folder>;
//   weights: DIR/model.safetensors (or the *.safetensors / index.json that model::load_weights accepts);
//   DIR/config.json (Hugging Face config, model::ModelConfig); tokenizer: DIR/tokenizer.json, else
//   DIR/../tokenizer.json (the training output folder), unless given explicitly.
#pragma once
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "infer/chat_server.hpp"
#include "infer/sampler.hpp"
#include "infer/sequence_decoder.hpp"
#include "model/decode.hpp"
#include "model/model.hpp"
#include "text/chat_template.hpp"
#include "text/tokenizer.hpp"

namespace trex::infer {

struct CheckpointPaths {
  std::filesystem::path dir, config, tokenizer;
};
// Resolves DIR as described above; throws trex::Error naming what is missing.
CheckpointPaths resolve_checkpoint(const std::filesystem::path& dir, const std::filesystem::path& tokenizer = {});

struct GenOptions {
  SamplingParams sampling;
  int max_tokens = 256;
  std::vector<std::string> stop;  // generation ends before the first occurrence of any of these
  int logprobs = -1;              // < 0: off; K >= 0: each generated token's log-probability and the K most likely
  bool echo = false;              // with logprobs: also score the prompt's tokens (Engine::prompt_logits)
};

// A token's log-probability under the model: the log-softmax of its logits over the ids the tokenizer can decode,
// at temperature 1 and before any sampling cut (what the model assigns, whatever was sampled), and the `top`
// most likely ids with theirs, most likely first (ties: the lower id).
struct TokenLogprob {
  int32_t id = 0;
  double logprob = 0;
  std::vector<std::pair<int32_t, double>> top;
};
// Scores `id` under `logits` (log-softmax in double) with the top k alternatives.
TokenLogprob score_token(std::span<const float> logits, int32_t id, int k);

struct GenOutput {
  std::vector<int32_t> tokens;  // generated ids (EOS excluded)
  std::string text;             // decoded, cut before a stop string
  std::string finish_reason;    // stop (EOS or stop string) | length (max_tokens or context)
  int prompt_tokens = 0;
  std::vector<TokenLogprob> logprobs;         // one per generated token (GenOptions::logprobs >= 0)
  std::vector<TokenLogprob> prompt_logprobs;  // echo: prompt tokens 1.. (the first has no context to score it)
};

class Engine {
 public:
  Engine(model::ModelConfig cfg, text::Tokenizer tok);
  // make_decoder (optional): the incremental decoder, made from the loaded model (default: the CPU's).
  static std::unique_ptr<Engine> load(const std::filesystem::path& ckpt, const std::filesystem::path& tokenizer = {},
                                      int max_context = 2048, const DecoderFactory& make_decoder = {});

  model::Model& model() { return *model_; }
  const text::Tokenizer& tokenizer() const { return tok_; }
  const model::ModelConfig& config() const { return cfg_; }
  int max_context() const { return max_context_; }
  void set_max_context(int n) { max_context_ = n; }
  // The incremental decoder generation runs on (set before generating).
  const SequenceDecoder& decoder() const { return *decoder_; }
  void set_decoder(std::unique_ptr<SequenceDecoder> d) { decoder_ = std::move(d); }

  // Logits [vocab] of the last position after `tokens` through the full-sequence forward (the reference path the
  // incremental decoder is tested against).
  std::vector<float> next_logits(std::span<const int32_t> tokens);
  // Logits [T, vocab] of every position of `tokens` (the full forward).
  std::vector<float> all_logits(std::span<const int32_t> tokens);

  // Generates for every prompt with up to `concurrency` generations in flight (their decode steps batched);
  // on_done(i, output) is called as each finishes (any order, one call at a time).
  void generate_many(const std::vector<std::vector<int32_t>>& prompts, const std::vector<GenOptions>& opts,
                     int concurrency, const std::function<void(size_t, GenOutput&&)>& on_done);
  int64_t batched_steps() const { return batched_steps_; }  // decode steps that served more than one request

  // Generates after `prompt`. on_delta (optional) receives text pieces as they become final (never part of a
  // stop string, never a split UTF-8 character); returning false stops generation.
  GenOutput generate(const std::vector<int32_t>& prompt, const GenOptions& opt, const DeltaCallback& on_delta = {});
  GenOutput generate_text(const std::string& prompt, const GenOptions& opt, const DeltaCallback& on_delta = {});
  // Chat: the prompt is the DeepSeek-V4 template's generation prompt (text::ChatTemplate, chat mode; message
  // text never parsed for special tokens, as in training).
  GenOutput generate_chat(const std::vector<text::ChatMessage>& messages, const GenOptions& opt,
                          const DeltaCallback& on_delta = {});
  std::vector<int32_t> chat_prompt(const std::vector<text::ChatMessage>& messages) const;

 private:
  model::ModelConfig cfg_;
  text::Tokenizer tok_;
  text::ChatTemplate chat_;
  std::unique_ptr<model::Model> model_;
  std::unique_ptr<SequenceDecoder> decoder_;
  int max_context_ = 2048;
  std::mutex mu_;  // one full-forward (reference) call at a time

  // Step combiner: callers queue their step; whoever finds no step running executes the queue.
  struct StepRequest;
  std::vector<float> step(int64_t sequence, std::span<const int32_t> tokens, bool all_positions = false);
  // Every position's logits of `prompt` for --echo: the decoder's when it scores prompts, else the full forward.
  std::vector<float> prompt_logits(std::span<const int32_t> prompt);
  // A decoder sequence held for one generation or scoring (opening waits while every one is open), released by
  // the destructor.
  class SequenceLease;
  int64_t open_sequence(int64_t expected_tokens);
  void close_sequence(int64_t id) noexcept;
  std::mutex seq_mu_;
  std::condition_variable seq_cv_;
  void run_steps(std::vector<StepRequest*>& batch);
  std::mutex step_mu_;
  std::condition_variable step_cv_;
  std::vector<StepRequest*> step_queue_;
  bool step_running_ = false;
  std::atomic<int64_t> batched_steps_{0};
};

// Replaces every byte that does not start a valid UTF-8 sequence with U+FFFD (JSON output needs valid UTF-8).
std::string sanitize_utf8(std::string_view s);

// ChatGenerator over an Engine: applies the chat template and maps the request's sampling fields
// (no seed given: seed 0, so identical requests give identical answers).
class EngineChatGenerator : public ChatGenerator {
 public:
  explicit EngineChatGenerator(std::shared_ptr<Engine> engine) : engine_(std::move(engine)) {}
  GenerationResult generate(const GenerationRequest& request, const DeltaCallback& on_delta) override;
  int max_context_tokens() const override { return engine_->max_context(); }
  int prompt_tokens(const GenerationRequest& request) const override;

 private:
  std::shared_ptr<Engine> engine_;
};

}  // namespace trex::infer
