// The C++ training step (train_step.hpp + optimizer.hpp) on the whole fixture model matches the PyTorch twin
// (tests/reference/train/gen_train_fixture.py, float64) for 3 optimizer steps with AdamW and with Muon:
// 2 micro-batches accumulated, clipping to 1.0, the update and the gate-bias rule. Compared after every step:
// expert loads exactly (routing must not diverge), loss and grad norm to 1e-4 relative, every parameter to
// an absolute tolerance that is a fraction of the step's learning rate (a float32 step against a float64 one:
// Adam's m/sqrt(v) amplifies rounding of tiny gradients, so the bound is on the update scale, not on ulps).
#include <gtest/gtest.h>

#include <cmath>

#include "model/fixture_model.hpp"
#include "train/sharded_optimizer.hpp"
#include "train/train_step.hpp"

using namespace trex::train;

namespace {

const char* kTrainFixture = TREX_SOURCE_DIR "/tests/train/fixtures/train_steps.safetensors";

std::string fmt_key(const char* kind, const char* what, int s) { return std::string(kind) + "/" + what + std::to_string(s); }

void run(const char* kind, OptimizerKind ok) {
  auto L = trex::testing::load_fixture_model();
  auto fx = trex::testing::read_fixture(kTrainFixture);
  auto& model = *L->model;
  auto lrs = nlohmann::json::parse(fx.metadata["lrs"].get<std::string>())[kind];
  const double clip = std::stod(fx.metadata["clip"].get<std::string>());
  ASSERT_DOUBLE_EQ(std::stod(fx.metadata["bias_rate"].get<std::string>()), L->cfg.bias_update_rate);
  for (const auto& p : model.param_table()) {
    const auto& t = fx.at("init/" + p.name);
    ASSERT_TRUE(std::equal(t.f32.begin(), t.f32.end(), model.params().begin() + p.offset)) << p.name;
  }

  TensorRanges ranges;
  OptimizerConfig oc;
  oc.kind = ok;
  // one process: one region, no group (the trainer's own path)
  ShardedOptimizer opt(model.store(), optimizer_slots(model, false, ranges),
                       {{0, int64_t(model.params().size()), nullptr, trex::dist::kStageGroup}}, oc, true, nullptr);
  const int64_t T = L->batch.T;
  std::vector<trex::model::Batch> micro;
  for (int64_t r = 0; r < L->batch.B; ++r)
    micro.push_back({1, T, L->tok.data() + r * T, L->doc.data() + r * T, L->mask.data() + r * T});

  std::vector<uint8_t> noise(model.params().size(), 0);
  double lr_sum = 0;
  for (int s = 0; s < 3; ++s) {
    const double lr = lrs[s].get<double>();
    auto losses = accumulate_gradients(model, micro);
    const double gn = opt.grad_norm(model.grads());
    const double want_loss = fx.at(fmt_key(kind, "loss", s)).f32[0], want_gn = fx.at(fmt_key(kind, "gnorm", s)).f32[0];
    EXPECT_NEAR(losses.total, want_loss, 1e-4 * want_loss) << kind << " step " << s + 1;
    EXPECT_NEAR(gn, want_gn, 1e-4 * want_gn) << kind << " step " << s + 1;
    // Loads of the last micro-batch per non-hash MoE block (layers, then MTP), as the bias rule sees them.
    int64_t block = 0;
    for (int64_t l = 0; l < L->cfg.n_layers_total(); ++l, ++block) {
      std::string prefix = l < L->cfg.num_hidden_layers ? "layers." + std::to_string(l) + "."
                                                        : "mtp." + std::to_string(l - L->cfg.num_hidden_layers) + ".";
      std::string key = std::string(kind) + "/load" + std::to_string(s) + "/" + prefix;
      if (L->cfg.is_hash_layer(l)) continue;
      auto got = model.expert_load(block);
      ASSERT_EQ(std::vector<int64_t>(got.begin(), got.end()), fx.at(key).i64) << key << ": routing diverged";
    }
    // Gradients that are zero in exact arithmetic (e.g. layer 0's mHC pre-scale and base: its 4 input streams
    // are equal copies of the embedding) come out as cancellation noise (1e-13 in float64, larger in float32);
    // Adam normalises such noise to a step of up to lr of either sign. Elements whose gradient is below 1e-6
    // of the global norm (and not exactly 0, where both sides agree) may differ by Adam's step bound.
    for (size_t i = 0; i < noise.size(); ++i) {
      const float g = model.grads()[i];
      if (g != 0.0f && std::fabs(g) < 1e-6 * gn) noise[i] = 1;
    }
    opt.update(model.params(), model.grads(), gn, clip, lr);
    model.update_gate_bias();
    lr_sum += lr;
    double worst = 0;
    int64_t n_noise = 0;
    std::string worst_name;
    for (const auto& p : model.param_table()) {
      const auto& want = fx.at(std::string(kind) + "/step" + std::to_string(s) + "/" + p.name).f32;
      for (int64_t i = 0; i < p.numel; ++i) {
        double d = std::fabs(double(model.params()[size_t(p.offset + i)]) - double(want[size_t(i)]));
        if (noise[size_t(p.offset + i)]) {
          ++n_noise;
          EXPECT_LE(d, 2.0 * lr_sum + 1e-6) << p.name << "[" << i << "] (noise gradient)";
          continue;
        }
        if (d > worst) {
          worst = d;
          worst_name = p.name;
        }
      }
    }
    std::printf("%s step %d: loss %.6f (twin %.6f), grad norm %.6f (twin %.6f), max |param - twin| %.3g (%s) = "
                "%.3g lr (%lld of %zu elements with a noise-level gradient held to the Adam step bound only)\n", kind, s + 1, losses.total, want_loss, gn, want_gn, worst,
                worst_name.c_str(), worst / lr, (long long)n_noise, model.params().size());
    EXPECT_LT(worst, 0.05 * lr) << kind << " step " << s + 1 << ": " << worst_name;
  }
}

}  // namespace

TEST(TwinTrainParity, AdamWThreeSteps) { run("adamw", OptimizerKind::AdamW); }
TEST(TwinTrainParity, MuonThreeSteps) { run("muon", OptimizerKind::Muon); }
