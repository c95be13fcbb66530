// Tokenizer: tokenizer.json I/O, added-token splitting, cached encoding, decoding.
#include "text/tokenizer.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>

#include "text/byte_level.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"

namespace trex::text {
namespace {

std::atomic<uint64_t> g_serial{1};

// Unicode White_Space, Rust's char::is_whitespace: what Hugging Face tokenizers' lstrip/rstrip of added tokens
// strips (U+0085 in, U+FEFF out, unlike ECMAScript's trim that trex followed before).
bool is_white_space(int32_t cp) {
  switch (cp) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20: case 0x85: case 0xA0: case 0x1680:
    case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

std::string_view trim_left(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    size_t j = i;
    if (!is_white_space(next_codepoint(s, j))) break;
    i = j;
  }
  return s.substr(i);
}

std::string_view trim_right(std::string_view s) {
  // Walk forward remembering where the trailing run of spaces starts.
  size_t i = 0, keep = 0;
  while (i < s.size()) {
    size_t j = i;
    bool space = is_white_space(next_codepoint(s, j));
    i = j;
    if (!space) keep = i;
  }
  return s.substr(0, keep);
}

// Per-thread cache piece bytes -> ids: open addressing over flat arrays (no per-entry allocation).
class PieceCache {
 public:
  uint64_t serial = 0;
  void reset(uint64_t s) {
    serial = s;
    slots_.assign(size_t(1) << 16, Slot{});
    mask_ = slots_.size() - 1;
    used_ = 0;
    keys_.clear();
    ids_.clear();
  }
  // Ids of the piece, or nullptr (then n is untouched).
  const TokenId* find(std::string_view piece, uint64_t h, uint32_t& n) const {
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.ids_len == 0) return nullptr;
      if (s.hash == h && s.key_len == piece.size() && std::memcmp(keys_.data() + s.key_off, piece.data(), piece.size()) == 0) {
        n = s.ids_len;
        return ids_.data() + s.ids_off;
      }
    }
  }
  void insert(std::string_view piece, uint64_t h, const TokenId* ids, uint32_t n) {
    if (n == 0) return;
    if ((used_ + 1) * 2 > slots_.size()) {
      if (slots_.size() >= (size_t(1) << 22)) {
        reset(serial);  // bounded memory: start over
      } else {
        grow();
      }
    }
    size_t i = h & mask_;
    while (slots_[i].ids_len != 0) i = (i + 1) & mask_;
    slots_[i] = Slot{h, uint32_t(keys_.size()), uint32_t(piece.size()), uint32_t(ids_.size()), n};
    keys_.insert(keys_.end(), piece.begin(), piece.end());
    ids_.insert(ids_.end(), ids, ids + n);
    ++used_;
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t key_off = 0, key_len = 0, ids_off = 0, ids_len = 0;  // ids_len 0: empty slot
  };
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.ids_len == 0) continue;
      size_t i = s.hash & mask_;
      while (slots_[i].ids_len != 0) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }
  std::vector<Slot> slots_;
  size_t mask_ = 0, used_ = 0;
  std::vector<char> keys_;
  std::vector<TokenId> ids_;
};

constexpr size_t kMaxCachedPiece = 256;

[[noreturn]] void fail(const std::string& source, const std::string& msg) { throw Error(SourceLocation{source}, msg); }

}  // namespace

void Tokenizer::Trie::insert(std::string_view s, int32_t token) {
  int32_t node = 0;
  for (unsigned char c : s) {
    int32_t child = -1;
    for (auto& [b, n] : nodes[size_t(node)].children)
      if (b == c) child = n;
    if (child < 0) {
      child = int32_t(nodes.size());
      nodes[size_t(node)].children.emplace_back(c, child);
      nodes.emplace_back();
    }
    node = child;
  }
  nodes[size_t(node)].token = token;
}

int32_t Tokenizer::Trie::longest(std::string_view text, size_t i, size_t& len) const {
  int32_t node = 0, best = -1;
  for (size_t j = i; j < text.size(); ++j) {
    int32_t child = -1;
    unsigned char c = static_cast<unsigned char>(text[j]);
    for (auto& [b, n] : nodes[size_t(node)].children)
      if (b == c) {
        child = n;
        break;
      }
    if (child < 0) break;
    node = child;
    if (nodes[size_t(node)].token >= 0) best = nodes[size_t(node)].token, len = j + 1 - i;
  }
  return best;
}

