// DeepSeek-V4 chat template: rendering to segments, encoding with per-token loss mask.
#include "text/chat_template.hpp"

#include "util/error.hpp"

namespace trex::text {

ChatFormat ChatFormat::from_json(const Json& j, const SourceLocation& where) {
  if (!j.is_object()) throw Error(where, "chat format must be a JSON object");
  ChatFormat f;
  for (auto& [k, v] : j.items()) {
    auto str = [&](std::string& dst) {
      if (!v.is_string()) throw Error(where, "chat format: '" + k + "' must be a string");
      dst = v.get<std::string>();
    };
    auto flag = [&](bool& dst) {
      if (!v.is_boolean()) throw Error(where, "chat format: '" + k + "' must be true or false");
      dst = v.get<bool>();
    };
    if (k == "bos") str(f.bos);
    else if (k == "eos") str(f.eos);
    else if (k == "user") str(f.user);
    else if (k == "assistant") str(f.assistant);
    else if (k == "think_open") str(f.think_open);
    else if (k == "think_close") str(f.think_close);
    else if (k == "system_separator") str(f.system_separator);
    else if (k == "add_bos") flag(f.add_bos);
    else if (k == "drop_earlier_reasoning") flag(f.drop_earlier_reasoning);
    else if (k == "parse_special_in_content") flag(f.parse_special_in_content);
    else if (k == "loss_on_all_assistant_turns") flag(f.loss_on_all_assistant_turns);
    else throw Error(where, "chat format: unknown key '" + k + "'");
  }
  return f;
}

Json ChatFormat::to_json() const {
  return Json{{"bos", bos},
              {"eos", eos},
              {"user", user},
              {"assistant", assistant},
              {"think_open", think_open},
              {"think_close", think_close},
              {"system_separator", system_separator},
              {"add_bos", add_bos},
              {"drop_earlier_reasoning", drop_earlier_reasoning},
              {"parse_special_in_content", parse_special_in_content},
              {"loss_on_all_assistant_turns", loss_on_all_assistant_turns}};
}

std::vector<ChatMessage> parse_messages(const Json& messages, const SourceLocation& where) {
  if (!messages.is_array()) throw Error(where, "field 'messages' must be an array");
  std::vector<ChatMessage> out;
  for (size_t i = 0; i < messages.size(); ++i) {
    const Json& m = messages[i];
    std::string at = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) throw Error(where, at + " must be an object");
    auto role = m.find("role");
    if (role == m.end() || !role->is_string()) throw Error(where, at + ": missing string field 'role'");
    ChatMessage msg;
    msg.role = role->get<std::string>();
    if (msg.role != "system" && msg.role != "user" && msg.role != "assistant")
      throw Error(where, at + ": role '" + msg.role + "' is not supported (system, user, assistant)");
    auto content = m.find("content");
    if (content == m.end() || !content->is_string()) throw Error(where, at + ": missing string field 'content'");
    msg.content = content->get<std::string>();
    auto reasoning = m.find("reasoning_content");
    if (reasoning != m.end() && !reasoning->is_null()) {
      if (!reasoning->is_string()) throw Error(where, at + ": 'reasoning_content' must be a string");
      if (msg.role != "assistant") throw Error(where, at + ": only assistant messages have 'reasoning_content'");
      msg.reasoning = reasoning->get<std::string>();
    }
    out.push_back(std::move(msg));
  }
  return out;
}

size_t EncodedChat::target_tokens() const {
  size_t n = 0;
  for (uint8_t m : loss_mask) n += m;
  return n;
}

ChatTemplate::ChatTemplate(const Tokenizer& tokenizer, ChatFormat format) : tok_(tokenizer), format_(std::move(format)) {}

std::vector<ChatTemplate::Segment> ChatTemplate::segments(const std::vector<ChatMessage>& msgs, bool for_prompt,
                                                          bool thinking) const {
  const ChatFormat& f = format_;
  std::vector<Segment> seg;
  if (f.add_bos) seg.push_back({f.bos, true, false});
  bool first_system = true;
  for (const ChatMessage& m : msgs) {
    if (m.role != "system") continue;
    if (!first_system) seg.push_back({f.system_separator, false, false});
    seg.push_back({m.content, false, false});
    first_system = false;
  }
  long last_assistant = -1;
  for (size_t i = 0; i < msgs.size(); ++i)
    if (msgs[i].role == "assistant") last_assistant = long(i);
  for (size_t i = 0; i < msgs.size(); ++i) {
    const ChatMessage& m = msgs[i];
    if (m.role == "user") {
      seg.push_back({f.user, true, false});
      seg.push_back({m.content, false, false});
    } else if (m.role == "assistant") {
      bool last = long(i) == last_assistant && !for_prompt;
      bool target = !for_prompt && (f.loss_on_all_assistant_turns || last);
      bool show_reasoning = !m.reasoning.empty() && (last || !f.drop_earlier_reasoning);
      seg.push_back({f.assistant, true, false});
      if (show_reasoning) {
        seg.push_back({f.think_open, true, false});  // generation prompt in thinking mode
        seg.push_back({m.reasoning, false, target});
        seg.push_back({f.think_close, true, target});
      } else {
        seg.push_back({f.think_close, true, false});  // generation prompt in chat mode
      }
      seg.push_back({m.content, false, target});
      seg.push_back({f.eos, true, target});
    }
  }
  if (for_prompt) {
    seg.push_back({f.assistant, true, false});
    seg.push_back({thinking ? f.think_open : f.think_close, true, false});
  }
  return seg;
}

EncodedChat ChatTemplate::encode(const std::vector<ChatMessage>& msgs) const {
  bool has_assistant = false;
  for (const auto& m : msgs) has_assistant |= m.role == "assistant";
  if (!has_assistant) throw Error("conversation has no assistant message to learn from");
  EncodedChat out;
  EncodeOptions marker_opt{true}, content_opt{format_.parse_special_in_content};
  for (const Segment& s : segments(msgs, false, false)) {
    size_t before = out.ids.size();
    tok_.encode_append(s.text, out.ids, s.marker ? marker_opt : content_opt);
    out.loss_mask.resize(out.ids.size(), 0);
    if (s.target) std::fill(out.loss_mask.begin() + long(before), out.loss_mask.end(), uint8_t(1));
  }
  return out;
}

std::vector<TokenId> ChatTemplate::encode_prompt(const std::vector<ChatMessage>& msgs, bool thinking) const {
  std::vector<TokenId> ids;
  EncodeOptions marker_opt{true}, content_opt{format_.parse_special_in_content};
  for (const Segment& s : segments(msgs, true, thinking)) tok_.encode_append(s.text, ids, s.marker ? marker_opt : content_opt);
  return ids;
}

std::string ChatTemplate::render(const std::vector<ChatMessage>& msgs) const {
  std::string out;
  for (const Segment& s : segments(msgs, false, false)) out += s.text;
  return out;
}

}  // namespace trex::text
