// Checkpoints: the ParamStore and the official inventory agree; save/load round trips (F32, BF16); an
// official-format checkpoint (FP8 block-scaled, FP4 packed experts, BF16, F32, I64 hash tables, two shards
// + index) is dequantised on load to exactly the values its codes and scales define; missing, unexpected
// and mis-shaped tensors are reported.
#include "model/checkpoint.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "model/checkpoint_layout.hpp"
#include "model/quant.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"

#include "model/param_store_testing.hpp"
#include "temp_dir.hpp"

using namespace trex::model;
namespace fs = std::filesystem;

namespace {

// A small config whose dimensions are not multiples of 128 (partial FP8 blocks everywhere) nor of 32 in
// places (partial FP4 groups), with every layer kind, hash layers and an MTP block.
ModelConfig small_config() {
  ModelConfig c = ModelConfig::preset("tiny");
  c.vocab_size = 300;
  c.hidden_size = 80;
  c.num_hidden_layers = 4;
  c.compress_ratios = {0, 4, 8, 4, 0};
  c.num_attention_heads = 2;
  c.head_dim = 40;
  c.qk_rope_head_dim = 8;
  c.q_lora_rank = 136;
  c.o_groups = 2;
  c.o_lora_rank = 24;
  c.sliding_window = 8;
  c.index_n_heads = 2;
  c.index_head_dim = 16;
  c.index_topk = 4;
  c.n_routed_experts = 4;
  c.num_experts_per_tok = 2;
  c.moe_intermediate_size = 48;
  c.num_hash_layers = 1;
  c.validate();
  return c;
}

using trex::testing::ScopedTempDir;
using trex::testing::fill_random;
using trex::testing::same_bits;

}  // namespace

TEST(Checkpoint, ParamStoreMatchesOfficialInventory) {
  for (const ModelConfig& cfg : {small_config(), ModelConfig::preset("tiny"), ModelConfig::preset("bench")}) {
    ParamStore store(cfg);
    std::vector<std::pair<std::string, std::vector<int64_t>>> from_store, from_layout;
    for (const auto& p : store.table()) from_store.emplace_back(p.name, p.shape);
    for (const auto& p : store.int_table()) from_store.emplace_back(p.name, p.shape);
    for (const auto& t : checkpoint_layout(cfg)) from_layout.emplace_back(t.name, t.shape);
    std::sort(from_store.begin(), from_store.end());
    std::sort(from_layout.begin(), from_layout.end());
    EXPECT_EQ(from_store, from_layout);
  }
}

TEST(Checkpoint, SaveLoadRoundTripF32AndBf16) {
  const ModelConfig cfg = small_config();
  ParamStore a(cfg), b(cfg), c(cfg);
  fill_random(a, 1, 1000);
  ScopedTempDir d("trex_ckpt_rt");
  save_weights(d.path / "f32", a, cfg);
  auto rep = load_weights(d.path / "f32", b);
  EXPECT_TRUE(rep.missing.empty() && rep.unexpected.empty()) << rep.summary();
  EXPECT_EQ(rep.loaded, static_cast<int64_t>(a.table().size() + a.int_table().size()));
  EXPECT_TRUE(same_bits(a.params(), b.params()));
  EXPECT_TRUE(std::equal(a.int_params().begin(), a.int_params().end(), b.int_params().begin()));
  // config.json round-trips.
  ModelConfig back = ModelConfig::from_hf_json(d.path / "f32" / "config.json");
  EXPECT_EQ(back.to_hf_json(), cfg.to_hf_json());

  save_weights(d.path / "bf16", a, cfg, DType::BF16);
  load_weights(d.path / "bf16", c);
  auto f = SafetensorsFile::open(d.path / "bf16" / "model.safetensors");
  EXPECT_EQ(f.at("layers.0.attn.wq_a.weight").dtype, DType::BF16);
  EXPECT_EQ(f.at("layers.0.hc_attn_fn").dtype, DType::F32);  // official F32 tensors stay F32
  EXPECT_EQ(f.at("layers.0.ffn.gate.tid2eid").dtype, DType::I64);
  for (const auto& p : a.table()) {
    const bool f32 = f.at(p.name).dtype == DType::F32;
    for (int64_t i = 0; i < p.numel; ++i) {
      const float x = a.params()[p.offset + i];
      const float want = f32 ? x : bf16_to_float(float_to_bf16(x));
      ASSERT_EQ(c.params()[p.offset + i], want) << p.name << "[" << i << "]";
    }
  }
}

