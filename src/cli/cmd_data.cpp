// `trex data pack --mode cpt|sft` (JSONL -> packed training data) and `trex data inspect` (summary of a
// packed folder, or one sequence decoded with its targets marked). Formats: docs/data-format.md.
#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "text/data_pack.hpp"
#include "text/datasets.hpp"
#include "util/error.hpp"
#include "util/log.hpp"

namespace cmd_data {  // this file's own names (the unity build joins cli files)

struct Opts {
  std::string mode, tokenizer, output, truncate = "drop", chat_format, field = "text", dir;
  std::vector<std::string> inputs;
  size_t seq_len = 4096, open_bins = 64;
  uint64_t seed = 1234, shard_tokens = uint64_t(1) << 28;
  bool no_bos = false, no_eos = false, no_shuffle = false, json = false;
  int threads = 0;
  long index = -1;
};

int pack(const Opts& o) {
  auto tok = trex::text::Tokenizer::load(o.tokenizer);
  std::vector<std::filesystem::path> inputs(o.inputs.begin(), o.inputs.end());
  trex::text::PackStats st;
  if (o.mode == "cpt") {
    trex::text::CptPackOptions opt;
    opt.add_bos = !o.no_bos;
    opt.add_eos = !o.no_eos;
    opt.shuffle = !o.no_shuffle;
    opt.seed = o.seed;
    opt.shard_tokens = o.shard_tokens;
    opt.threads = o.threads;
    opt.field = o.field;
    st = trex::text::pack_cpt(tok, inputs, o.output, opt);
    if (!o.json)
      trex::log::info("cpt: {} documents, {} tokens in {} shards ({} empty skipped) -> {}/cpt.json", st.documents,
                      st.tokens, st.shards, st.skipped_empty, o.output);
  } else if (o.mode == "sft") {
    trex::text::SftPackOptions opt;
    opt.seq_len = o.seq_len;
    opt.truncation = trex::text::parse_truncation(o.truncate);
    opt.shuffle = !o.no_shuffle;
    opt.seed = o.seed;
    opt.open_bins = o.open_bins;
    opt.threads = o.threads;
    if (!o.chat_format.empty())
      opt.chat = trex::text::ChatFormat::from_json(trex::parse_json_file(o.chat_format), trex::SourceLocation{o.chat_format});
    st = trex::text::pack_sft(tok, inputs, o.output, opt);
    if (!o.json)
      trex::log::info("sft: {} samples ({} too long dropped, {} truncated, {} without targets) -> {} sequences of {} "
                      "tokens, {:.1f}% padding, {} target tokens -> {}/sft.json",
                      st.documents, st.dropped_too_long, st.truncated, st.skipped_empty, st.sequences, o.seq_len,
                      st.sequences ? 100.0 * double(st.padding_tokens) / double(st.sequences * o.seq_len) : 0.0,
                      st.target_tokens, o.output);
  } else {
    throw trex::Error("--mode must be cpt or sft, not '" + o.mode + "'");
  }
  if (o.json) std::cout << st.to_json().dump() << "\n";
  return 0;
}

int inspect(const Opts& o) {
  auto data = trex::text::open_dataset(o.dir, o.seq_len);
  const size_t L = data->seq_len();
  if (o.index < 0) {
    trex::Json j{{"sequences", data->size()}, {"seq_len", L}, {"tokenizer_sha256", data->tokenizer_sha256()}};
    std::cout << j.dump() << "\n";
    return 0;
  }
  std::vector<int32_t> tokens(L), pos(L), doc(L);
  std::vector<uint8_t> mask(L);
  data->read(uint64_t(o.index), trex::text::SequenceView{tokens.data(), pos.data(), doc.data(), mask.data()});
  std::unique_ptr<trex::text::Tokenizer> tok;
  if (!o.tokenizer.empty()) tok = std::make_unique<trex::text::Tokenizer>(trex::text::Tokenizer::load(o.tokenizer));
  if (o.json) {
    trex::Json j{{"tokens", tokens}, {"positions", pos}, {"doc_ids", doc}, {"loss_mask", mask}};
    std::cout << j.dump() << "\n";
    return 0;
  }
  // One line per document: [doc id] text, targets between ⟦ ⟧.
  std::string line;
  bool in_target = false;
  size_t padding = 0;
  for (size_t t = 0; t < L; ++t) {
    if (doc[t] < 0) {
      ++padding;
      continue;
    }
    if (t == 0 || doc[t] != doc[t - 1]) {
      if (t) std::cout << line << (in_target ? "⟧" : "") << "\n";
      line = "[doc " + std::to_string(doc[t]) + "] ";
      in_target = false;
    }
    if (bool(mask[t]) != in_target) {
      line += in_target ? "⟧" : "⟦";
      in_target = mask[t];
    }
    if (tok)
      tok->decode_append(tokens[t], line);
    else
      line += std::to_string(tokens[t]) + " ";
  }
  std::cout << line << (in_target ? "⟧" : "") << "\n";
  if (padding) std::cout << "[padding: " << padding << " tokens]\n";
  return 0;
}

trex::cli::CommandRegistrar reg("data", "Pack JSONL into CPT token shards or SFT sequences; inspect packed data",
                                [](CLI::App& sub) -> trex::cli::Action {
  auto o = std::make_shared<Opts>();
  sub.require_subcommand(1);
  auto* pk = sub.add_subcommand("pack", "Tokenize and pack JSONL (cpt: {\"text\"}; sft: {\"messages\"})");
  pk->add_option("--mode", o->mode, "cpt or sft")->required()->check(CLI::IsMember({"cpt", "sft"}));
  pk->add_option("-t,--tokenizer", o->tokenizer, "tokenizer.json")->required();
  pk->add_option("-i,--input", o->inputs, "JSONL files")->required();
  pk->add_option("-o,--output", o->output, "Output folder")->required();
  pk->add_option("--seq-len", o->seq_len, "SFT: tokens per packed sequence");
  pk->add_option("--truncate", o->truncate, "SFT: samples longer than --seq-len: drop, right (keep start), left (keep end)");
  pk->add_option("--open-bins", o->open_bins, "SFT: partially filled sequences kept open by first-fit packing");
  pk->add_option("--chat-format", o->chat_format, "SFT: JSON file overriding the DeepSeek-V4 chat format");
  pk->add_option("--field", o->field, "CPT: record field with the text");
  pk->add_option("--shard-tokens", o->shard_tokens, "CPT: tokens per shard (documents are never split)");
  pk->add_flag("--no-bos", o->no_bos, "CPT: no BOS before each document");
  pk->add_flag("--no-eos", o->no_eos, "CPT: no EOS after each document");
  pk->add_option("--seed", o->seed, "Shuffle seed");
  pk->add_flag("--no-shuffle", o->no_shuffle, "Keep input order");
  pk->add_option("--threads", o->threads, "Encoding threads (0: all cores)");
  pk->add_flag("--json", o->json, "Print statistics as JSON");

  auto* in = sub.add_subcommand("inspect", "Summary of a packed folder, or one sequence with targets in ⟦ ⟧");
  in->add_option("dir", o->dir, "Packed folder (cpt.json or sft.json)")->required();
  in->add_option("--index", o->index, "Sequence to show");
  in->add_option("--seq-len", o->seq_len, "CPT window length");
  in->add_option("-t,--tokenizer", o->tokenizer, "tokenizer.json, to show text instead of ids");
  in->add_flag("--json", o->json, "JSON output");

  return [o, pk, in] {
    if (pk->parsed()) return pack(*o);
    if (in->parsed()) return inspect(*o);
    return 2;
  };
});

}  // namespace cmd_data
