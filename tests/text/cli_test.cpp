// The trex CLI for the text module: tokenizer train/encode/decode round trip, data pack/inspect,
// and errors (exit status 2, message naming file:line, no dataset left behind).
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>

#include "text_test_util.hpp"

namespace fs = std::filesystem;
using trex::text::testing::temp_path;
using trex::text::testing::write_temp;

namespace {
struct Result {
  int status;
  std::string out;
};
Result run(const std::string& args) {
  std::string cmd = std::string(TREX_BIN_PATH) + " -q " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  Result r{-1, ""};
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}
}  // namespace

TEST(TextCli, TrainEncodeDecodePackInspect) {
  fs::path corpus = temp_path("cli_corpus.jsonl"), tok = temp_path("cli_tokenizer.json");
  ASSERT_EQ(run("tokenizer corpus --bytes 200000 --seed 3 -o " + corpus.string()).status, 0);
  Result tr = run("tokenizer train -i " + corpus.string() + " -o " + tok.string() + " --vocab-size 800 --json");
  ASSERT_EQ(tr.status, 0) << tr.out;
  EXPECT_NE(tr.out.find("\"vocab_size\":800"), std::string::npos) << tr.out;
  Result en = run("tokenizer encode -t " + tok.string() + " --text 'Minimize 3 x1 + 25 x2 运筹学'");
  ASSERT_EQ(en.status, 0) << en.out;
  Result de = run("tokenizer decode -t " + tok.string() + " --ids '" + en.out.substr(0, en.out.size() - 1) + "'");
  ASSERT_EQ(de.status, 0) << de.out;
  EXPECT_EQ(de.out, "Minimize 3 x1 + 25 x2 运筹学");

  auto sft = write_temp("cli_sft.jsonl",
                        "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"},{\"role\":\"assistant\",\"content\":\"Hello\"}]}\n");
  fs::path out = temp_path("cli_sft_out");
  Result pk = run("data pack --mode sft -t " + tok.string() + " -i " + sft.string() + " -o " + out.string() + " --seq-len 32 --json");
  ASSERT_EQ(pk.status, 0) << pk.out;
  Result in = run("data inspect " + out.string() + " --index 0 -t " + tok.string());
  ASSERT_EQ(in.status, 0) << in.out;
  EXPECT_NE(in.out.find("<｜Assistant｜></think>⟦Hello<｜end▁of▁sentence｜>⟧"), std::string::npos) << in.out;

  auto bad = write_temp("cli_bad.jsonl", "{\"messages\":[]}\n{oops\n");
  Result err = run("data pack --mode sft -t " + tok.string() + " -i " + bad.string() + " -o " + out.string());
  EXPECT_EQ(err.status, 2);
  EXPECT_NE(err.out.find("cli_bad.jsonl:1"), std::string::npos) << err.out;
  EXPECT_FALSE(fs::exists(out / "sft.json"));
  Result bad_ids = run("tokenizer decode -t " + tok.string() + " --ids '1 x'");
  EXPECT_EQ(bad_ids.status, 2);
  EXPECT_NE(bad_ids.out.find("'x'"), std::string::npos) << bad_ids.out;
  fs::remove_all(out);
}