// Builds an official-format checkpoint of `cfg` with random codes and scales (two shards + index) and the
// float values a correct loader must produce, computed with the readable reference decoders.
TEST(Checkpoint, LoadsOfficialFormatWithDequantisation) {
  const ModelConfig cfg = small_config();
  ScopedTempDir d("trex_ckpt_official");
  trex::Rng rng(42);
  ParamStore want(cfg);
  std::vector<std::vector<uint8_t>> keep;  // backing bytes of the tensors to write
  std::vector<TensorToWrite> shard[2];
  int64_t n_fp8 = 0, n_fp4 = 0;
  auto push = [&](int s, std::string name, DType dt, std::vector<int64_t> shape, std::vector<uint8_t> bytes) {
    keep.push_back(std::move(bytes));
    shard[s].push_back({std::move(name), dt, std::move(shape), std::as_bytes(std::span<const uint8_t>(keep.back()))});
  };
  keep.reserve(100000);
  int i = 0;
  for (const LayoutTensor& t : checkpoint_layout(cfg)) {
    const int s = (i++ % 2);  // alternate shards; a weight and its scale stay together
    const int64_t n = t.numel();
    if (t.stored == StoredAs::I64) {
      std::vector<uint8_t> bytes(n * 8);
      int64_t* dst = want.int_param(t.name);
      for (int64_t k = 0; k < n; ++k) {
        int64_t v = static_cast<int64_t>(rng.next_u64() % cfg.n_routed_experts);
        dst[k] = v;
        std::memcpy(bytes.data() + 8 * k, &v, 8);
      }
      push(s, t.name, DType::I64, t.shape, std::move(bytes));
      continue;
    }
    float* dst = want.param(t.name);
    switch (t.stored) {
      case StoredAs::F32: {
        std::vector<uint8_t> bytes(n * 4);
        for (int64_t k = 0; k < n; ++k) {
          dst[k] = static_cast<float>(rng.uniform() - 0.5);
          std::memcpy(bytes.data() + 4 * k, &dst[k], 4);
        }
        push(s, t.name, DType::F32, t.shape, std::move(bytes));
        break;
      }
      case StoredAs::BF16: {
        std::vector<uint8_t> bytes(n * 2);
        for (int64_t k = 0; k < n; ++k) {
          uint16_t b = float_to_bf16(static_cast<float>(rng.uniform() - 0.5));
          dst[k] = bf16_to_float(b);
          std::memcpy(bytes.data() + 2 * k, &b, 2);
        }
        push(s, t.name, DType::BF16, t.shape, std::move(bytes));
        break;
      }
      case StoredAs::FP8Block: {
        ++n_fp8;
        const auto ss = t.scale_shape();
        std::vector<uint8_t> codes(n), scale(ss[0] * ss[1]);
        for (auto& sc : scale) sc = static_cast<uint8_t>(110 + rng.next_u64() % 30);
        for (int64_t k = 0; k < n; ++k) {
          uint8_t c = static_cast<uint8_t>(rng.next_u64());
          if ((c & 0x7F) == 0x7F) c = 0x7E;  // keep the NaN codes out of model weights
          codes[k] = c;
          const int64_t r = k / t.shape[1], col = k % t.shape[1];
          dst[k] = fp8_e4m3_to_float_ref(c) * e8m0_to_float_ref(scale[(r / 128) * ss[1] + col / 128]);
        }
        push(s, t.name, DType::F8_E4M3, t.shape, std::move(codes));
        push(s, t.scale_name(), DType::F8_E8M0, ss, std::move(scale));
        break;
      }
      case StoredAs::FP4Packed: {
        ++n_fp4;
        const auto ss = t.scale_shape();
        const int64_t rows = t.shape[0], cols = t.shape[1];
        std::vector<uint8_t> packed(n / 2, 0), scale(ss[0] * ss[1]);
        for (auto& sc : scale) sc = static_cast<uint8_t>(120 + rng.next_u64() % 10);
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t col = 0; col < cols; ++col) {
            const uint8_t nib = static_cast<uint8_t>(rng.next_u64() & 0xF);
            packed[r * (cols / 2) + col / 2] |= static_cast<uint8_t>(col % 2 == 0 ? nib : nib << 4);
            dst[r * cols + col] = fp4_e2m1_to_float_ref(nib) * e8m0_to_float_ref(scale[r * ss[1] + col / 32]);
          }
        push(s, t.name, DType::I8, t.stored_shape(), std::move(packed));
        push(s, t.scale_name(), DType::F8_E8M0, ss, std::move(scale));
        break;
      }
      default: break;
    }
  }
  ASSERT_GT(n_fp8, 0);
  ASSERT_GT(n_fp4, 0);
  write_safetensors(d.path / "model-00001-of-00002.safetensors", shard[0]);
  write_safetensors(d.path / "model-00002-of-00002.safetensors", shard[1]);
  nlohmann::json index;
  for (int s = 0; s < 2; ++s)
    for (const auto& t : shard[s])
      index["weight_map"][t.name] = "model-0000" + std::to_string(s + 1) + "-of-00002.safetensors";
  trex::write_file_atomic(d.path / "model.safetensors.index.json", index.dump());
  trex::write_file_atomic(d.path / "config.json", cfg.to_hf_json().dump());

  ParamStore got(cfg);
  LoadReport rep = load_weights(d.path, got);
  EXPECT_TRUE(rep.missing.empty() && rep.unexpected.empty()) << rep.summary();
  EXPECT_EQ(rep.dequantised_fp8, n_fp8);
  EXPECT_EQ(rep.dequantised_fp4, n_fp4);
  EXPECT_TRUE(same_bits(got.params(), want.params()));
  EXPECT_TRUE(std::equal(got.int_params().begin(), got.int_params().end(), want.int_params().begin()));
  auto ck = Checkpoint::open(d.path);
  ASSERT_TRUE(ck.config_path().has_value());
  EXPECT_EQ(ModelConfig::from_hf_json(*ck.config_path()).to_hf_json(), cfg.to_hf_json());
  EXPECT_EQ(ck.find("layers.1.ffn.experts.0.w2.weight")->shape, (std::vector<int64_t>{80, 48}));
  EXPECT_EQ(ck.find("layers.1.attn.wq_a.scale"), nullptr);  // folded into its weight

  // The same shards without the index: every *.safetensors in the folder is read.
  fs::remove(d.path / "model.safetensors.index.json");
  ParamStore again(cfg);
  load_weights(d.path, again);
  EXPECT_TRUE(same_bits(again.params(), want.params()));
}

