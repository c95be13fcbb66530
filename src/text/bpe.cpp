// BPE merges: the heap-based fast path and the quadratic reference.
#include "text/bpe.hpp"

#include <algorithm>
#include <functional>

#include "text/byte_level.hpp"
#include "util/error.hpp"

namespace trex::text {
namespace {
constexpr uint64_t kEmpty = ~uint64_t(0);
uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}
}  // namespace

BpeModel::BpeModel(TokenIndex vocab, const std::vector<std::pair<std::string, std::string>>& merges)
    : vocab_(std::move(vocab)) {
  for (auto& [tok, id] : vocab_) {
    if (id < 0) throw Error("model.vocab: negative id for token '" + tok + "'");
    id_bound_ = std::max(id_bound_, id + 1);
  }
  const auto& cps = byte_to_codepoint();
  for (int b = 0; b < 256; ++b) {
    std::string t;
    append_utf8(t, cps[b]);
    auto it = vocab_.find(t);
    if (it == vocab_.end())
      throw Error("model.vocab: no token for byte 0x" + std::string(1, "0123456789abcdef"[b >> 4]) +
                  "0123456789abcdef"[b & 15] + " ('" + t + "'); only complete byte-level vocabularies are supported");
    byte_ids_[b] = it->second;
  }
  size_t cap = 16;
  while (cap < merges.size() * 2 + 16) cap <<= 1;
  table_keys_.assign(cap, kEmpty);
  table_values_.assign(cap, MergeResult{UINT32_MAX, -1});
  table_mask_ = cap - 1;
  merges_.reserve(merges.size());
  std::string joined;
  for (size_t r = 0; r < merges.size(); ++r) {
    const auto& [l, rt] = merges[r];
    auto il = vocab_.find(l), ir = vocab_.find(rt);
    joined = l + rt;
    auto ij = vocab_.find(joined);
    if (il == vocab_.end() || ir == vocab_.end() || ij == vocab_.end())
      throw Error("model.merges[" + std::to_string(r) + "]: '" + l + " " + rt + "' uses a token missing from the vocabulary");
    merges_.emplace_back(il->second, ir->second);
    uint64_t k = key(il->second, ir->second);
    uint64_t slot = mix(k) & table_mask_;
    while (table_keys_[slot] != kEmpty && table_keys_[slot] != k) slot = (slot + 1) & table_mask_;
    if (table_keys_[slot] == k) continue;  // duplicate merge: the first (lowest) rank wins
    table_keys_[slot] = k;
    table_values_[slot] = MergeResult{uint32_t(r), ij->second};
  }
}

BpeModel::MergeResult BpeModel::find_merge(TokenId a, TokenId b) const {
  uint64_t k = key(a, b);
  uint64_t slot = mix(k) & table_mask_;
  while (true) {
    uint64_t t = table_keys_[slot];
    if (t == k) return table_values_[slot];
    if (t == kEmpty) return MergeResult{UINT32_MAX, -1};
    slot = (slot + 1) & table_mask_;
  }
}

void BpeModel::merge_piece_reference(std::string_view bytes, std::vector<TokenId>& out) const {
  std::vector<TokenId> syms;
  for (unsigned char c : bytes) syms.push_back(byte_ids_[c]);
  while (syms.size() > 1) {
    uint32_t best = UINT32_MAX;
    size_t at = 0;
    TokenId merged = -1;
    for (size_t i = 0; i + 1 < syms.size(); ++i) {
      MergeResult m = find_merge(syms[i], syms[i + 1]);
      if (m.rank < best) best = m.rank, at = i, merged = m.id;
    }
    if (best == UINT32_MAX) break;
    syms[at] = merged;
    syms.erase(syms.begin() + long(at) + 1);
  }
  out.insert(out.end(), syms.begin(), syms.end());
}

void BpeModel::merge_piece(std::string_view bytes, std::vector<TokenId>& out) const {
  const size_t n = bytes.size();
  if (n == 0) return;
  if (n == 1) {
    out.push_back(byte_ids_[static_cast<unsigned char>(bytes[0])]);
    return;
  }
  // Symbols in a doubly linked list over positions; a merged-away symbol has len 0.
  struct Symbol {
    TokenId id;
    int32_t prev, next;
    uint32_t len;
  };
  struct Candidate {
    uint32_t rank;
    int32_t pos;
    TokenId id;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  thread_local std::vector<Symbol> sym;
  thread_local std::vector<Candidate> heap;
  sym.resize(n);
  for (size_t i = 0; i < n; ++i)
    sym[i] = Symbol{byte_ids_[static_cast<unsigned char>(bytes[i])], int32_t(i) - 1, i + 1 < n ? int32_t(i + 1) : -1, 1};
  heap.clear();
  const std::greater<Candidate> later;  // min-heap on (rank, position)
  auto push = [&](Candidate c) {
    heap.push_back(c);
    std::push_heap(heap.begin(), heap.end(), later);
  };
  for (size_t i = 0; i + 1 < n; ++i) {
    MergeResult m = find_merge(sym[i].id, sym[i + 1].id);
    if (m.rank != UINT32_MAX) heap.push_back(Candidate{m.rank, int32_t(i), m.id});
  }
  std::make_heap(heap.begin(), heap.end(), later);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    Candidate c = heap.back();
    heap.pop_back();
    Symbol& left = sym[size_t(c.pos)];
    if (left.len == 0 || left.next < 0) continue;
    Symbol& right = sym[size_t(left.next)];
    MergeResult now = find_merge(left.id, right.id);
    if (now.rank != c.rank || now.id != c.id) continue;  // stale: one side changed since it was queued
    left.id = c.id;
    left.len += right.len;
    right.len = 0;
    left.next = right.next;
    if (left.next >= 0) sym[size_t(left.next)].prev = c.pos;
    if (left.prev >= 0) {
      MergeResult m = find_merge(sym[size_t(left.prev)].id, left.id);
      if (m.rank != UINT32_MAX) push(Candidate{m.rank, left.prev, m.id});
    }
    if (left.next >= 0) {
      MergeResult m = find_merge(left.id, sym[size_t(left.next)].id);
      if (m.rank != UINT32_MAX) push(Candidate{m.rank, c.pos, m.id});
    }
  }
  for (int32_t i = 0; i >= 0; i = sym[size_t(i)].next) out.push_back(sym[size_t(i)].id);
}

}  // namespace trex::text
