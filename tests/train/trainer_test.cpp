// `trex train` on the tiny preset: the loss falls on a small OR corpus; a run SIGKILLed after a checkpoint
// and resumed gives bit-identical losses and weights; a kill during a checkpoint write leaves the previous
// checkpoint loadable; a non-finite gradient stops with a clear error and an intact checkpoint; SFT with a
// frozen router leaves the router untouched; the dense indexer warm-up trains only the indexer; bad options
// fail before anything is written; checkpoints carry their tokenizer; a folder in transformers' layout generates
// and initialises training; the trainer's device branch (TrainOptions::device_step, what --device cuda takes),
// driven by the CPU device step, writes the CPU path's bytes, and checkpoints resume across the two branches.
#include <gtest/gtest.h>

#include "cpu_features.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "model/checkpoint.hpp"
#include "model/checkpoint_hf.hpp"
#include "model/safetensors.hpp"
#include "model/config.hpp"
#include "model/params.hpp"
#include "nn/gemm_bf16.hpp"
#include "train/cpu_device_step.hpp"
#include "train/train_checkpoint.hpp"
#include "train/trainer.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/jsonl.hpp"

namespace fs = std::filesystem;
using trex::Json;

namespace {

const std::string kTrex = TREX_BIN_PATH;

void sh(const std::string& cmd) {
  int rc = std::system((cmd + " >/dev/null 2>&1").c_str());
  ASSERT_EQ(rc, 0) << "command failed: " << cmd;
}

}  // namespace

// A per-test folder with a synthetic OR corpus, a byte-level BPE tokenizer trained on it, and CPT data. (Outside
// the anonymous namespace: the TEST_F classes derive from it, which GCC flags once the unity build includes this
// file into another.)
class TrainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("trex_train_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
           std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    sh(kTrex + " tokenizer corpus --bytes 120000 --seed 7 -o " + (dir / "corpus.jsonl").string());
    sh(kTrex + " tokenizer train -i " + (dir / "corpus.jsonl").string() + " -o " + (dir / "tok.json").string() +
       " --vocab-size 512 --threads 1");
    sh(kTrex + " data pack --mode cpt -t " + (dir / "tok.json").string() + " -i " + (dir / "corpus.jsonl").string() +
       " -o " + (dir / "cpt").string() + " --threads 1");
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir);
  }

  trex::train::TrainOptions base(const std::string& out) const {
    trex::train::TrainOptions o;
    o.config = "tiny";
    o.data = dir / "cpt";
    o.mode = "cpt";
    o.out = dir / out;
    o.seq_len = 32;
    o.micro_batch = 2;
    o.lr = 3e-3;
    o.warmup = 2;
    o.progress = false;
    return o;
  }
  std::string cli(const std::string& out, int steps, const std::string& extra = "") const {
    return kTrex + " train --config tiny --data " + (dir / "cpt").string() + " --mode cpt --out " +
           (dir / out).string() + " --seq-len 32 --micro-batch 2 --lr 3e-3 --warmup 2 --quiet --steps " +
           std::to_string(steps) + " " + extra;
  }

  fs::path dir;
};

namespace {

std::vector<Json> read_metrics(const fs::path& p) {
  std::vector<Json> out;
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(Json::parse(line));
  return out;
}

std::string latest_name(const fs::path& out) {
  if (!fs::exists(out / "latest")) return "";
  std::string s = trex::read_file(out / "latest");
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

// Starts `cmd` through /bin/sh -c with exec, so the pid is trex's own.
pid_t spawn(const std::string& cmd) {
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + cmd + " >/dev/null 2>&1").c_str(), (char*)nullptr);
    _exit(127);
  }
  return pid;
}

void kill_when(pid_t pid, const std::function<bool()>& ready, double timeout_s) {
  auto t0 = std::chrono::steady_clock::now();
  while (!ready()) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, WNOHANG), 0) << "trex exited before the kill point";
    ASSERT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), timeout_s)
        << "kill point not reached in time";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

const char* kLossKeys[] = {"loss", "lm_loss", "mtp_loss", "indexer_loss", "balance_loss", "grad_norm", "lr"};

}  // namespace

