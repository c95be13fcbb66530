// The DeepSeek-V4 chat format (DEEPSEEK_V4.md §12) as prompt text:
// BOS{system}<｜User｜>{u1}<｜Assistant｜></think>{a1}EOS<｜User｜>{u2}<｜Assistant｜></think>
// Earlier assistant turns keep only `</think>` (reasoning dropped). The generation prompt ends with
// `<｜Assistant｜></think>` (chat mode) or `<｜Assistant｜><think>` (thinking mode).
#pragma once
#include <string>
#include <vector>

#include "infer/chat_server.hpp"

namespace trex::infer {

// Throws trex::Error on an unknown role or an empty conversation.
std::string format_chat_prompt(const std::vector<ChatTurn>& messages, bool thinking = false);

}  // namespace trex::infer
