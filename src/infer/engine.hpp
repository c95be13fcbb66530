// The generation engine: a trained trex model + its tokenizer loaded from a checkpoint folder, and token
// generation (sampling, stop strings, max tokens, EOS, streaming deltas). Decoding runs the model's full-sequence
// forward on the whole context for every new token (Model::forward; the reference path, O(T^2) per request);
// calls into the model are serialised by a mutex so one Engine can serve concurrent requests.
//
// Checkpoint folder (--ckpt DIR), checked in this order:
//   DIR/latest (a file naming a step folder, as `trex train` writes) -> DIR/<that folder>;
//   weights: DIR/model.safetensors (or the *.safetensors / index.json that model::load_weights accepts);
//   DIR/config.json (Hugging Face config, model::ModelConfig); tokenizer: DIR/tokenizer.json, else
//   DIR/../tokenizer.json (the training output folder), unless given explicitly.
#pragma once
#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "infer/chat_server.hpp"
#include "infer/sampler.hpp"
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
};

struct GenOutput {
  std::vector<int32_t> tokens;  // generated ids (EOS excluded)
  std::string text;             // decoded, cut before a stop string
  std::string finish_reason;    // stop (EOS or stop string) | length (max_tokens or context)
  int prompt_tokens = 0;
};

class Engine {
 public:
  Engine(model::ModelConfig cfg, text::Tokenizer tok);
  static std::unique_ptr<Engine> load(const std::filesystem::path& ckpt, const std::filesystem::path& tokenizer = {},
                                      int max_context = 2048);

  model::Model& model() { return *model_; }
  const text::Tokenizer& tokenizer() const { return tok_; }
  const model::ModelConfig& config() const { return cfg_; }
  int max_context() const { return max_context_; }
  void set_max_context(int n) { max_context_ = n; }

  // Logits [vocab] of the last position after `tokens` (full-sequence forward).
  std::vector<float> next_logits(std::span<const int32_t> tokens);

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
  int max_context_ = 2048;
  std::mutex mu_;  // one model call at a time
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

 private:
  std::shared_ptr<Engine> engine_;
};

}  // namespace trex::infer
