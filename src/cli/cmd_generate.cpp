// `trex generate --ckpt DIR --prompt TEXT | --input FILE.jsonl [--output FILE.jsonl] [sampling options]
// [--logprobs K [--echo]]`:
// generation with a trex checkpoint (infer/engine.hpp; checkpoint layout in docs/serve.md).
// Input records: {"prompt": TEXT} (raw text) or {"messages": [{"role","content"}...]} (chat template), optional
// "id" and per-record "max_tokens", "temperature", "top_p", "top_k", "seed", "stop". Output records:
// {"index", "id"?, "text", "finish_reason", "prompt_tokens", "completion_tokens"} (atomic JSONL, or stdout).
#include <cstdio>
#include <memory>
#include <optional>

#include "cli/command.hpp"
#include "cli/cuda_support.hpp"
#include "infer/engine.hpp"
#include "util/jsonl.hpp"
#include "util/progress.hpp"

namespace cmd_generate {  // this file's own names (the unity build joins cli files)

using trex::Json;
using namespace trex::infer;

struct GenerateOpts {
  std::string ckpt, tokenizer, prompt, input, output, device = "cpu", matmul = "fp32";
  bool chat = false;
  int max_tokens = 256, top_k = 0, max_context = 2048, batch = 8, logprobs = -1;
  bool echo = false;
  double temperature = 1.0, top_p = 1.0;
  uint64_t seed = 0;
  std::vector<std::string> stop;
};

GenOptions record_options(const GenerateOpts& o, const Json& rec, const trex::SourceLocation& where) {
  GenOptions g;
  g.max_tokens = o.max_tokens;
  g.sampling = {o.temperature, o.top_p, o.top_k, o.seed};
  g.stop = o.stop;
  g.logprobs = o.logprobs;
  g.echo = o.echo;
  try {
    if (rec.contains("max_tokens")) g.max_tokens = rec["max_tokens"].get<int>();
    if (rec.contains("temperature")) g.sampling.temperature = rec["temperature"].get<double>();
    if (rec.contains("top_p")) g.sampling.top_p = rec["top_p"].get<double>();
    if (rec.contains("top_k")) g.sampling.top_k = rec["top_k"].get<int>();
    if (rec.contains("seed")) g.sampling.seed = rec["seed"].get<uint64_t>();
    if (rec.contains("stop")) {
      g.stop.clear();
      if (rec["stop"].is_string()) g.stop.push_back(rec["stop"].get<std::string>());
      else g.stop = rec["stop"].get<std::vector<std::string>>();
    }
  } catch (const nlohmann::json::exception& e) {
    trex::fail_at(where, std::string("bad generation option: ") + e.what());
  }
  if (g.max_tokens < 1) trex::fail_at(where, "max_tokens must be >= 1");
  if (g.sampling.top_p <= 0 || g.sampling.top_p > 1) trex::fail_at(where, "top_p must be in (0, 1]");
  return g;
}

// {"token", "id", "logprob", "top_logprobs": [{"token", "id", "logprob"}]} of one scored token (the token's text
// with invalid UTF-8 replaced: a token can hold part of a character).
Json logprob_json(const Engine& e, const TokenLogprob& t) {
  auto text = [&](int32_t id) { return sanitize_utf8(e.tokenizer().decode(std::vector<int32_t>{id})); };
  Json top = Json::array();
  for (const auto& [id, lp] : t.top) top.push_back({{"token", text(id)}, {"id", id}, {"logprob", lp}});
  return {{"token", text(t.id)}, {"id", t.id}, {"logprob", t.logprob}, {"top_logprobs", top}};
}

// The prompt ids of a record: chat template for "messages" (or "prompt" with --chat), raw text otherwise.
std::vector<int32_t> record_prompt(const GenerateOpts& o, const Engine& e, const Json& rec,
                                   const trex::SourceLocation& where) {
  if (rec.contains("messages")) return e.chat_prompt(trex::text::parse_messages(rec["messages"], where));
  std::string p = trex::require_string(rec, "prompt", where);
  if (o.chat) return e.chat_prompt({{"user", p, ""}});
  return e.tokenizer().encode(p);
}

int run(const GenerateOpts& o) {
  // before anything is read
  const auto make_decoder = trex::cli::checked_decoder_factory(o.device, o.matmul, o.batch, "trex generate");
  if (o.prompt.empty() == o.input.empty()) throw trex::Error("generate: give exactly one of --prompt and --input");
  if (o.echo && o.logprobs < 0) throw trex::Error("generate: --echo scores the prompt's tokens and needs --logprobs K");
  // Read and validate every record before loading the model, so bad input fails fast.
  std::vector<Json> records;
  std::vector<trex::SourceLocation> where;
  if (!o.input.empty()) {
    trex::JsonlReader rd(o.input);
    while (auto r = rd.next()) {
      if (!r->is_object()) trex::fail_at(rd.where(), "record must be a JSON object");
      records.push_back(*r);
      where.push_back(rd.where());
    }
  } else {
    records.push_back(Json{{"prompt", o.prompt}});
    where.push_back({"--prompt", 0, 0});
  }
  std::vector<GenOptions> gopts;
  for (size_t i = 0; i < records.size(); ++i) {
    if (!records[i].contains("messages")) trex::require_string(records[i], "prompt", where[i]);
    gopts.push_back(record_options(o, records[i], where[i]));
  }
  auto engine = Engine::load(o.ckpt, o.tokenizer, o.max_context, make_decoder);
  std::vector<std::vector<int32_t>> prompts;
  for (size_t i = 0; i < records.size(); ++i) prompts.push_back(record_prompt(o, *engine, records[i], where[i]));
  std::unique_ptr<trex::JsonlWriter> writer;
  if (!o.output.empty()) writer = std::make_unique<trex::JsonlWriter>(o.output);
  trex::ProgressBar bar("generate", int64_t(records.size()), !o.output.empty());
  int64_t total_tokens = 0;
  // Generations finish in any order; records are written in input order as soon as they are contiguous.
  std::vector<std::optional<GenOutput>> done(records.size());
  size_t written = 0, finished = 0;
  auto write_ready = [&] {
    while (written < records.size() && done[written]) {
      const size_t i = written++;
      GenOutput g = std::move(*done[i]);
      done[i].reset();
      Json out = {{"index", i}};
      if (records[i].contains("id")) out["id"] = records[i]["id"];
      out["text"] = sanitize_utf8(g.text);
      out["finish_reason"] = g.finish_reason;
      out["prompt_tokens"] = g.prompt_tokens;
      out["completion_tokens"] = g.tokens.size();
      if (o.logprobs >= 0) {
        out["logprobs"] = Json::array();
        for (const auto& t : g.logprobs) out["logprobs"].push_back(logprob_json(*engine, t));
      }
      if (o.echo) {
        out["prompt_logprobs"] = Json::array();
        for (const auto& t : g.prompt_logprobs) out["prompt_logprobs"].push_back(logprob_json(*engine, t));
      }
      if (writer) {
        writer->write(out);
      } else if (o.input.empty() && o.logprobs < 0) {  // plain text, unless scores were asked for
        std::printf("%s\n", sanitize_utf8(g.text).c_str());
      } else {
        std::printf("%s\n", out.dump().c_str());
      }
    }
  };
  engine->generate_many(prompts, gopts, o.batch, [&](size_t i, GenOutput&& g) {
    total_tokens += int64_t(g.tokens.size());
    done[i] = std::move(g);
    ++finished;
    write_ready();
    bar.update(int64_t(finished), std::to_string(total_tokens) + " tokens");
  });
  bar.finish();
  if (writer) writer->commit();
  return 0;
}

trex::cli::CommandRegistrar reg("generate", "Generate text with a trex checkpoint (prompt or JSONL batch)",
                                [](CLI::App& sub) -> trex::cli::Action {
  auto o = std::make_shared<GenerateOpts>();
  sub.add_option("--ckpt", o->ckpt, "Checkpoint folder (model.safetensors + config.json [+ tokenizer.json]; a "
                                    "`trex train` output folder with `latest` works too)")->required();
  sub.add_option("--tokenizer", o->tokenizer, "tokenizer.json (default: in the checkpoint folder or its parent)");
  sub.add_option("--prompt", o->prompt, "Prompt text (raw unless --chat)");
  sub.add_flag("--chat", o->chat, "Wrap --prompt / 'prompt' records as one user turn of the chat template");
  sub.add_option("--input", o->input, "JSONL with 'prompt' or 'messages' per line");
  sub.add_option("--output", o->output, "Output JSONL (default: stdout)");
  sub.add_option("--max-tokens", o->max_tokens, "Tokens to generate at most (default 256)")->check(CLI::PositiveNumber);
  sub.add_option("--temperature", o->temperature, "Sampling temperature; 0 = greedy (default 1)")->check(CLI::NonNegativeNumber);
  sub.add_option("--top-p", o->top_p, "Nucleus sampling mass (default 1)")->check(CLI::Range(1e-9, 1.0));
  sub.add_option("--top-k", o->top_k, "Keep the k most likely tokens (0 = off)")->check(CLI::NonNegativeNumber);
  sub.add_option("--seed", o->seed, "Sampling seed (default 0)");
  sub.add_option("--stop", o->stop, "Stop string (repeatable)");
  sub.add_option("--batch", o->batch, "Generations in flight at once; their decode steps run batched, with "
                                      "the same output as one at a time (default 8)")->check(CLI::Range(1, 1024));
  sub.add_option("--logprobs", o->logprobs, "Report each generated token's log-probability (the model's, temperature "
                                            "1) and the K most likely alternatives; output becomes JSON")
      ->check(CLI::Range(0, 100));
  sub.add_flag("--echo", o->echo, "With --logprobs: also score every prompt token after the first (prompt_logprobs)");
  trex::cli::add_decoder_options(sub, o->device, o->matmul);
  sub.add_option("--max-context", o->max_context, "Context length in tokens (default 2048)")->check(CLI::Range(2, 1 << 20));
  return [o] { return run(*o); };
});

}  // namespace cmd_generate
