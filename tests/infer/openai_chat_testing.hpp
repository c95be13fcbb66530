// Helpers of the chat-server tests: an OpenAI chat-completions request body, and the text of a streamed
// (server-sent events) answer put back together.
#pragma once
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace trex::infer::testing {

inline nlohmann::json chat_body(const std::string& text, bool stream = false, int max_tokens = 64) {
  return {{"model", "trex"}, {"messages", {{{"role", "user"}, {"content", text}}}}, {"max_tokens", max_tokens},
          {"stream", stream}};
}

// The deltas' content in order, up to "[DONE]"; *finish (when given) gets the finish_reason.
inline std::string stream_text(const std::string& sse, std::string* finish = nullptr) {
  std::string text;
  std::size_t pos = 0;
  while ((pos = sse.find("data: ", pos)) != std::string::npos) {
    const std::size_t end = sse.find("\n\n", pos);
    const std::string payload = sse.substr(pos + 6, end - pos - 6);
    pos = end;
    if (payload == "[DONE]") break;
    const nlohmann::json j = nlohmann::json::parse(payload);
    const auto& d = j["choices"][0]["delta"];
    if (d.contains("content")) text += d["content"].get<std::string>();
    if (finish && !j["choices"][0]["finish_reason"].is_null()) *finish = j["choices"][0]["finish_reason"];
  }
  return text;
}

}  // namespace trex::infer::testing
