// BPE trainer: parallel piece counting, incremental merge loop, and the naive reference loop.
#include "text/bpe_trainer.hpp"

#include "text/jsonl_blocks.hpp"

#include <algorithm>
#include <fstream>
#include <mutex>
#include <thread>

#include "text/byte_level.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/progress.hpp"
#include "util/timer.hpp"

namespace trex::text {
namespace {

uint64_t pair_key(TokenId a, TokenId b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }
TokenId pair_left(uint64_t k) { return TokenId(k >> 32); }
TokenId pair_right(uint64_t k) { return TokenId(k & 0xffffffffu); }

// Calls fn(section) for the text between occurrences of the special tokens (leftmost, longest).
template <typename Fn>
void for_each_non_special(std::string_view text, const std::vector<std::string>& specials, Fn&& fn) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t best = std::string_view::npos, best_len = 0;
    for (const std::string& s : specials) {
      size_t at = text.find(s, start);
      if (at != std::string_view::npos && (at < best || (at == best && s.size() > best_len))) best = at, best_len = s.size();
    }
    if (best == std::string_view::npos) {
      fn(text.substr(start));
      return;
    }
    fn(text.substr(start, best - start));
    start = best + best_len;
  }
}

}  // namespace

std::string record_text(const Json& record, const std::string& field, const SourceLocation& where) {
  const Json& v = require_field(record, field.c_str(), where);
  if (v.is_string()) return v.get<std::string>();
  if (field == "messages" && v.is_array()) {
    std::string out;
    for (const Json& m : v) {
      if (!m.is_object() || !m.contains("content") || !m["content"].is_string())
        throw Error(where, "field 'messages': every message needs a string 'content'");
      if (!out.empty()) out.push_back('\n');
      out += m["content"].get<std::string>();
    }
    return out;
  }
  throw Error(where, "field '" + field + "' must be a string");
}

BpeTrainer::BpeTrainer(BpeTrainerOptions opt, PreTokenizer pre) : opt_(std::move(opt)), pre_(std::move(pre)) {
  if (opt_.vocab_size < opt_.special_tokens.size() + 256)
    throw Error("vocab size " + std::to_string(opt_.vocab_size) + " is smaller than the " +
                std::to_string(opt_.special_tokens.size()) + " special tokens + 256 byte tokens");
  for (const auto& s : opt_.special_tokens)
    if (s.empty()) throw Error("special tokens must not be empty");
}

