// Packing: SFT sequences never let one sample attend to another, only assistant tokens carry loss,
// truncation policies, determinism, CPT shards keep documents; bad input names the line and leaves
// no dataset behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "text/data_pack.hpp"
#include "text/datasets.hpp"
#include "text_test_util.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"

using namespace trex::text;
using trex::text::testing::small_tokenizer;
using trex::text::testing::temp_path;
using trex::text::testing::write_temp;
namespace fs = std::filesystem;

namespace {

// n conversations with numbered, varied lengths; user text starts with "Q<i>", answers with "A<i>".
std::string sft_jsonl(int n, uint64_t seed) {
  trex::Rng rng(seed);
  std::string out;
  for (int i = 0; i < n; ++i) {
    std::string q = "Q" + std::to_string(i) + std::string(size_t(rng.uniform_int(1, 60)), 'q');
    std::string a = "A" + std::to_string(i) + std::string(size_t(rng.uniform_int(1, 60)), ' ');
    trex::Json msgs = trex::Json::array({{{"role", "user"}, {"content", q}}, {{"role", "assistant"}, {"content", a}}});
    if (i % 3 == 0) msgs[1]["reasoning_content"] = "think " + std::to_string(i);
    out += trex::Json{{"messages", msgs}}.dump() + "\n";
  }
  return out;
}

struct Seq {
  std::vector<int32_t> tokens, pos, doc;
  std::vector<uint8_t> mask;
};
Seq read_seq(const SequenceDataset& d, uint64_t i) {
  Seq s;
  size_t L = d.seq_len();
  s.tokens.resize(L), s.pos.resize(L), s.doc.resize(L), s.mask.resize(L);
  d.read(i, SequenceView{s.tokens.data(), s.pos.data(), s.doc.data(), s.mask.data()});
  return s;
}

}  // namespace

TEST(SftPack, SamplesNeverShareADocumentAndOnlyAnswersCarryLoss) {
  const Tokenizer& tok = small_tokenizer();
  auto in = write_temp("sft_in.jsonl", sft_jsonl(120, 1));
  fs::path out = temp_path("sft_out");
  SftPackOptions opt;
  opt.seq_len = 160;
  opt.truncation = Truncation::Drop;
  PackStats st = pack_sft(tok, {in}, out, opt);
  EXPECT_EQ(st.records, 120u);
  EXPECT_EQ(st.documents + st.dropped_too_long, 120u);
  SftDataset d(out);
  ASSERT_EQ(d.size(), st.sequences);
  std::set<std::string> seen;
  const TokenId bos = tok.require_token(tokens::kBos), asst = tok.require_token(tokens::kAssistant);
  for (uint64_t i = 0; i < d.size(); ++i) {
    Seq s = read_seq(d, i);
    for (size_t t = 0; t < s.tokens.size(); ++t) {
      if (s.doc[t] < 0) {  // padding: at the end, never a target
        EXPECT_EQ(s.mask[t], 0);
        for (size_t u = t; u < s.tokens.size(); ++u) EXPECT_LT(s.doc[u], 0);
        break;
      }
      bool starts = t == 0 || s.doc[t] != s.doc[t - 1];
      if (starts) {
        EXPECT_EQ(s.pos[t], 0);
        EXPECT_EQ(s.tokens[t], bos) << "every sample starts with BOS";
        if (t) {
          EXPECT_EQ(s.doc[t], s.doc[t - 1] + 1);
        }
      } else {
        EXPECT_EQ(s.pos[t], s.pos[t - 1] + 1);
      }
    }
    // Decode each document separately: exactly one conversation per document id, and the targets
    // are precisely its answer tokens (+ reasoning) + EOS.
    for (int32_t doc = 0;; ++doc) {
      std::vector<TokenId> ids, targets;
      size_t first_asst = SIZE_MAX;
      for (size_t t = 0; t < s.tokens.size(); ++t)
        if (s.doc[t] == doc) {
          if (s.tokens[t] == asst && first_asst == SIZE_MAX) first_asst = ids.size();
          if (s.mask[t]) {
            targets.push_back(s.tokens[t]);
            EXPECT_GT(ids.size(), first_asst) << "target before the assistant turn";
          }
          ids.push_back(s.tokens[t]);
        }
      if (ids.empty()) break;
      std::string text = tok.decode(ids);
      size_t q = text.find("<｜User｜>Q");
      ASSERT_NE(q, std::string::npos) << text;
      EXPECT_EQ(text.find("<｜User｜>", q + 1), std::string::npos) << "two samples in one document: " << text;
      std::string number = text.substr(q + std::string("<｜User｜>Q").size());
      number = number.substr(0, number.find('q'));
      EXPECT_TRUE(seen.insert(number).second) << "sample " << number << " packed twice";
      std::string target_text = tok.decode(targets);
      EXPECT_EQ(target_text.rfind("A" + number, 0) == 0 || target_text.rfind("think " + number, 0) == 0, true) << target_text;
      EXPECT_EQ(target_text.substr(target_text.size() - std::string(tokens::kEos).size()), tokens::kEos);
    }
  }
  EXPECT_EQ(seen.size(), st.documents);
  fs::remove_all(out);
}