TEST(Checkpoint, MissingUnexpectedAndMisshapedTensorsAreReported) {
  const ModelConfig cfg = small_config();
  ParamStore a(cfg);
  fill_random(a, 3, 1000);
  ScopedTempDir d("trex_ckpt_bad");
  save_weights(d.path, a, cfg);
  auto f = SafetensorsFile::open(d.path / "model.safetensors");
  auto rewrite = [&](const std::string& drop, const std::string& rename_to, std::vector<int64_t> reshape) {
    std::vector<TensorToWrite> ts;
    for (const auto& t : f.tensors()) {
      if (t.name == drop && rename_to.empty() && reshape.empty()) continue;
      TensorToWrite w{t.name, t.dtype, t.shape, f.view(t).bytes};
      if (t.name == drop && !rename_to.empty()) w.name = rename_to;
      if (t.name == drop && !reshape.empty()) w.shape = reshape;
      ts.push_back(w);
    }
    write_safetensors(d.path / "edited.safetensors", ts);
  };
  const std::string victim = "layers.2.attn.compressor.ape";  // [8, 40]
  ParamStore b(cfg);
  rewrite(victim, "", {});
  try {
    load_weights(d.path / "edited.safetensors", b);
    FAIL() << "missing tensor not reported";
  } catch (const trex::Error& e) {
    EXPECT_NE(std::string(e.what()).find(victim), std::string::npos) << e.what();
  }
  LoadOptions lenient;
  lenient.allow_missing = true;
  auto rep = load_weights(d.path / "edited.safetensors", b, lenient);
  EXPECT_EQ(rep.missing, std::vector<std::string>{victim});

  rewrite(victim, "layers.2.attn.compressor.ape_renamed", {});
  try {
    load_weights(d.path / "edited.safetensors", b, lenient);
    FAIL() << "unexpected tensor not reported";
  } catch (const trex::Error& e) {
    EXPECT_NE(std::string(e.what()).find("ape_renamed"), std::string::npos) << e.what();
  }
  lenient.allow_unexpected = true;
  rep = load_weights(d.path / "edited.safetensors", b, lenient);
  EXPECT_EQ(rep.unexpected, std::vector<std::string>{"layers.2.attn.compressor.ape_renamed"});

  rewrite(victim, "", {4, 80});  // same element count, wrong shape
  ParamStore c(cfg);
  try {
    load_weights(d.path / "edited.safetensors", c, lenient);
    FAIL() << "shape mismatch not reported";
  } catch (const trex::Error& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find(victim), std::string::npos) << w;
    EXPECT_NE(w.find("edited.safetensors"), std::string::npos) << w;
  }
  // Nothing was overwritten by the rejected load.
  for (float x : c.params()) ASSERT_EQ(x, 0.0f);
}