void BpeTrainer::count_block(const std::vector<std::string_view>& texts) {
  const int nt = std::min<int>(thread_count(opt_.threads), std::max<int>(1, int(texts.size())));
  using Map = std::unordered_map<std::string, uint64_t, StringHash, std::equal_to<>>;
  std::vector<Map> local(static_cast<size_t>(nt));
  std::vector<uint64_t> occurrences(static_cast<size_t>(nt), 0);
  auto work = [&](int t) {
    PieceBuffer buf;
    Map& m = local[size_t(t)];
    size_t lo = texts.size() * size_t(t) / size_t(nt), hi = texts.size() * size_t(t + 1) / size_t(nt);
    for (size_t i = lo; i < hi; ++i) {
      for_each_non_special(texts[i], opt_.special_tokens, [&](std::string_view section) {
        if (section.empty()) return;
        pre_.split(section, buf);
        for (std::string_view p : buf.pieces) {
          auto it = m.find(p);
          if (it == m.end())
            m.emplace(std::string(p), 1);
          else
            ++it->second;
          ++occurrences[size_t(t)];
        }
      });
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < nt; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& th : pool) th.join();
  for (int t = 0; t < nt; ++t) {
    stats_.piece_occurrences += occurrences[size_t(t)];
    if (piece_counts_.empty()) {
      piece_counts_ = std::move(local[size_t(t)]);
      continue;
    }
    for (auto& [k, v] : local[size_t(t)]) piece_counts_[k] += v;
  }
  for (auto t : texts) stats_.bytes += t.size();
  stats_.documents += texts.size();
}

void BpeTrainer::add_texts(const std::vector<std::string>& texts) {
  Timer timer;
  std::vector<std::string_view> views(texts.begin(), texts.end());
  count_block(views);
  stats_.pretokenize_seconds += timer.seconds();
}

void BpeTrainer::add_jsonl(const std::filesystem::path& path) {
  Timer timer;
  map_jsonl_blocks<std::string>(
      path, opt_.threads, size_t(64) << 20,
      [&](const Json& record, const SourceLocation& where) { return record_text(record, opt_.field, where); },
      [&](std::vector<std::string>& texts) {
        std::vector<std::string_view> views(texts.begin(), texts.end());
        count_block(views);
      });
  stats_.pretokenize_seconds += timer.seconds();
}

void BpeTrainer::setup(TokenIndex& vocab, std::vector<std::string>& id_text, std::vector<size_t>& id_bytes,
                       std::vector<Word>& words) const {
  for (const std::string& s : opt_.special_tokens) {
    if (vocab.count(s)) throw Error("special token '" + s + "' given twice");
    vocab.emplace(s, TokenId(id_text.size()));
    id_text.push_back(s);
    id_bytes.push_back(s.size());
  }
  // Byte tokens in code point order of their byte-level characters (as Hugging Face sorts its alphabet).
  std::vector<std::pair<uint32_t, int>> order;
  for (int b = 0; b < 256; ++b) order.emplace_back(byte_to_codepoint()[b], b);
  std::sort(order.begin(), order.end());
  TokenId byte_id[256];
  for (auto& [cp, b] : order) {
    std::string t;
    append_utf8(t, cp);
    byte_id[b] = TokenId(id_text.size());
    if (!vocab.emplace(t, byte_id[b]).second) throw Error("special token '" + t + "' collides with a byte token");
    id_text.push_back(t);
    id_bytes.push_back(1);
  }
  // Pieces in byte order, so the word table does not depend on hashing or thread count.
  std::vector<std::pair<std::string_view, uint64_t>> sorted;
  sorted.reserve(piece_counts_.size());
  for (auto& [k, v] : piece_counts_) sorted.emplace_back(k, v);
  std::sort(sorted.begin(), sorted.end());
  words.clear();
  words.reserve(sorted.size());
  for (auto& [k, v] : sorted) {
    Word w;
    w.count = v;
    w.symbols.reserve(k.size());
    for (unsigned char c : k) w.symbols.push_back(byte_id[c]);
    words.push_back(std::move(w));
  }
}

Tokenizer BpeTrainer::build(TokenIndex vocab, const std::vector<std::pair<std::string, std::string>>& merges) const {
  std::vector<AddedToken> added;
  for (size_t i = 0; i < opt_.special_tokens.size(); ++i) {
    AddedToken a;
    a.id = TokenId(i);
    a.content = opt_.special_tokens[i];
    a.special = true;
    added.push_back(a);
  }
  return Tokenizer(std::move(vocab), merges, std::move(added), pre_);
}

Tokenizer BpeTrainer::train() {
  Timer timer;
  TokenIndex vocab;
  std::vector<std::string> id_text;
  std::vector<size_t> id_bytes;
  std::vector<Word> words;
  setup(vocab, id_text, id_bytes, words);
  stats_.distinct_pieces = words.size();

  struct PairInfo {
    int64_t count = 0;
    std::vector<uint32_t> words;  // may hold words that no longer contain the pair
  };
  std::unordered_map<uint64_t, PairInfo> pairs;
  for (uint32_t w = 0; w < words.size(); ++w) {
    const auto& s = words[w].symbols;
    for (size_t i = 0; i + 1 < s.size(); ++i) {
      PairInfo& p = pairs[pair_key(s[i], s[i + 1])];
      p.count += int64_t(words[w].count);
      if (p.words.empty() || p.words.back() != w) p.words.push_back(w);
    }
  }
  struct Entry {
    int64_t count;
    uint64_t pair;
  };
  // Max count first; among equal counts the smaller (left, right) pair first.
  auto before = [](const Entry& x, const Entry& y) { return x.count != y.count ? x.count < y.count : x.pair > y.pair; };
  std::vector<Entry> heap;
  heap.reserve(pairs.size());
  for (auto& [k, p] : pairs) heap.push_back({p.count, k});
  std::make_heap(heap.begin(), heap.end(), before);

  std::vector<std::pair<std::string, std::string>> merges;
  std::vector<TokenId> last_merge(words.size(), -1);
  std::vector<TokenId> scratch;
  std::vector<uint64_t> grown;  // pairs whose count went up in this merge
  ProgressBar bar("bpe merges", int64_t(opt_.vocab_size - id_text.size()), opt_.progress);
  while (id_text.size() < opt_.vocab_size && !heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), before);
    Entry top = heap.back();
    heap.pop_back();
    auto it = pairs.find(top.pair);
    int64_t current = it->second.count;
    if (current != top.count) {  // stale entry: counts only fall, so re-queue at the true count
      if (current > 0) {
        heap.push_back({current, top.pair});
        std::push_heap(heap.begin(), heap.end(), before);
      }
      continue;
    }
    if (current < int64_t(std::max<uint64_t>(opt_.min_frequency, 1))) break;
    TokenId a = pair_left(top.pair), b = pair_right(top.pair);
    if (id_bytes[size_t(a)] + id_bytes[size_t(b)] > opt_.max_token_bytes) continue;  // never queued again
    const TokenId x = TokenId(id_text.size());
    id_text.push_back(id_text[size_t(a)] + id_text[size_t(b)]);
    id_bytes.push_back(id_bytes[size_t(a)] + id_bytes[size_t(b)]);
    vocab.emplace(id_text.back(), x);
    merges.emplace_back(id_text[size_t(a)], id_text[size_t(b)]);
    std::vector<uint32_t> affected = std::move(it->second.words);
    it->second.words.clear();
    grown.clear();
    for (uint32_t w : affected) {
      if (last_merge[w] == x) continue;
      last_merge[w] = x;
      auto& s = words[w].symbols;
      const int64_t wc = int64_t(words[w].count);
      auto add = [&](TokenId l, TokenId r, int64_t d) {
        PairInfo& p = pairs[pair_key(l, r)];
        p.count += d * wc;
        if (d > 0) {
          if (p.words.empty() || p.words.back() != w) p.words.push_back(w);
          grown.push_back(pair_key(l, r));
        }
      };
      scratch.clear();
      size_t i = 0;
      while (i < s.size()) {
        if (i + 1 < s.size() && s[i] == a && s[i + 1] == b) {
          if (!scratch.empty()) {
            add(scratch.back(), a, -1);
            add(scratch.back(), x, +1);
          }
          if (i + 2 < s.size()) {
            add(b, s[i + 2], -1);
            add(x, s[i + 2], +1);
          }
          add(a, b, -1);
          scratch.push_back(x);
          i += 2;
        } else {
          scratch.push_back(s[i]);
          ++i;
        }
      }
      s.swap(scratch);
    }
    std::sort(grown.begin(), grown.end());
    grown.erase(std::unique(grown.begin(), grown.end()), grown.end());
    for (uint64_t k : grown) {
      heap.push_back({pairs[k].count, k});
      std::push_heap(heap.begin(), heap.end(), before);
    }
    bar.advance();
  }
  bar.finish();
  stats_.merges = merges.size();
  stats_.merge_seconds = timer.seconds();
  return build(std::move(vocab), merges);
}

