// `trex tokenizer train|encode|decode|corpus`: byte-level BPE training, encoding and decoding with a
// Hugging Face tokenizer.json, and the deterministic synthetic corpus used by benchmarks and tests.
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>

#include "cli/command.hpp"
#include "text/bpe_trainer.hpp"
#include "text/synthetic_corpus.hpp"
#include "text/tokenizer.hpp"
#include "util/error.hpp"
#include "util/jsonl.hpp"
#include "util/log.hpp"
#include "util/progress.hpp"

namespace cmd_tokenizer {  // this file's own names (the unity build joins cli files)

struct Opts {
  // train
  std::vector<std::string> inputs;
  std::string output, field = "text";
  size_t vocab_size = 32000;
  uint64_t min_frequency = 2;
  size_t max_token_bytes = 64;
  std::vector<std::string> special_tokens;
  int threads = 0;
  // encode / decode
  std::string tokenizer, text, input, ids;
  bool no_special = false, skip_special = false, json = false;
  // corpus
  uint64_t seed = 1, bytes = 1 << 20;
};

int train(const Opts& o) {
  trex::text::BpeTrainerOptions opt;
  opt.vocab_size = o.vocab_size;
  opt.min_frequency = o.min_frequency;
  opt.max_token_bytes = o.max_token_bytes;
  opt.threads = o.threads;
  opt.field = o.field;
  opt.progress = trex::ProgressBar::on_terminal();
  if (!o.special_tokens.empty()) opt.special_tokens = o.special_tokens;
  trex::text::BpeTrainer trainer(opt);
  for (const auto& in : o.inputs) trainer.add_jsonl(in);
  trex::text::Tokenizer tok = trainer.train();
  tok.save(o.output);
  const auto& s = trainer.stats();
  if (o.json) {
    nlohmann::ordered_json j{{"output", o.output},           {"vocab_size", tok.vocab_size()},
                             {"merges", s.merges},           {"documents", s.documents},
                             {"bytes", s.bytes},             {"distinct_pieces", s.distinct_pieces},
                             {"pretokenize_seconds", s.pretokenize_seconds}, {"merge_seconds", s.merge_seconds},
                             {"sha256", tok.fingerprint()}};
    std::cout << j.dump() << "\n";
  } else {
    trex::log::info("trained {} tokens ({} merges) from {} documents, {} bytes, {} distinct pieces: "
                    "pre-tokenize {:.2f} s, merges {:.2f} s -> {}",
                    tok.vocab_size(), s.merges, s.documents, s.bytes, s.distinct_pieces, s.pretokenize_seconds,
                    s.merge_seconds, o.output);
  }
  return 0;
}

int encode(const Opts& o) {
  auto tok = trex::text::Tokenizer::load(o.tokenizer);
  trex::text::EncodeOptions eo;
  eo.parse_special = !o.no_special;
  if (!o.input.empty()) {
    trex::JsonlReader reader(o.input);
    std::unique_ptr<trex::JsonlWriter> writer;
    if (!o.output.empty()) writer = std::make_unique<trex::JsonlWriter>(o.output);
    while (auto rec = reader.next()) {
      std::string text = trex::text::record_text(*rec, o.field, reader.where());
      trex::Json out{{"ids", tok.encode(text, eo)}};
      if (writer)
        writer->write(out);
      else
        std::cout << out.dump() << "\n";
    }
    if (writer) writer->commit();
    return 0;
  }
  std::string text = o.text;
  if (text.empty()) text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  auto ids = tok.encode(text, eo);
  if (o.json) {
    trex::Json j{{"ids", ids}};
    std::cout << j.dump() << "\n";
  } else {
    for (size_t i = 0; i < ids.size(); ++i) std::cout << (i ? " " : "") << ids[i];
    std::cout << "\n";
  }
  return 0;
}

int decode(const Opts& o) {
  auto tok = trex::text::Tokenizer::load(o.tokenizer);
  std::string src = o.ids;
  if (src.empty()) src.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  std::vector<trex::text::TokenId> ids;
  size_t first = src.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && src[first] == '[') {
    trex::Json j = trex::parse_json_text(src, trex::SourceLocation{"<ids>"});
    for (const auto& v : j) {
      if (!v.is_number_integer()) throw trex::Error("ids: expected a JSON array of integers");
      ids.push_back(v.get<trex::text::TokenId>());
    }
  } else {
    std::istringstream in(src);
    std::string w;
    while (in >> w) {
      try {
        size_t used = 0;
        long v = std::stol(w, &used);
        if (used != w.size()) throw std::invalid_argument(w);
        ids.push_back(trex::text::TokenId(v));
      } catch (const std::exception&) {
        throw trex::Error("ids: '" + w + "' is not an integer token id");
      }
    }
  }
  std::string bytes = tok.decode(ids, o.skip_special);
  std::fwrite(bytes.data(), 1, bytes.size(), stdout);
  return 0;
}