TEST_F(TrainTest, TinyLossFallsOnOrCorpus) {
  auto o = base("run");
  o.steps = 40;
  o.micro_batch = 4;
  Json s = trex::train::train(o);
  auto m = read_metrics(o.out / "metrics.jsonl");
  ASSERT_EQ(m.size(), 40u);
  double first = m[0]["lm_loss"], tail = 0;
  for (size_t i = 35; i < 40; ++i) tail += m[i]["lm_loss"].get<double>() / 5;
  std::printf("tiny CPT: LM loss %.3f -> %.3f (mean of last 5 steps), ln(8192) = %.3f\n", first, tail,
              std::log(8192.0));
  EXPECT_NEAR(first, std::log(8192.0), 0.5);  // starts near uniform over the vocabulary
  EXPECT_LT(tail, first - 3.0);               // and falls clearly
  for (auto& r : m) {
    EXPECT_GT(r["tflops"].get<double>(), 0);
    EXPECT_GE(r["expert_load_max_mean"].get<double>(), 1.0);
    EXPECT_EQ(r["expert_load_max_mean_per_block"].size(), 7u);  // 6 layers + MTP
  }
  // The checkpoint loads into a fresh store.
  trex::model::ParamStore store(trex::model::ModelConfig::preset("tiny"));
  auto ckpt = trex::train::latest_checkpoint(o.out);
  ASSERT_TRUE(ckpt);
  EXPECT_EQ(ckpt->filename().string(), "step-00000040");
  trex::model::load_weights(*ckpt, store);
}

TEST_F(TrainTest, SigkillAndResumeIsBitExact) {
  const int steps = 7;
  // Uninterrupted reference.
  sh(cli("ref", steps, "--save-every 2"));
  // Killed right after the step-4 checkpoint is in place (steps 5.. may be running), then resumed.
  pid_t pid = spawn(cli("killed", steps, "--save-every 2"));
  kill_when(pid, [&] { return latest_name(dir / "killed") == "step-00000004"; }, 300);
  ASSERT_FALSE(HasFatalFailure());
  sh(cli("killed", steps, "--save-every 2 --resume"));

  auto a = read_metrics(dir / "ref" / "metrics.jsonl"), b = read_metrics(dir / "killed" / "metrics.jsonl");
  ASSERT_EQ(a.size(), size_t(steps));
  ASSERT_EQ(b.size(), size_t(steps));
  for (int i = 0; i < steps; ++i) {
    EXPECT_EQ(b[i]["step"], i + 1);
    for (const char* k : kLossKeys)
      EXPECT_EQ(a[i][k].get<double>(), b[i][k].get<double>()) << "step " << i + 1 << " " << k;  // bit for bit
  }
  // Final weights and optimizer state identical byte for byte.
  for (const char* f : {"model.safetensors", "optimizer/optimizer.safetensors"})
    EXPECT_TRUE(trex::read_file(dir / "ref" / "step-00000007" / f) == trex::read_file(dir / "killed" / "step-00000007" / f))
        << f;
  // --keep 2 (default): only the two newest step folders remain.
  EXPECT_FALSE(fs::exists(dir / "killed" / "step-00000004"));
  EXPECT_TRUE(fs::exists(dir / "killed" / "step-00000006"));
}

TEST_F(TrainTest, KillDuringCheckpointWriteKeepsPreviousCheckpoint) {
  pid_t pid = spawn(cli("run", 6, "--save-every 2 --checkpoint-pause-ms 3000"));
  kill_when(pid, [&] { return fs::exists(dir / "run" / ".tmp-step-00000004" / "model.safetensors"); }, 300);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(latest_name(dir / "run"), "step-00000002");
  auto ckpt = trex::train::latest_checkpoint(dir / "run");
  ASSERT_TRUE(ckpt);
  trex::model::ParamStore store(trex::model::ModelConfig::preset("tiny"));
  trex::model::load_weights(*ckpt, store);
  // A resume discards the partial folder and finishes.
  sh(cli("run", 6, "--save-every 2 --resume"));
  EXPECT_FALSE(fs::exists(dir / "run" / ".tmp-step-00000004"));
  EXPECT_EQ(latest_name(dir / "run"), "step-00000006");
  EXPECT_EQ(read_metrics(dir / "run" / "metrics.jsonl").size(), 6u);
}

