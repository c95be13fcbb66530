// A byte-level BPE tokenizer read from / written to a Hugging Face tokenizer.json: added (special)
// tokens are cut out of the text first (leftmost, longest match), the rest is pre-tokenized into
// pieces and each piece is merged by the BPE model. Encoding is thread-safe; each thread keeps a
// cache of piece -> ids. decode(encode(bytes)) == bytes for any bytes, valid UTF-8 or not.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "text/bpe.hpp"
#include "text/pre_tokenizer.hpp"
#include "util/jsonl.hpp"

namespace trex::text {

struct AddedToken {
  TokenId id = -1;
  std::string content;
  bool special = true;
  bool lstrip = false, rstrip = false, normalized = false;
};

struct EncodeOptions {
  // Recognise special added tokens written in the text. Non-special added tokens are always recognised
  // (as transformers' split_special_tokens does).
  bool parse_special = true;
};

class Tokenizer {
 public:
  // From tokenizer.json content / file. Errors name the file and say what is unsupported.
  static Tokenizer from_json(const Json& j, const std::string& source = "<tokenizer.json>");
  static Tokenizer load(const std::filesystem::path& path);
  // Builds one directly (the trainer): vocabulary, merges, added tokens, pre-tokenizer.
  Tokenizer(TokenIndex vocab, const std::vector<std::pair<std::string, std::string>>& merges,
            std::vector<AddedToken> added, PreTokenizer pre_tokenizer);

  // Hugging Face tokenizer.json (vocab ordered by id, merges as "left right").
  nlohmann::ordered_json to_json() const;
  void save(const std::filesystem::path& path) const;  // atomic

  std::vector<TokenId> encode(std::string_view text, EncodeOptions opt = {}) const;
  void encode_append(std::string_view text, std::vector<TokenId>& out, EncodeOptions opt = {}) const;
  // Same ids, without the cache and with the quadratic BPE merge: the reference for tests.
  std::vector<TokenId> encode_reference(std::string_view text, EncodeOptions opt = {}) const;

  // Concatenated bytes of the tokens. Throws trex::Error on an id outside the vocabulary.
  std::string decode(std::span<const TokenId> ids, bool skip_special = false) const;
  void decode_append(TokenId id, std::string& out) const;

  // Id of a token written as text ("<｜User｜>", "Ġthe"), or nullopt.
  std::optional<TokenId> token_id(std::string_view token_text) const;
  // Like token_id, but throws trex::Error naming the token when it is missing.
  TokenId require_token(std::string_view token_text) const;
  const std::string& token_text(TokenId id) const;  // tokenizer.json form ("Ġthe")
  bool is_special(TokenId id) const;
  // One more than the largest id (vocabulary and added tokens).
  size_t vocab_size() const { return core_->id_text.size(); }
  const std::vector<AddedToken>& added_tokens() const { return core_->added; }
  const BpeModel& model() const { return core_->bpe; }
  // SHA-256 of the canonical tokenizer.json, to tie packed data to its tokenizer.
  const std::string& fingerprint() const;

 private:
  struct Trie {
    struct Node {
      std::vector<std::pair<uint8_t, int32_t>> children;
      int32_t token = -1;  // index into added
    };
    std::vector<Node> nodes{1};
    void insert(std::string_view s, int32_t token);
    // Longest token starting at text[i]: index into added, or -1.
    int32_t longest(std::string_view text, size_t i, size_t& len) const;
  };
  struct Core {
    BpeModel bpe;
    PreTokenizer pre;
    std::vector<AddedToken> added;
    Trie all_added, non_special_added;
    std::vector<std::string> id_text;   // token text per id ("" for holes)
    std::vector<std::string> id_bytes;  // raw bytes per id
    std::vector<uint8_t> id_kind;       // 0 hole, 1 vocab, 2 added, 3 special added
    Json normalizer, post_processor, decoder;
    bool ignore_merges = false;
    mutable std::once_flag fingerprint_once;
    mutable std::string fingerprint;
    uint64_t serial = 0;  // identifies this tokenizer to the per-thread caches
  };
  Tokenizer() = default;
  void finish(Core& core);
  template <typename PieceFn>
  void encode_impl(std::string_view text, EncodeOptions opt, std::vector<TokenId>& out, PieceFn&& piece) const;

  std::shared_ptr<const Core> core_;
};

// DeepSeek-V3/V4 special token strings.
namespace tokens {
inline constexpr const char* kBos = "<｜begin▁of▁sentence｜>";
inline constexpr const char* kEos = "<｜end▁of▁sentence｜>";
inline constexpr const char* kPad = "<｜▁pad▁｜>";
inline constexpr const char* kUser = "<｜User｜>";
inline constexpr const char* kAssistant = "<｜Assistant｜>";
inline constexpr const char* kThinkOpen = "<think>";
inline constexpr const char* kThinkClose = "</think>";
}  // namespace tokens

}  // namespace trex::text
