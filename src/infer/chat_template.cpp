// DeepSeek-V4 chat prompt text (§12); special strings from text/tokenizer.hpp.
#include "infer/chat_template.hpp"

#include "text/tokenizer.hpp"
#include "util/error.hpp"

namespace trex::infer {

std::string format_chat_prompt(const std::vector<ChatTurn>& messages, bool thinking) {
  namespace tk = trex::text::tokens;
  if (messages.empty()) throw Error("chat template: no messages");
  std::string out = tk::kBos;
  for (const auto& m : messages) {
    if (m.role == "system" || m.role == "developer") {
      out += m.content;
    } else if (m.role == "user") {
      out += tk::kUser;
      out += m.content;
    } else if (m.role == "assistant") {
      out += tk::kAssistant;
      out += tk::kThinkClose;
      out += m.content;
      out += tk::kEos;
    } else {
      throw Error("chat template: unknown role '" + m.role + "'");
    }
  }
  out += tk::kAssistant;
  out += thinking ? tk::kThinkOpen : tk::kThinkClose;
  return out;
}

}  // namespace trex::infer