TEST_F(TrainTest, NonFiniteGradientStopsAndKeepsCheckpoint) {
  auto o = base("run");
  o.steps = 5;
  o.save_every = 2;
  o.inject_nan_step = 3;
  try {
    trex::train::train(o);
    FAIL() << "expected an error";
  } catch (const trex::Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("non-finite gradient at step 3"), std::string::npos) << msg;
    EXPECT_NE(msg.find("step-00000002"), std::string::npos) << msg;
  }
  EXPECT_EQ(latest_name(o.out), "step-00000002");
  trex::model::ParamStore store(trex::model::ModelConfig::preset("tiny"));
  trex::model::load_weights(*trex::train::latest_checkpoint(o.out), store);
}

TEST_F(TrainTest, SftFromCheckpointWithFrozenRouter) {
  // Conversations in OpenAI messages format, packed with loss masks on assistant turns.
  {
    std::ofstream f(dir / "sft.jsonl");
    for (int i = 0; i < 40; ++i)
      f << Json{{"messages",
                 {{{"role", "user"}, {"content", "Minimize x + " + std::to_string(i) + " y subject to x + y >= 1."}},
                  {{"role", "assistant"}, {"content", "Set y = 0 and x = 1; the optimum is 1."}}}}}
               .dump()
        << "\n";
  }
  sh(kTrex + " data pack --mode sft -t " + (dir / "tok.json").string() + " -i " + (dir / "sft.jsonl").string() +
     " -o " + (dir / "sftdata").string() + " --seq-len 64 --truncate right --threads 1");
  auto c = base("cpt_run");
  c.steps = 2;
  trex::train::train(c);
  auto init = trex::train::latest_checkpoint(c.out);
  ASSERT_TRUE(init);

  trex::train::TrainOptions o = base("sft_run");
  o.config.clear();  // the config comes from --init
  o.mode = "sft";
  o.data = dir / "sftdata";
  o.seq_len = 0;
  o.init = *init;
  o.steps = 3;
  o.freeze_router = true;
  Json s = trex::train::train(o);
  EXPECT_TRUE(std::isfinite(s["last_loss"].get<double>()));

  auto cfg = trex::model::ModelConfig::preset("tiny");
  trex::model::ParamStore before(cfg), after(cfg);
  trex::model::load_weights(*init, before);
  trex::model::load_weights(*trex::train::latest_checkpoint(o.out), after);
  int router = 0, changed = 0;
  for (auto& p : before.table()) {
    bool same = std::equal(before.params().begin() + p.offset, before.params().begin() + p.offset + p.numel,
                           after.params().begin() + p.offset);
    bool is_router = p.name.find("ffn.gate.weight") != std::string::npos ||
                     p.name.find("ffn.gate.bias") != std::string::npos;
    if (is_router) {
      ++router;
      EXPECT_TRUE(same) << p.name << " changed with --freeze-router";
    } else if (!same) {
      ++changed;
    }
  }
  EXPECT_GT(router, 0);
  EXPECT_GT(changed, 20);
}

TEST_F(TrainTest, BadOptionsFailBeforeWriting) {
  auto o = base("never");
  o.data = dir / "missing";
  EXPECT_THROW(trex::train::train(o), trex::Error);
  o = base("never");
  o.mode = "sft";  // CPT data with --mode sft, and no --init
  EXPECT_THROW(trex::train::train(o), trex::Error);
  o = base("never");
  o.micro_batch = 0;
  EXPECT_THROW(trex::train::train(o), trex::Error);
  o = base("never");
  o.config = "nonexistent-preset";
  EXPECT_THROW(trex::train::train(o), trex::Error);
  EXPECT_FALSE(fs::exists(dir / "never"));
  // An existing run is not overwritten without --resume.
  o = base("done");
  o.steps = 1;
  trex::train::train(o);
  EXPECT_THROW(trex::train::train(o), trex::Error);
  // The CLI reports errors as "error: ..." with a non-zero status.
  int rc = std::system((kTrex + " train --mode cpt --data " + (dir / "missing").string() + " --out " +
                        (dir / "never").string() + " >/dev/null 2>&1").c_str());
  EXPECT_NE(rc, 0);
  EXPECT_FALSE(fs::exists(dir / "never"));
}

