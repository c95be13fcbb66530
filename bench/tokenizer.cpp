// Tokenizer benchmark: BPE training time on a deterministic 50 MB corpus, and encode throughput
// (MB/s, one thread and all threads) with the trained tokenizer and with DeepSeek-V3's tokenizer.json.
// Writes the peer's input (a slice of the corpus as JSONL) so bench/tokenizer.bench.sh can time Hugging Face
// tokenizers on the same text with the same tokenizer.json, 1 and 2 threads, and print the ratios.
//   bench_tokenizer WORK_DIR [DEEPSEEK_TOKENIZER_JSON] [CORPUS_MB] [PEER_MB]
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "text/bpe_trainer.hpp"
#include "text/synthetic_corpus.hpp"
#include "text/tokenizer.hpp"
#include "util/jsonl.hpp"
#include "util/timer.hpp"

using namespace trex::text;

namespace {

double encode_mbps(const Tokenizer& tok, const std::vector<std::string>& docs, size_t bytes, int threads,
                   uint64_t* tokens_out) {
  std::vector<uint64_t> counts(size_t(threads), 0);
  trex::Timer timer;
  auto work = [&](int t) {
    std::vector<TokenId> ids;
    for (size_t i = size_t(t); i < docs.size(); i += size_t(threads)) {
      ids.clear();
      tok.encode_append(docs[i], ids);
      counts[size_t(t)] += ids.size();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& th : pool) th.join();
  double s = timer.seconds();
  uint64_t total = 0;
  for (auto c : counts) total += c;
  if (tokens_out) *tokens_out = total;
  return double(bytes) / 1e6 / s;
}

void report(const char* name, const Tokenizer& tok, const std::vector<std::string>& docs, size_t bytes,
            const std::vector<std::string>& peer_docs, size_t peer_bytes) {
  const int hw = std::max(1u, std::thread::hardware_concurrency());
  encode_mbps(tok, peer_docs, peer_bytes, 1, nullptr);  // warm the piece cache as a long run would be
  uint64_t tokens = 0;
  double one = encode_mbps(tok, docs, bytes, 1, &tokens);
  double all = encode_mbps(tok, docs, bytes, hw, nullptr);
  std::printf("trex encode [%s]: %.1f MB/s (1 thread), %.1f MB/s (%d threads), %.2f bytes/token over %.1f MB\n", name,
              one, all, hw, double(bytes) / double(tokens), double(bytes) / 1e6);
  for (int threads : {1, 2})  // the peer's slice, for the ratios
    std::printf("trex_encode_mbps[%s,%d]=%.3f\n", name, threads, encode_mbps(tok, peer_docs, peer_bytes, threads, nullptr));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s WORK_DIR [DEEPSEEK_TOKENIZER_JSON] [CORPUS_MB] [PEER_MB]\n", argv[0]);
    return 2;
  }
  std::string work = argv[1];
  std::string deepseek = argc > 2 ? argv[2] : "";
  size_t corpus_mb = argc > 3 ? std::stoul(argv[3]) : 50;
  size_t peer_mb = argc > 4 ? std::stoul(argv[4]) : 10;
  trex::Timer gen;
  auto docs = synthetic_corpus(2024, corpus_mb << 20);
  size_t bytes = 0;
  for (auto& d : docs) bytes += d.size();
  std::vector<std::string> peer_docs;
  size_t peer_bytes = 0;
  {
    trex::JsonlWriter w(work + "/peer_corpus.jsonl");
    for (auto& d : docs) {
      if (peer_bytes >= (peer_mb << 20)) break;
      peer_docs.push_back(d);
      peer_bytes += d.size();
      w.write(trex::Json{{"text", d}});
    }
    w.commit();
  }
  std::printf("corpus: %zu documents, %.1f MB (generated in %.1f s); peer slice %.1f MB\n", docs.size(),
              double(bytes) / 1e6, gen.seconds(), double(peer_bytes) / 1e6);

  BpeTrainerOptions opt;
  opt.vocab_size = 32000;
  BpeTrainer trainer(opt);
  trex::Timer train_timer;
  trainer.add_texts(docs);
  Tokenizer ours = trainer.train();
  const auto& st = trainer.stats();
  std::printf("trex bpe train: vocab %zu on %.1f MB in %.2f s (pre-tokenize %.2f s with %d threads, %zu merges %.2f s, "
              "%llu distinct pieces)\n",
              ours.vocab_size(), double(bytes) / 1e6, train_timer.seconds(), st.pretokenize_seconds,
              int(std::max(1u, std::thread::hardware_concurrency())), st.merges, st.merge_seconds,
              static_cast<unsigned long long>(st.distinct_pieces));
  ours.save(work + "/ours.tokenizer.json");
  report("ours-32k", ours, docs, bytes, peer_docs, peer_bytes);
  if (!deepseek.empty()) {
    trex::Timer load;
    Tokenizer ds = Tokenizer::load(deepseek);
    std::printf("deepseek-v3 tokenizer.json loaded in %.2f s\n", load.seconds());
    report("deepseek-v3", ds, docs, bytes, peer_docs, peer_bytes);
  }
  return 0;
}