Tokenizer::Tokenizer(TokenIndex vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                     std::vector<AddedToken> added, PreTokenizer pre_tokenizer) {
  auto core = std::make_shared<Core>();
  core->bpe = BpeModel(std::move(vocab), merges);
  core->pre = std::move(pre_tokenizer);
  core->added = std::move(added);
  core->post_processor = Json::parse(R"({"type":"ByteLevel","add_prefix_space":true,"trim_offsets":false,"use_regex":true})");
  core->decoder = Json::parse(R"({"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true})");
  finish(*core);
  core_ = std::move(core);
}

void Tokenizer::finish(Core& core) {
  size_t n = size_t(core.bpe.id_bound());
  for (auto& a : core.added) n = std::max(n, size_t(a.id) + 1);
  core.id_text.assign(n, std::string());
  core.id_bytes.assign(n, std::string());
  core.id_kind.assign(n, 0);
  for (auto& [text, id] : core.bpe.vocab()) {
    core.id_text[size_t(id)] = text;
    std::string bytes;
    if (!token_text_to_bytes(text, bytes)) bytes = text;  // not byte-level text: decode as written
    core.id_bytes[size_t(id)] = std::move(bytes);
    core.id_kind[size_t(id)] = 1;
  }
  for (size_t k = 0; k < core.added.size(); ++k) {
    const AddedToken& a = core.added[k];
    if (a.id < 0) throw Error("added_tokens: negative id for '" + a.content + "'");
    if (a.content.empty()) throw Error("added_tokens: empty content for id " + std::to_string(a.id));
    core.id_text[size_t(a.id)] = a.content;
    core.id_bytes[size_t(a.id)] = a.content;
    core.id_kind[size_t(a.id)] = a.special ? 3 : 2;
    core.all_added.insert(a.content, int32_t(k));
    if (!a.special) core.non_special_added.insert(a.content, int32_t(k));
  }
  core.serial = g_serial.fetch_add(1);
}

Tokenizer Tokenizer::from_json(const Json& j, const std::string& source) {
  if (!j.is_object()) fail(source, "tokenizer.json must be a JSON object");
  auto core = std::make_shared<Core>();
  try {
    const Json& model = j.at("model");
    std::string type = model.value("type", std::string("BPE"));
    if (type != "BPE") fail(source, "model.type '" + type + "' is not supported (only BPE)");
    if (model.contains("dropout") && !model["dropout"].is_null() && model["dropout"].get<double>() != 0.0)
      fail(source, "model.dropout is not supported");
    for (const char* k : {"continuing_subword_prefix", "end_of_word_suffix"})
      if (model.contains(k) && !model[k].is_null() && !model[k].get<std::string>().empty())
        fail(source, std::string("model.") + k + " is not supported");
    if (model.value("byte_fallback", false)) fail(source, "model.byte_fallback is not supported");
    core->ignore_merges = model.value("ignore_merges", false);
    TokenIndex vocab;
    for (auto& [tok, id] : model.at("vocab").items()) vocab.emplace(tok, id.get<TokenId>());
    std::vector<std::pair<std::string, std::string>> merges;
    const Json& jm = model.at("merges");
    merges.reserve(jm.size());
    for (const Json& m : jm) {
      if (m.is_string()) {
        const std::string& s = m.get_ref<const std::string&>();
        size_t sp = s.find(' ');
        if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
          fail(source, "model.merges: '" + s + "' is not two tokens separated by one space");
        merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
      } else if (m.is_array() && m.size() == 2) {
        merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
      } else {
        fail(source, "model.merges: entries must be \"a b\" strings or [a, b] pairs");
      }
    }
    core->bpe = BpeModel(std::move(vocab), merges);

    if (j.contains("normalizer") && !j["normalizer"].is_null()) {
      const Json& n = j["normalizer"];
      bool empty_seq = n.value("type", std::string()) == "Sequence" && n.contains("normalizers") &&
                       n["normalizers"].is_array() && n["normalizers"].empty();
      if (!empty_seq) fail(source, "normalizer '" + n.value("type", std::string("?")) + "' is not supported (only none)");
      core->normalizer = n;
    }
    core->pre = PreTokenizer::from_json(j.contains("pre_tokenizer") ? j["pre_tokenizer"] : Json());
    if (j.contains("decoder") && !j["decoder"].is_null()) {
      if (j["decoder"].value("type", std::string()) != "ByteLevel")
        fail(source, "decoder '" + j["decoder"].value("type", std::string("?")) + "' is not supported (only ByteLevel)");
      core->decoder = j["decoder"];
    }
    if (j.contains("post_processor")) core->post_processor = j["post_processor"];
    if (j.contains("added_tokens")) {
      for (const Json& a : j["added_tokens"]) {
        AddedToken t;
        t.id = a.at("id").get<TokenId>();
        t.content = a.at("content").get<std::string>();
        t.special = a.value("special", false);
        t.lstrip = a.value("lstrip", false);
        t.rstrip = a.value("rstrip", false);
        t.normalized = a.value("normalized", !t.special);
        if (a.value("single_word", false))
          fail(source, "added token '" + t.content + "': single_word is not supported");
        core->added.push_back(std::move(t));
      }
    }
  } catch (const Error& e) {
    if (e.where().file.empty()) fail(source, e.message());
    throw;
  } catch (const Json::exception& e) {
    fail(source, std::string("malformed tokenizer.json: ") + e.what());
  }
  Tokenizer t;
  t.finish(*core);
  t.core_ = std::move(core);
  return t;
}