// --tokenizer names the tokenizer a checkpoint carries (a whole Hugging Face folder, docs/huggingface.md) when it
// lies nowhere the trainer looks; one the data was not packed with is refused before anything is written.
TEST_F(TrainTest, TokenizerOptionPutsTheTokenizerInEveryCheckpoint) {
  sh(cli("with_tok", 1, "--tokenizer " + (dir / "tok.json").string()));
  const fs::path ck = dir / "with_tok" / latest_name(dir / "with_tok");
  EXPECT_EQ(trex::read_file(ck / "tokenizer.json"), trex::read_file(dir / "tok.json"));
  EXPECT_TRUE(fs::exists(ck / "tokenizer_config.json"));
  sh(cli("without", 1));  // tok.json is not named tokenizer.json: not found, the checkpoint has none
  EXPECT_FALSE(fs::exists(dir / "without" / latest_name(dir / "without") / "tokenizer.json"));

  sh(kTrex + " tokenizer train -i " + (dir / "corpus.jsonl").string() + " -o " + (dir / "other.json").string() +
     " --vocab-size 300 --threads 1");
  auto o = base("wrong_tok");
  o.steps = 1;
  o.tokenizer = dir / "other.json";
  try {
    trex::train::train(o);
    ADD_FAILURE() << "a tokenizer the data was not packed with was accepted";
  } catch (const trex::Error& e) {
    EXPECT_NE(std::string(e.what()).find("is not the tokenizer"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "wrong_tok"));
}

// Import (issue #22 point 2): a checkpoint rewritten the way transformers' save_pretrained writes it (its module
// names, no MTP tensors) serves `trex generate` exactly as the original (MTP is not used there) and is a valid
// `trex train --init`, which reports the absent MTP module (initialised from --seed) and keeps the tokenizer.
TEST_F(TrainTest, TransformersLayoutFolderServesGenerateAndTrainInit) {
  sh(cli("src", 2, "--tokenizer " + (dir / "tok.json").string()));
  const fs::path src = dir / "src" / latest_name(dir / "src"), hf = dir / "hf";
  const auto cfg = trex::model::ModelConfig::from_hf_json(src / "config.json");
  trex::model::ParamStore store(cfg);
  trex::model::load_weights(src, store);
  std::vector<trex::model::TensorToWrite> ts;
  for (const auto& p : store.table()) {
    if (p.name.starts_with("mtp.")) continue;  // transformers builds no MTP module
    std::string k = trex::model::hf_module_key(p.name);
    if (k == "lm_head.weight") k = "head.weight";  // as save_pretrained writes it
    ts.push_back({k, trex::model::DType::F32, p.shape,
                  std::as_bytes(store.params().subspan(size_t(p.offset), size_t(p.numel)))});
  }
  for (const auto& p : store.int_table())
    ts.push_back({trex::model::hf_module_key(p.name), trex::model::DType::I64, p.shape,
                  std::as_bytes(store.int_params().subspan(size_t(p.offset), size_t(p.numel)))});
  fs::create_directories(hf);
  trex::model::write_safetensors(hf / "model.safetensors", ts);
  for (const char* f : {"config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json"})
    fs::copy_file(src / f, hf / f);

  auto generate = [&](const fs::path& ckpt) {
    const fs::path out = dir / ("gen_" + ckpt.filename().string() + ".txt");
    const std::string cmd = kTrex + " generate --ckpt " + ckpt.string() +
                            " --prompt 'Minimize the total cost' --max-tokens 12 --temperature 0 --logprobs 2 > " +
                            out.string() + " 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << trex::read_file(out);
    return trex::read_file(out);
  };
  const std::string a = generate(src), b = generate(hf);
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);

  const fs::path log = dir / "init_hf.log";
  ASSERT_EQ(std::system((cli("cont", 1, "--init " + hf.string()) + " 2>" + log.string()).c_str()), 0)
      << trex::read_file(log);
  EXPECT_NE(trex::read_file(log).find("MTP absent"), std::string::npos) << trex::read_file(log);
  EXPECT_TRUE(fs::exists(dir / "cont" / latest_name(dir / "cont") / "tokenizer.json"));
}