TEST(Checkpoint, BadScalesAndShardsAreErrors) {
  ScopedTempDir d("trex_ckpt_scales");
  std::vector<uint8_t> codes(4 * 6, 0x38), bad_scale(2, 127), fscale(4, 127);
  // FP8 weight [4, 6] needs a [1, 1] scale.
  std::vector<TensorToWrite> ts = {{"m.weight", DType::F8_E4M3, {4, 6}, as_bytes_of(codes)},
                                   {"m.scale", DType::F8_E8M0, {1, 2}, as_bytes_of(bad_scale)}};
  write_safetensors(d.path / "a.safetensors", ts);
  auto ck = Checkpoint::open(d.path / "a.safetensors");
  try {
    ck.read_float("m.weight");
    FAIL();
  } catch (const trex::Error& e) {
    EXPECT_NE(std::string(e.what()).find("a.safetensors"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("m.weight"), std::string::npos) << e.what();
  }
  // V3-style name: weight_scale_inv with float32 values.
  std::vector<float> inv = {0.5f};
  std::vector<TensorToWrite> v3 = {{"m.weight", DType::F8_E4M3, {4, 6}, as_bytes_of(codes)},
                                   {"m.weight_scale_inv", DType::F32, {1, 1}, as_bytes_of(inv)}};
  write_safetensors(d.path / "v3.safetensors", v3);
  auto v = Checkpoint::open(d.path / "v3.safetensors").read_float("m.weight");
  EXPECT_EQ(v, std::vector<float>(24, 0.5f));  // 0x38 = 1.0
  // A scale on a non-quantised dtype.
  std::vector<float> w(24, 1.0f);
  std::vector<TensorToWrite> odd = {{"m.weight", DType::F32, {4, 6}, as_bytes_of(w)},
                                    {"m.scale", DType::F8_E8M0, {1, 1}, as_bytes_of(fscale)}};
  odd[1].shape = {4, 1};
  write_safetensors(d.path / "odd.safetensors", odd);
  EXPECT_THROW(Checkpoint::open(d.path / "odd.safetensors"), trex::Error);
  // The same tensor in two shards.
  ScopedTempDir d2("trex_ckpt_dup");
  write_safetensors(d2.path / "x1.safetensors", v3);
  write_safetensors(d2.path / "x2.safetensors", v3);
  EXPECT_THROW(Checkpoint::open(d2.path), trex::Error);
  // An index naming a missing shard.
  ScopedTempDir d3("trex_ckpt_idx");
  trex::write_file_atomic(d3.path / "model.safetensors.index.json", R"({"weight_map":{"a":"nope.safetensors"}})");
  EXPECT_THROW(Checkpoint::open(d3.path), trex::Error);
  EXPECT_THROW(Checkpoint::open(d3.path / "missing.safetensors"), trex::Error);
}
