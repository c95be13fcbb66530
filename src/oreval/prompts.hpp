// Prompt templates: the report's three templates (OR_BENCHMARKS.md §2: system/user split at the first
// literal "SYSTEM:" and "USER:", plain placeholder replacement, B4O data-path fields) and trex's
// native `lp` answer style, in which the model answers with one LP-file block.
#pragma once
#include <string>
#include <vector>

#include "oreval/benchmarks.hpp"
#include "util/chat_client.hpp"

namespace trex::oreval {

enum class AnswerStyle {
  Report,  // the report's templates: gurobipy code
  Lp,      // native: one ```lp block with the model in LP-file format
};

using ChatMessage = chat::Message;  // role (system | user | assistant), content

AnswerStyle parse_answer_style(const std::string& s);  // "report" | "lp"; throws trex::Error
const char* to_string(AnswerStyle s);

// Splits a "SYSTEM: ... USER: ..." template into trimmed system and user messages (upstream rule); a
// template without "SYSTEM:" becomes one user message.
std::vector<ChatMessage> split_chat_template(const std::string& filled);

// The messages sent for one item. `working_dir` is the {{WorkingDirectory}} of the B4O template.
std::vector<ChatMessage> build_messages(const Benchmark& bench, const BenchItem& item, AnswerStyle style,
                                        const std::string& working_dir);

// The native `lp`-style prompt for a problem statement (also used by `trex synth` SFT data and the
// pipeline, so training and evaluation prompts are the same text).
std::vector<ChatMessage> lp_style_messages(const std::string& problem);

}  // namespace trex::oreval