// Dense indexer warm-up: from a CPT checkpoint, --indexer-warmup updates the lightning indexers' tensors only
// (dense CSA attention, KL over every visible entry), reports a positive indexer loss, and leaves every other
// tensor (gate biases included) bit-identical.
TEST_F(TrainTest, IndexerWarmupUpdatesOnlyTheIndexer) {
  auto c = base("cpt_run");
  c.steps = 1;
  trex::train::train(c);
  auto init = trex::train::latest_checkpoint(c.out);
  ASSERT_TRUE(init);
  trex::train::TrainOptions o = base("warmup_run");
  o.config.clear();
  o.init = *init;
  o.steps = 2;
  o.indexer_warmup = true;
  trex::train::train(o);
  auto m = read_metrics(o.out / "metrics.jsonl");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_GT(m[0]["indexer_loss"].get<double>(), 0.0);

  auto cfg = trex::model::ModelConfig::preset("tiny");
  trex::model::ParamStore before(cfg), after(cfg);
  trex::model::load_weights(*init, before);
  trex::model::load_weights(*trex::train::latest_checkpoint(o.out), after);
  int indexer_changed = 0, indexer_tensors = 0;
  for (auto& p : before.table()) {
    const bool same = std::equal(before.params().begin() + p.offset, before.params().begin() + p.offset + p.numel,
                                 after.params().begin() + p.offset);
    if (p.name.find(".attn.indexer.") != std::string::npos) {
      ++indexer_tensors;
      indexer_changed += !same;
    } else {
      EXPECT_TRUE(same) << p.name << " changed during the indexer warm-up";
    }
  }
  EXPECT_GT(indexer_tensors, 0);
  EXPECT_GT(indexer_changed, 0) << "the indexer did not learn";
}

// --matmul bf16 (AVX512_BF16 operands, fp32 accumulation): two runs give the same losses bit for bit, they stay
// close to the fp32 run (bf16 rounding of the GEMM operands only), and resuming with another --matmul is refused.
TEST_F(TrainTest, Bf16MatmulIsDeterministicAndCloseToFp32) {
  TREX_REQUIRE_BF16();
  const int steps = 4;
  sh(cli("fp32", steps));
  sh(cli("bf16_a", steps, "--matmul bf16"));
  sh(cli("bf16_b", steps, "--matmul bf16"));
  auto f = read_metrics(dir / "fp32" / "metrics.jsonl"), a = read_metrics(dir / "bf16_a" / "metrics.jsonl"),
       b = read_metrics(dir / "bf16_b" / "metrics.jsonl");
  ASSERT_EQ(a.size(), size_t(steps));
  ASSERT_EQ(b.size(), size_t(steps));
  ASSERT_EQ(f.size(), size_t(steps));
  bool differs_from_fp32 = false;
  for (int i = 0; i < steps; ++i)
    for (const char* k : kLossKeys) {
      EXPECT_EQ(a[i][k].get<double>(), b[i][k].get<double>()) << "step " << i + 1 << " " << k;
      const double x = a[i][k].get<double>(), y = f[i][k].get<double>();
      if (std::string(k) == "loss" || std::string(k) == "lm_loss") {
        EXPECT_NEAR(x, y, 0.02 * std::fabs(y)) << "step " << i + 1 << " " << k;
      }
      differs_from_fp32 = differs_from_fp32 || x != y;
    }
  EXPECT_TRUE(differs_from_fp32) << "--matmul bf16 gave the fp32 losses bit for bit: the flag did nothing";
  EXPECT_TRUE(trex::read_file(dir / "bf16_a" / "step-00000004" / "model.safetensors") ==
              trex::read_file(dir / "bf16_b" / "step-00000004" / "model.safetensors"));
  // The precision is part of the resume identity.
  int rc = std::system((cli("bf16_a", steps + 1, "--resume") + " >/dev/null 2>&1").c_str());
  EXPECT_NE(rc, 0) << "resuming a bf16 run in fp32 must be refused";
}