int corpus(const Opts& o) {
  trex::JsonlWriter w(o.output);
  for (auto& doc : trex::text::synthetic_corpus(o.seed, o.bytes)) w.write(trex::Json{{"text", doc}});
  w.commit();
  return 0;
}

trex::cli::CommandRegistrar reg("tokenizer", "Byte-level BPE: train, encode, decode (Hugging Face tokenizer.json)",
                                [](CLI::App& sub) -> trex::cli::Action {
  auto o = std::make_shared<Opts>();
  sub.require_subcommand(1);
  auto* tr = sub.add_subcommand("train", "Train a byte-level BPE tokenizer from JSONL text");
  tr->add_option("-i,--input", o->inputs, "JSONL files (one record per line)")->required();
  tr->add_option("-o,--output", o->output, "tokenizer.json to write")->required();
  tr->add_option("--field", o->field, "Record field with the text ('messages': all message contents)");
  tr->add_option("--vocab-size", o->vocab_size, "Vocabulary size including special and byte tokens");
  tr->add_option("--min-frequency", o->min_frequency, "Minimum pair count for a merge");
  tr->add_option("--max-token-bytes", o->max_token_bytes, "Longest token, in bytes");
  tr->add_option("--special-token", o->special_tokens, "Special tokens (ids 0..; default: DeepSeek's BOS, EOS, pad, "
                                                       "User, Assistant, <think>, </think>)");
  tr->add_option("--threads", o->threads, "Threads for pre-tokenization (0: all cores)");
  tr->add_flag("--json", o->json, "Print statistics as JSON");

  auto* en = sub.add_subcommand("encode", "Encode text (--text, stdin, or a JSONL file) to token ids");
  en->add_option("-t,--tokenizer", o->tokenizer, "tokenizer.json")->required();
  en->add_option("--text", o->text, "Text to encode (default: stdin)");
  en->add_option("-i,--input", o->input, "JSONL file: one {\"ids\": [...]} line per record");
  en->add_option("--field", o->field, "Record field with the text");
  en->add_option("-o,--output", o->output, "Output JSONL for --input (default: stdout)");
  en->add_flag("--no-special", o->no_special, "Treat special-token strings in the text as plain text");
  en->add_flag("--json", o->json, "Print {\"ids\": [...]}");

  auto* de = sub.add_subcommand("decode", "Decode token ids (space-separated or a JSON array) to text");
  de->add_option("-t,--tokenizer", o->tokenizer, "tokenizer.json")->required();
  de->add_option("--ids", o->ids, "Ids (default: stdin)");
  de->add_flag("--skip-special", o->skip_special, "Leave special tokens out");

  auto* co = sub.add_subcommand("corpus", "Write the deterministic synthetic corpus (benchmarks, tests)");
  co->add_option("--bytes", o->bytes, "Approximate size in bytes");
  co->add_option("--seed", o->seed, "Seed");
  co->add_option("-o,--output", o->output, "JSONL file to write")->required();

  return [o, tr, en, de, co] {
    if (tr->parsed()) return train(*o);
    if (en->parsed()) return encode(*o);
    if (de->parsed()) return decode(*o);
    if (co->parsed()) return corpus(*o);
    return 2;
  };
});

}  // namespace cmd_tokenizer