Tokenizer Tokenizer::load(const std::filesystem::path& path) {
  return from_json(parse_json_file(path), path.string());
}

nlohmann::ordered_json Tokenizer::to_json() const {
  using OJ = nlohmann::ordered_json;
  const Core& c = *core_;
  OJ j;
  j["version"] = "1.0";
  j["truncation"] = nullptr;
  j["padding"] = nullptr;
  OJ added = OJ::array();
  for (const AddedToken& a : c.added)
    added.push_back(OJ{{"id", a.id}, {"content", a.content}, {"single_word", false}, {"lstrip", a.lstrip},
                       {"rstrip", a.rstrip}, {"normalized", a.normalized}, {"special", a.special}});
  j["added_tokens"] = std::move(added);
  auto ordered = [](const Json& x) { return x.is_null() ? OJ(nullptr) : OJ::parse(x.dump()); };
  j["normalizer"] = ordered(c.normalizer);
  j["pre_tokenizer"] = ordered(c.pre.json());
  j["post_processor"] = ordered(c.post_processor);
  j["decoder"] = ordered(c.decoder);
  OJ model;
  model["type"] = "BPE";
  model["dropout"] = nullptr;
  model["unk_token"] = nullptr;
  model["continuing_subword_prefix"] = nullptr;
  model["end_of_word_suffix"] = nullptr;
  model["fuse_unk"] = false;
  model["byte_fallback"] = false;
  model["ignore_merges"] = c.ignore_merges;
  std::vector<const std::string*> by_id(size_t(c.bpe.id_bound()), nullptr);
  for (auto& [text, id] : c.bpe.vocab()) by_id[size_t(id)] = &text;
  OJ vocab = OJ::object();
  // ordered_json's operator[] searches linearly; append to its underlying vector (keys are unique).
  auto& entries = static_cast<std::vector<std::pair<const std::string, OJ>>&>(vocab.get_ref<OJ::object_t&>());
  entries.reserve(c.bpe.vocab().size());
  for (size_t id = 0; id < by_id.size(); ++id)
    if (by_id[id]) entries.emplace_back(*by_id[id], OJ(id));
  model["vocab"] = std::move(vocab);
  OJ merges = OJ::array();
  for (auto& [a, b] : c.bpe.merges()) merges.push_back(*by_id[size_t(a)] + " " + *by_id[size_t(b)]);
  model["merges"] = std::move(merges);
  j["model"] = std::move(model);
  return j;
}

void Tokenizer::save(const std::filesystem::path& path) const {
  std::string s = to_json().dump(2);
  s.push_back('\n');
  write_file_atomic(path, s);
}

template <typename PieceFn>
void Tokenizer::encode_impl(std::string_view text, EncodeOptions opt, std::vector<TokenId>& out, PieceFn&& piece) const {
  const Core& c = *core_;
  thread_local PieceBuffer buf;
  auto section = [&](std::string_view s) {
    if (s.empty()) return;
    c.pre.split(s, buf);
    for (std::string_view p : buf.pieces) piece(p, out);
  };
  const Trie& trie = opt.parse_special ? c.all_added : c.non_special_added;
  if (trie.nodes.size() == 1) {
    section(text);
    return;
  }
  size_t start = 0, i = 0;
  bool strip_next_left = false;
  while (i < text.size()) {
    size_t len = 0;
    int32_t k = trie.longest(text, i, len);
    if (k < 0) {
      ++i;
      continue;
    }
    const AddedToken& a = c.added[size_t(k)];
    std::string_view before = text.substr(start, i - start);
    if (strip_next_left) before = trim_left(before);
    if (a.lstrip) before = trim_right(before);
    section(before);
    out.push_back(a.id);
    strip_next_left = a.rstrip;
    i += len;
    start = i;
  }
  std::string_view rest = text.substr(start);
  if (strip_next_left) rest = trim_left(rest);
  section(rest);
}

