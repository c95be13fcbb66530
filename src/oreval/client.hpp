// The OpenAI-compatible chat client of `trex eval`: the generic client lives in util/chat_client.hpp
// (ordata's paraphrasing uses it too); these names keep oreval's spelling.
#pragma once
#include "util/chat_client.hpp"

namespace trex::oreval {

using ChatMessage = chat::Message;
using SamplingParams = chat::SamplingParams;
using ClientConfig = chat::ClientConfig;
using ChatResult = chat::Result;
using ChatClient = chat::Client;

}  // namespace trex::oreval