Tokenizer BpeTrainer::train_reference() {
  TokenIndex vocab;
  std::vector<std::string> id_text;
  std::vector<size_t> id_bytes;
  std::vector<Word> words;
  setup(vocab, id_text, id_bytes, words);
  std::vector<std::pair<std::string, std::string>> merges;
  std::unordered_map<uint64_t, bool> too_long;
  while (id_text.size() < opt_.vocab_size) {
    std::unordered_map<uint64_t, int64_t> counts;
    for (const Word& w : words)
      for (size_t i = 0; i + 1 < w.symbols.size(); ++i) counts[pair_key(w.symbols[i], w.symbols[i + 1])] += int64_t(w.count);
    uint64_t best = 0;
    int64_t best_count = 0;
    for (auto& [k, c] : counts) {
      if (too_long.count(k)) continue;
      if (c > best_count || (c == best_count && k < best)) best = k, best_count = c;
    }
    if (best_count == 0 || best_count < int64_t(std::max<uint64_t>(opt_.min_frequency, 1))) break;
    TokenId a = pair_left(best), b = pair_right(best);
    if (id_bytes[size_t(a)] + id_bytes[size_t(b)] > opt_.max_token_bytes) {
      too_long[best] = true;
      continue;
    }
    TokenId x = TokenId(id_text.size());
    id_text.push_back(id_text[size_t(a)] + id_text[size_t(b)]);
    id_bytes.push_back(id_bytes[size_t(a)] + id_bytes[size_t(b)]);
    vocab.emplace(id_text.back(), x);
    merges.emplace_back(id_text[size_t(a)], id_text[size_t(b)]);
    for (Word& w : words) {
      std::vector<TokenId> out;
      for (size_t i = 0; i < w.symbols.size(); ++i) {
        if (i + 1 < w.symbols.size() && w.symbols[i] == a && w.symbols[i + 1] == b) {
          out.push_back(x);
          ++i;
        } else {
          out.push_back(w.symbols[i]);
        }
      }
      w.symbols = std::move(out);
    }
  }
  return build(std::move(vocab), merges);
}

}  // namespace trex::text
