// CPT and SFT packing (see header).
#include "text/data_pack.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <mutex>
#include <numeric>
#include <thread>

#include "text/bpe_trainer.hpp"
#include "text/jsonl_blocks.hpp"
#include "text/sft_file.hpp"
#include "text/token_shards.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"
#include "util/timer.hpp"

namespace trex::text {
namespace fs = std::filesystem;
namespace {

// Maps every record of a JSONL file in parallel and hands the results to sink one by one, in file order.
template <typename R, typename Fn, typename Sink>
void map_jsonl(const fs::path& path, int threads, Fn&& fn, Sink&& sink) {
  map_jsonl_blocks<R>(path, threads, size_t(32) << 20, fn, [&](std::vector<R>& block) {
    for (auto& r : block) sink(std::move(r));
  });
}

void remove_if_exists(const fs::path& p) {
  std::error_code ec;
  fs::remove(p, ec);
}

std::string shard_name(uint64_t i) {
  std::string n = std::to_string(i);
  return "cpt_" + std::string(n.size() < 5 ? 5 - n.size() : 0, '0') + n;
}

Json sources_json(const std::vector<fs::path>& inputs) {
  Json a = Json::array();
  for (const auto& p : inputs) a.push_back(p.string());
  return a;
}

}  // namespace

Json PackStats::to_json() const {
  return Json{{"records", records},       {"documents", documents},         {"skipped_empty", skipped_empty},
              {"dropped_too_long", dropped_too_long}, {"truncated", truncated}, {"tokens", tokens},
              {"target_tokens", target_tokens}, {"sequences", sequences}, {"padding_tokens", padding_tokens},
              {"shards", shards},         {"seconds", seconds}};
}

Truncation parse_truncation(const std::string& s) {
  if (s == "drop") return Truncation::Drop;
  if (s == "right") return Truncation::Right;
  if (s == "left") return Truncation::Left;
  throw Error("truncation '" + s + "' is not one of drop, right, left");
}

const char* truncation_name(Truncation t) {
  return t == Truncation::Drop ? "drop" : t == Truncation::Right ? "right" : "left";
}

PackStats pack_cpt(const Tokenizer& tok, const std::vector<fs::path>& inputs, const fs::path& out_dir,
                   const CptPackOptions& opt) {
  Timer timer;
  PackStats st;
  fs::create_directories(out_dir);
  const fs::path manifest = out_dir / "cpt.json";
  remove_if_exists(manifest);  // the old dataset stops existing before any shard is overwritten
  const TokenId bos = opt.add_bos ? tok.require_token(tokens::kBos) : -1;
  const TokenId eos = opt.add_eos ? tok.require_token(tokens::kEos) : -1;
  std::vector<TokenId> all;
  std::vector<uint64_t> starts{0};
  for (const auto& in : inputs) {
    map_jsonl<std::vector<TokenId>>(
        in, opt.threads,
        [&](const Json& rec, const SourceLocation& where) {
          std::string text = record_text(rec, opt.field, where);
          std::vector<TokenId> ids;
          if (bos >= 0) ids.push_back(bos);
          tok.encode_append(text, ids, EncodeOptions{opt.parse_special});
          if (eos >= 0) ids.push_back(eos);
          if (text.empty()) ids.clear();
          return ids;
        },
        [&](std::vector<TokenId>&& ids) {
          ++st.records;
          if (ids.empty()) {
            ++st.skipped_empty;
            return;
          }
          all.insert(all.end(), ids.begin(), ids.end());
          starts.push_back(all.size());
        });
  }
  const uint64_t ndocs = starts.size() - 1;
  std::vector<uint32_t> order(ndocs);
  std::iota(order.begin(), order.end(), 0u);
  if (opt.shuffle) Rng(opt.seed).shuffle(order);
  const TokenDtype dtype = dtype_for_vocab(tok.vocab_size());
  Json shards = Json::array();
  std::unique_ptr<ShardWriter> w;
  auto flush = [&] {
    if (!w) return;
    w->commit();
    shards.push_back(Json{{"prefix", shard_name(st.shards)},
                          {"documents", w->documents()},
                          {"tokens", w->tokens()}});
    ++st.shards;
    w.reset();
  };
  for (uint32_t d : order) {
    if (!w) w = std::make_unique<ShardWriter>(out_dir / shard_name(st.shards), dtype);
    w->add_document(std::span<const TokenId>(all.data() + starts[d], starts[d + 1] - starts[d]));
    st.tokens += starts[d + 1] - starts[d];
    ++st.documents;
    if (w->tokens() >= opt.shard_tokens) flush();
  }
  flush();
  st.seconds = timer.seconds();
  Json m{{"format", "trex-cpt-shards"},
         {"version", 1},
         {"tokenizer_sha256", tok.fingerprint()},
         {"vocab_size", tok.vocab_size()},
         {"dtype", dtype_name(dtype)},
         {"bos", opt.add_bos},
         {"eos", opt.add_eos},
         {"shuffle", opt.shuffle},
         {"seed", opt.seed},
         {"documents", st.documents},
         {"tokens", st.tokens},
         {"shards", shards},
         {"sources", sources_json(inputs)},
         {"stats", st.to_json()}};
  write_file_atomic(manifest, m.dump(2) + "\n");
  return st;
}

bool truncate_sample(SftSample& s, size_t seq_len, Truncation t, bool& truncated) {
  truncated = false;
  if (s.ids.size() > seq_len) {
    if (t == Truncation::Drop) return false;
    truncated = true;
    if (t == Truncation::Right) {
      s.ids.resize(seq_len);
      s.loss_mask.resize(seq_len);
    } else {
      size_t cut = s.ids.size() - seq_len;
      s.ids.erase(s.ids.begin(), s.ids.begin() + long(cut));
      s.loss_mask.erase(s.loss_mask.begin(), s.loss_mask.begin() + long(cut));
    }
  }
  return std::find(s.loss_mask.begin(), s.loss_mask.end(), uint8_t(1)) != s.loss_mask.end();
}

std::vector<std::vector<uint32_t>> first_fit_pack(const std::vector<SftSample>& samples, const std::vector<uint32_t>& order,
                                                  size_t seq_len, size_t open_bins) {
  struct Bin {
    std::vector<uint32_t> items;
    size_t used = 0;
  };
  std::vector<std::vector<uint32_t>> done;
  std::vector<Bin> open;  // in opening order
  for (uint32_t s : order) {
    size_t len = samples[s].ids.size();
    if (len == 0 || len > seq_len) throw Error("first_fit_pack: sample length " + std::to_string(len) + " is not in 1.." + std::to_string(seq_len));
    bool placed = false;
    for (Bin& b : open)
      if (b.used + len <= seq_len) {
        b.items.push_back(s);
        b.used += len;
        placed = true;
        break;
      }
    if (placed) continue;
    if (open.size() >= std::max<size_t>(open_bins, 1)) {  // close the oldest open sequence
      done.push_back(std::move(open.front().items));
      open.erase(open.begin());
    }
    open.push_back(Bin{{s}, len});
  }
  for (Bin& b : open) done.push_back(std::move(b.items));
  return done;
}

PackStats pack_sft(const Tokenizer& tok, const std::vector<fs::path>& inputs, const fs::path& out_dir,
                   const SftPackOptions& opt) {
  Timer timer;
  PackStats st;
  if (opt.seq_len < 2) throw Error("sequence length must be at least 2");
  fs::create_directories(out_dir);
  const fs::path manifest = out_dir / "sft.json";
  remove_if_exists(manifest);
  ChatTemplate chat(tok, opt.chat);
  const TokenId pad = tok.require_token(opt.chat.eos);
  std::vector<SftSample> samples;
  for (const auto& in : inputs) {
    map_jsonl<SftSample>(
        in, opt.threads,
        [&](const Json& rec, const SourceLocation& where) {
          auto msgs = parse_messages(require_field(rec, "messages", where), where);
          EncodedChat enc;
          try {
            enc = chat.encode(msgs);
          } catch (const Error& e) {
            throw Error(where, e.message());
          }
          return SftSample{std::move(enc.ids), std::move(enc.loss_mask)};
        },
        [&](SftSample&& s) {
          ++st.records;
          bool truncated = false;
          size_t before = s.ids.size();
          if (!truncate_sample(s, opt.seq_len, opt.truncation, truncated)) {
            if (before > opt.seq_len && opt.truncation == Truncation::Drop)
              ++st.dropped_too_long;
            else
              ++st.skipped_empty;
            return;
          }
          st.truncated += truncated;
          samples.push_back(std::move(s));
        });
  }
  std::vector<uint32_t> order(samples.size());
  std::iota(order.begin(), order.end(), 0u);
  if (opt.shuffle) Rng(opt.seed).shuffle(order);
  auto bins = first_fit_pack(samples, order, opt.seq_len, opt.open_bins);
  const uint64_t L = opt.seq_len;

  AtomicFile f(out_dir / "sft.bin");
  SftFileHeader h{};
  std::memcpy(h.magic, "TREXSFT1", 8);
  h.version = 1;
  h.header_bytes = 64;
  h.seq_len = L;
  h.num_sequences = bins.size();
  h.pad_id = pad;
  f.write(std::string_view(reinterpret_cast<const char*>(&h), sizeof h));
  std::vector<int32_t> row(L);
  std::vector<uint8_t> mask_row(L);
  for (int plane = 0; plane < 4; ++plane) {
    for (const auto& bin : bins) {
      size_t at = 0;
      std::fill(row.begin(), row.end(), plane == 0 ? pad : plane == 2 ? -1 : 0);
      std::fill(mask_row.begin(), mask_row.end(), 0);
      for (size_t d = 0; d < bin.size(); ++d) {
        const SftSample& s = samples[bin[d]];
        for (size_t j = 0; j < s.ids.size(); ++j, ++at) {
          if (plane == 0) row[at] = s.ids[j];
          if (plane == 1) row[at] = int32_t(j);
          if (plane == 2) row[at] = int32_t(d);
          if (plane == 3) mask_row[at] = s.loss_mask[j];
        }
      }
      if (plane < 3)
        f.write(std::string_view(reinterpret_cast<const char*>(row.data()), L * 4));
      else
        f.write(std::string_view(reinterpret_cast<const char*>(mask_row.data()), L));
    }
  }
  f.commit();
  for (const auto& s : samples) {
    st.tokens += s.ids.size();
    for (uint8_t m : s.loss_mask) st.target_tokens += m;
  }
  st.documents = samples.size();
  st.sequences = bins.size();
  st.padding_tokens = st.sequences * L - st.tokens;
  st.seconds = timer.seconds();
  Json m{{"format", "trex-sft-packed"},
         {"version", 1},
         {"file", "sft.bin"},
         {"tokenizer_sha256", tok.fingerprint()},
         {"vocab_size", tok.vocab_size()},
         {"seq_len", L},
         {"sequences", st.sequences},
         {"pad_id", pad},
         {"truncation", truncation_name(opt.truncation)},
         {"shuffle", opt.shuffle},
         {"seed", opt.seed},
         {"open_bins", opt.open_bins},
         {"chat_format", opt.chat.to_json()},
         {"sources", sources_json(inputs)},
         {"stats", st.to_json()}};
  write_file_atomic(manifest, m.dump(2) + "\n");
  return st;
}

}  // namespace trex::text
