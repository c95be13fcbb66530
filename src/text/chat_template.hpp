// DeepSeek-V4 chat format (no Jinja template ships; DEEPSEEK_V4.md §12):
//   BOS{system}<｜User｜>{u1}<｜Assistant｜></think>{a1}EOS<｜User｜>{u2}<｜Assistant｜><think>{r2}</think>{a2}EOS
// Chat mode puts </think> right after <｜Assistant｜>; thinking mode opens <think>, writes the reasoning,
// then </think>. Earlier turns' reasoning is dropped (only </think> kept) unless configured otherwise.
// Encoding keeps, per token, whether it is a training target: the assistant's reasoning, </think> after
// reasoning, answer and EOS; never the prompt (BOS, system, user turns, <｜Assistant｜> and the
// generation-prompt </think> or <think> that follows it).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "text/tokenizer.hpp"
#include "util/jsonl.hpp"

namespace trex::text {

struct ChatFormat {
  std::string bos = tokens::kBos, eos = tokens::kEos, user = tokens::kUser, assistant = tokens::kAssistant;
  std::string think_open = tokens::kThinkOpen, think_close = tokens::kThinkClose;
  std::string system_separator = "\n\n";  // between several system messages
  bool add_bos = true;
  bool drop_earlier_reasoning = true;     // reasoning only on the last assistant turn
  bool parse_special_in_content = false;  // special-token strings inside message text stay plain text
  bool loss_on_all_assistant_turns = true; // false: only the last assistant turn is a target
  // Reads the fields present in j (the rest keep their defaults); unknown keys are errors.
  static ChatFormat from_json(const Json& j, const SourceLocation& where = {});
  Json to_json() const;
};

struct ChatMessage {
  std::string role;       // system | user | assistant
  std::string content;
  std::string reasoning;  // assistant "reasoning_content" (thinking mode), may be empty
};

// OpenAI-style messages: [{"role": ..., "content": ...[, "reasoning_content": ...]}]. Errors name `where`.
std::vector<ChatMessage> parse_messages(const Json& messages, const SourceLocation& where);

struct EncodedChat {
  std::vector<TokenId> ids;
  std::vector<uint8_t> loss_mask;  // 1: token is a training target
  size_t target_tokens() const;
};

class ChatTemplate {
 public:
  explicit ChatTemplate(const Tokenizer& tokenizer, ChatFormat format = {});

  // A whole conversation for training; it must contain an assistant turn. Throws trex::Error otherwise.
  EncodedChat encode(const std::vector<ChatMessage>& messages) const;
  // The prompt for generating the next assistant turn: history, then <｜Assistant｜> and </think>
  // (chat mode) or <think> (thinking mode).
  std::vector<TokenId> encode_prompt(const std::vector<ChatMessage>& messages, bool thinking) const;
  // The text the token ids spell (for inspection and docs).
  std::string render(const std::vector<ChatMessage>& messages) const;
  const ChatFormat& format() const { return format_; }

 private:
  struct Segment {
    std::string_view text;
    bool marker;  // template string (special tokens parsed) rather than message text
    bool target;
  };
  std::vector<Segment> segments(const std::vector<ChatMessage>& messages, bool for_prompt, bool thinking) const;
  const Tokenizer& tok_;
  ChatFormat format_;
};

}  // namespace trex::text