void Tokenizer::encode_append(std::string_view text, std::vector<TokenId>& out, EncodeOptions opt) const {
  const Core& c = *core_;
  thread_local PieceCache cache;
  if (cache.serial != c.serial) cache.reset(c.serial);
  const bool ignore_merges = c.ignore_merges;
  encode_impl(text, opt, out, [&](std::string_view p, std::vector<TokenId>& o) {
    if (p.size() == 1) {
      o.push_back(c.bpe.byte_token(static_cast<unsigned char>(p[0])));
      return;
    }
    const bool cacheable = p.size() <= kMaxCachedPiece;
    const uint64_t h = cacheable ? std::hash<std::string_view>{}(p) : 0;
    if (cacheable) {
      uint32_t n = 0;
      if (const TokenId* ids = cache.find(p, h, n)) {
        o.insert(o.end(), ids, ids + n);
        return;
      }
    }
    size_t before = o.size();
    bool whole = false;
    if (ignore_merges) {
      auto it = c.bpe.vocab().find(bytes_to_token_text(p));
      if (it != c.bpe.vocab().end()) o.push_back(it->second), whole = true;
    }
    if (!whole) c.bpe.merge_piece(p, o);
    if (cacheable) cache.insert(p, h, o.data() + before, uint32_t(o.size() - before));
  });
}

std::vector<TokenId> Tokenizer::encode(std::string_view text, EncodeOptions opt) const {
  std::vector<TokenId> out;
  out.reserve(text.size() / 3 + 4);
  encode_append(text, out, opt);
  return out;
}

std::vector<TokenId> Tokenizer::encode_reference(std::string_view text, EncodeOptions opt) const {
  const Core& c = *core_;
  const bool ignore_merges = c.ignore_merges;
  std::vector<TokenId> out;
  encode_impl(text, opt, out, [&](std::string_view p, std::vector<TokenId>& o) {
    if (ignore_merges) {
      auto it = c.bpe.vocab().find(bytes_to_token_text(p));
      if (it != c.bpe.vocab().end()) {
        o.push_back(it->second);
        return;
      }
    }
    c.bpe.merge_piece_reference(p, o);
  });
  return out;
}

void Tokenizer::decode_append(TokenId id, std::string& out) const {
  const Core& c = *core_;
  if (id < 0 || size_t(id) >= c.id_kind.size() || c.id_kind[size_t(id)] == 0)
    throw Error("token id " + std::to_string(id) + " is not in the vocabulary (size " + std::to_string(c.id_kind.size()) + ")");
  out += c.id_bytes[size_t(id)];
}

std::string Tokenizer::decode(std::span<const TokenId> ids, bool skip_special) const {
  std::string out;
  out.reserve(ids.size() * 4);
  for (TokenId id : ids) {
    if (skip_special && is_special(id)) continue;
    decode_append(id, out);
  }
  return out;
}

std::optional<TokenId> Tokenizer::token_id(std::string_view token_text) const {
  const Core& c = *core_;
  for (const AddedToken& a : c.added)
    if (a.content == token_text) return a.id;
  auto it = c.bpe.vocab().find(token_text);
  if (it != c.bpe.vocab().end()) return it->second;
  return std::nullopt;
}

TokenId Tokenizer::require_token(std::string_view token_text) const {
  auto id = token_id(token_text);
  if (!id) throw Error("the tokenizer has no token '" + std::string(token_text) + "'");
  return *id;
}

const std::string& Tokenizer::token_text(TokenId id) const {
  if (id < 0 || size_t(id) >= core_->id_text.size()) throw Error("token id " + std::to_string(id) + " out of range");
  return core_->id_text[size_t(id)];
}

const std::string& Tokenizer::fingerprint() const {
  std::call_once(core_->fingerprint_once, [&] { core_->fingerprint = sha256_hex(to_json().dump()); });
  return core_->fingerprint;
}

bool Tokenizer::is_special(TokenId id) const {
  return id >= 0 && size_t(id) < core_->id_kind.size() && core_->id_kind[size_t(id)] == 3;
}

}  // namespace trex::text