TEST(SftPack, SameSeedSameBytesAndSeedChangesOrder) {
  const Tokenizer& tok = small_tokenizer();
  auto in = write_temp("sft_det.jsonl", sft_jsonl(60, 2));
  SftPackOptions opt;
  opt.seq_len = 256;
  opt.threads = 2;
  pack_sft(tok, {in}, temp_path("sft_det_a"), opt);
  opt.threads = 1;
  pack_sft(tok, {in}, temp_path("sft_det_b"), opt);
  opt.seed = 99;
  pack_sft(tok, {in}, temp_path("sft_det_c"), opt);
  auto a = trex::read_file(temp_path("sft_det_a") / "sft.bin"), b = trex::read_file(temp_path("sft_det_b") / "sft.bin"),
       c = trex::read_file(temp_path("sft_det_c") / "sft.bin");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (auto n : {"sft_det_a", "sft_det_b", "sft_det_c"}) fs::remove_all(temp_path(n));
}

TEST(SftPack, TruncationPolicies) {
  SftSample s{{1, 2, 3, 4, 5, 6}, {0, 0, 0, 1, 1, 1}};
  bool truncated = false;
  SftSample right = s, left = s, drop = s;
  EXPECT_FALSE(truncate_sample(drop, 4, Truncation::Drop, truncated));
  EXPECT_FALSE(truncate_sample(right, 3, Truncation::Right, truncated)) << "no target left";
  right = s;
  EXPECT_TRUE(truncate_sample(right, 4, Truncation::Right, truncated));
  EXPECT_TRUE(truncated);
  EXPECT_EQ(right.ids, (std::vector<TokenId>{1, 2, 3, 4}));
  EXPECT_TRUE(truncate_sample(left, 4, Truncation::Left, truncated));
  EXPECT_EQ(left.ids, (std::vector<TokenId>{3, 4, 5, 6}));
  EXPECT_EQ(left.loss_mask, (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_THROW(parse_truncation("middle"), trex::Error);
}

TEST(SftPack, FirstFitNeverOverfills) {
  std::vector<SftSample> samples;
  trex::Rng rng(5);
  for (int i = 0; i < 500; ++i) samples.push_back(SftSample{std::vector<TokenId>(size_t(rng.uniform_int(1, 100)), 1), {}});
  std::vector<uint32_t> order(samples.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  auto bins = first_fit_pack(samples, order, 128, 8);
  std::vector<int> used(samples.size(), 0);
  for (auto& b : bins) {
    size_t n = 0;
    for (uint32_t s : b) n += samples[s].ids.size(), ++used[s];
    EXPECT_LE(n, 128u);
  }
  for (int u : used) EXPECT_EQ(u, 1);
}

TEST(SftPack, BadInputNamesTheLineAndLeavesNoDataset) {
  const Tokenizer& tok = small_tokenizer();
  fs::path out = temp_path("sft_bad");
  SftPackOptions opt;
  opt.seq_len = 128;
  pack_sft(tok, {write_temp("sft_good.jsonl", sft_jsonl(5, 3))}, out, opt);
  ASSERT_TRUE(fs::exists(out / "sft.json"));
  auto expect_line = [&](const std::string& content, const std::string& needle) {
    auto in = write_temp("sft_bad.jsonl", content);
    try {
      pack_sft(tok, {in}, out, opt);
      ADD_FAILURE() << needle;
    } catch (const trex::Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(out / "sft.json")) << "a failed pack must not leave a dataset";
  };
  std::string good = sft_jsonl(2, 4);
  expect_line(good + "{\"messages\": [\n", "sft_bad.jsonl:3");
  expect_line(good + "{\"msgs\": []}\n", "sft_bad.jsonl:3: missing field 'messages'");
  expect_line(good + "\n{\"messages\": [{\"role\":\"user\",\"content\":\"\xC3\x28\"}]}\n", "sft_bad.jsonl:4");
  expect_line("{\"messages\": [{\"role\":\"user\",\"content\":\"no answer\"}]}\n", "sft_bad.jsonl:1");
  fs::remove_all(out);
}

TEST(CptPack, ShardsKeepDocumentsAndWindowsRestartPositions) {
  const Tokenizer& tok = small_tokenizer();
  std::string jsonl;
  auto docs = synthetic_corpus(21, 60000);
  for (auto& d : docs) jsonl += trex::Json{{"text", d}}.dump() + "\n";
  jsonl += "{\"text\": \"\"}\n";
  auto in = write_temp("cpt_in.jsonl", jsonl);
  fs::path out = temp_path("cpt_out");
  CptPackOptions opt;
  opt.shard_tokens = 4000;  // several shards
  PackStats st = pack_cpt(tok, {in}, out, opt);
  EXPECT_EQ(st.documents, docs.size());
  EXPECT_EQ(st.skipped_empty, 1u);
  EXPECT_GT(st.shards, 2u);
  // Every document is BOS + text + EOS, whole, in exactly one shard.
  std::multiset<std::string> want(docs.begin(), docs.end()), got;
  const TokenId bos = tok.require_token(tokens::kBos), eos = tok.require_token(tokens::kEos);
  for (uint64_t s = 0; s < st.shards; ++s) {
    char name[32];
    std::snprintf(name, sizeof name, "cpt_%05llu", static_cast<unsigned long long>(s));
    ShardReader r(out / name);
    EXPECT_EQ(r.dtype(), TokenDtype::UInt16);
    for (uint64_t d = 0; d < r.documents(); ++d) {
      auto ids = r.document(d);
      ASSERT_GE(ids.size(), 2u);
      EXPECT_EQ(ids.front(), bos);
      EXPECT_EQ(ids.back(), eos);
      got.insert(tok.decode(std::span<const TokenId>(ids).subspan(1, ids.size() - 2)));
    }
  }
  EXPECT_EQ(got, want);
  CptDataset data(out, 100);
  EXPECT_EQ(data.size(), st.tokens / 100);
  for (uint64_t w = 0; w < data.size(); ++w) {
    Seq s = read_seq(data, w);
    for (size_t t = 0; t < 100; ++t) {
      EXPECT_EQ(s.mask[t], 1);
      if (s.tokens[t] == bos) {
        EXPECT_EQ(s.pos[t], 0);
        if (t) {
          EXPECT_EQ(s.doc[t], s.doc[t - 1] + 1);
        }
      } else if (t) {
        EXPECT_EQ(s.pos[t], s.pos[t - 1] + 1);
        EXPECT_EQ(s.doc[t], s.doc[t - 1]);
      }
    }
  }
  fs::remove_all(out);
}

TEST(TokenShards, CorruptFilesAreErrors) {
  fs::path prefix = temp_path("shard_corrupt");
  ShardWriter w(prefix, TokenDtype::Int32);
  std::vector<TokenId> doc{5, 6, 7};
  w.add_document(doc);
  w.commit();
  EXPECT_EQ(ShardReader(prefix).document(0), doc);
  std::string bin = trex::read_file(prefix.string() + ".bin");
  trex::write_file_atomic(prefix.string() + ".bin", bin.substr(0, 8));
  EXPECT_THROW(ShardReader r(prefix), trex::Error);
  trex::write_file_atomic(prefix.string() + ".idx", "garbage");
  EXPECT_THROW(ShardReader r(prefix), trex::Error);
  ShardWriter small(temp_path("shard_small"), TokenDtype::UInt16);
  std::vector<TokenId> big{70000};
  EXPECT_THROW(small.add_document(big), trex::Error);
  EXPECT_THROW(open_dataset(temp_path("no_such_dataset"), 16), trex::Error);
}
