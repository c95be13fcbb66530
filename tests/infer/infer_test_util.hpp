// Test helpers for src/infer: a small random-init checkpoint folder (model.safetensors + config.json +
// tokenizer.json) and a subprocess runner for the trex executable.
#pragma once
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "model/checkpoint.hpp"
#include "model/model.hpp"
#include "text/bpe_trainer.hpp"
#include "text/synthetic_corpus.hpp"

namespace trex::infer::testing {

// A model small enough for fast CPU tests that still has SWA, CSA (ratio 4) and HCA (ratio 8) layers,
// window 8, a hash layer and MTP.
inline model::ModelConfig micro_config() {
  auto c = model::ModelConfig::preset("tiny");
  c.vocab_size = 384;
  c.hidden_size = 64;
  c.num_hidden_layers = 4;
  c.compress_ratios = model::layer_pattern(4, 1, 0, 8, 1);  // [0,4,8,4] + [0]
  c.num_attention_heads = 2;
  c.head_dim = 32;
  c.qk_rope_head_dim = 16;
  c.q_lora_rank = 32;
  c.o_groups = 2;
  c.o_lora_rank = 16;
  c.sliding_window = 8;
  c.index_n_heads = 2;
  c.index_head_dim = 32;
  c.index_topk = 4;
  c.n_routed_experts = 4;
  c.num_experts_per_tok = 2;
  c.moe_intermediate_size = 64;
  c.num_hash_layers = 1;
  c.init_std = 0.2;  // large weights so greedy output depends on the prompt
  c.validate("micro_config");
  return c;
}

// Writes dir/{model.safetensors, config.json, tokenizer.json} once per process.
inline std::filesystem::path micro_checkpoint() {
  static std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("trex_infer_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    static const std::filesystem::path cleanup = d;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(cleanup, ec);
    });
    auto cfg = micro_config();
    model::Model m(cfg);
    m.init(7);
    model::save_weights(d, m.store(), cfg);
    text::BpeTrainerOptions o;
    o.vocab_size = size_t(cfg.vocab_size);
    o.threads = 1;
    text::BpeTrainer tr(o);
    tr.add_texts(text::synthetic_corpus(3, 40000));
    tr.train().save(d / "tokenizer.json");
    return d;
  }();
  return dir;
}

struct ProcResult {
  int status = -1;
  std::string out;
};

// Runs the trex executable with `args`, capturing stdout (stderr passes through).
inline ProcResult run_trex(const std::vector<std::string>& args) {
  std::string cmd = std::string(TREX_BIN_PATH);
  for (const auto& a : args) {
    cmd += " '";
    for (char ch : a) cmd += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    cmd += "'";
  }
  ProcResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// `trex serve` as a child process on a free port; the port is read from its first stdout line.
class ServerProcess {
 public:
  explicit ServerProcess(const std::vector<std::string>& extra) {
    int fds[2];
    if (::pipe(fds) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], 1);
      ::close(fds[0]);
      ::close(fds[1]);
      std::vector<std::string> args = {TREX_BIN_PATH, "serve", "--port", "0"};
      args.insert(args.end(), extra.begin(), extra.end());
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    std::string line;
    char ch;
    while (::read(fds[0], &ch, 1) == 1 && ch != '\n') line += ch;
    ::close(fds[0]);
    auto at = line.rfind(':');
    auto slash = line.find("/v1", at == std::string::npos ? 0 : at);
    if (at != std::string::npos && slash != std::string::npos) port_ = std::stoi(line.substr(at + 1, slash - at - 1));
    first_line_ = line;
  }
  ~ServerProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int st;
      ::waitpid(pid_, &st, 0);
    }
  }
  int port() const { return port_; }
  const std::string& first_line() const { return first_line_; }

 private:
  pid_t pid_ = -1;
  int port_ = -1;
  std::string first_line_;
};

}  // namespace trex::infer::testing