// The device branch of the trainer (what `--device cuda` runs through) driven by the CPU device step, which makes
// exactly the CPU path's calls: the same metrics and checkpoint bytes, with clipping active, under AdamW and Muon;
// a NaN gradient stops it as it stops the CPU path; expert parallelism is refused (data parallelism:
// tests/dist/train_layout_test.cpp).
TEST_F(TrainTest, DeviceBranchWritesTheCpuPathsBytes) {
  for (const char* opt : {"adamw", "muon"}) {
    auto o = base(std::string("cpu_") + opt);
    o.steps = 4;
    o.optimizer = opt;
    o.clip = 0.05;  // below the tiny model's gradient norms: every step is clipped
    trex::train::train(o);
    auto d = o;
    d.out = dir / (std::string("dev_") + opt);
    d.device_step = [](const trex::train::DeviceStepConfig& c) {
      return std::make_unique<trex::train::CpuDeviceStep>(c);
    };
    trex::train::train(d);
    auto a = read_metrics(o.out / "metrics.jsonl"), b = read_metrics(d.out / "metrics.jsonl");
    ASSERT_EQ(a.size(), 4u);
    ASSERT_EQ(b.size(), 4u);
    for (int i = 0; i < 4; ++i) {
      EXPECT_LT(a[i]["clip_scale"].get<double>(), 1.0) << opt << " step " << i + 1 << ": clipping not exercised";
      for (const char* k : {"loss", "lm_loss", "mtp_loss", "balance_loss", "grad_norm", "clip_scale", "lr",
                            "expert_load_max_mean"})
        EXPECT_EQ(a[i][k].get<double>(), b[i][k].get<double>()) << opt << " step " << i + 1 << " " << k;
    }
    EXPECT_EQ(b[0]["memory_per_rank"][0]["device"], "cpu");
    for (const char* f : {"model.safetensors", "optimizer/optimizer.safetensors"})
      EXPECT_TRUE(trex::read_file(o.out / "step-00000004" / f) == trex::read_file(d.out / "step-00000004" / f))
          << opt << " " << f;
  }
  auto bad = base("bad");
  bad.device_step = [](const trex::train::DeviceStepConfig& c) {
    return std::make_unique<trex::train::CpuDeviceStep>(c);
  };
  bad.steps = 3;
  bad.inject_nan_step = 2;
  try {
    trex::train::train(bad);
    ADD_FAILURE() << "a NaN gradient on the device branch did not stop the run";
  } catch (const trex::Error& e) {
    EXPECT_NE(std::string(e.what()).find("non-finite gradient at step 2"), std::string::npos) << e.what();
  }
}

// A checkpoint of either branch resumes on the other and continues exactly like the uninterrupted run: the
// optimizer moments travel in the checkpoint layout (DeviceStep::get_state / set_state) and the weights through
// the host copy.
TEST_F(TrainTest, CheckpointsResumeAcrossTheCpuAndDeviceBranches) {
  auto step = [](const trex::train::DeviceStepConfig& c) { return std::make_unique<trex::train::CpuDeviceStep>(c); };
  auto ref = base("ref");
  ref.steps = 4;
  ref.save_every = 2;
  ref.optimizer = "muon";
  trex::train::train(ref);
  auto dev_ref = ref;
  dev_ref.out = dir / "dev_ref";
  dev_ref.device_step = step;
  trex::train::train(dev_ref);
  // (from, to): the CPU run's step-2 checkpoint finished on the device branch, the device run's on the CPU path
  for (auto [from, resumed, to_device] : {std::tuple{ref.out, dir / "cpu_to_dev", true},
                                          std::tuple{dev_ref.out, dir / "dev_to_cpu", false}}) {
    fs::create_directories(resumed);
    fs::copy(from / "step-00000002", resumed / "step-00000002", fs::copy_options::recursive);
    trex::write_file_atomic(resumed / "latest", "step-00000002");
    auto o = ref;
    o.out = resumed;
    o.resume = true;
    if (to_device) o.device_step = step;
    trex::train::train(o);
    for (const char* f : {"model.safetensors", "optimizer/optimizer.safetensors"})
      EXPECT_TRUE(trex::read_file(ref.out / "step-00000004" / f) == trex::read_file(resumed / "step-00000004" / f))
          << resumed.filename() << " " << f;
  }
}
