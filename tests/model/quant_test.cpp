// Number formats and FP8/FP4 dequantisation: exact edge values of every format, synthetic weights quantised
// here by a readable reference (exhaustive nearest-code search), fast vs reference dequantisers, and the
// Python-written fixture (decoded there by an independent minifloat decoder).
#include "model/quant.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "util/error.hpp"
#include "util/rng.hpp"

using namespace trex::model;
namespace fs = std::filesystem;

namespace {

// Bitwise equality, so NaN == NaN and -0 != +0.
::testing::AssertionResult same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << "sizes " << a.size() << " vs " << b.size();
  for (size_t i = 0; i < a.size(); ++i) {
    bool eq = std::isnan(a[i]) ? std::isnan(b[i]) : std::bit_cast<uint32_t>(a[i]) == std::bit_cast<uint32_t>(b[i]);
    if (!eq) return ::testing::AssertionFailure() << "index " << i << ": " << a[i] << " vs " << b[i];
  }
  return ::testing::AssertionSuccess();
}

// Readable reference quantiser: the finite code whose value is nearest to x (ties: smaller magnitude code).
uint8_t nearest_code(float x, int n_codes, float (*decode)(uint8_t)) {
  uint8_t best = 0;
  float best_err = std::numeric_limits<float>::infinity();
  for (int c = 0; c < n_codes; ++c) {
    float v = decode(static_cast<uint8_t>(c));
    if (!std::isfinite(v)) continue;
    float err = std::fabs(v - x);
    if (err < best_err) {
      best_err = err;
      best = static_cast<uint8_t>(c);
    }
  }
  return best;
}

// E8M0 exponent byte for a block: smallest power of two with amax / 2^e <= fmt_max (inference recipe).
uint8_t block_scale_exponent(float amax, float fmt_max) {
  if (amax == 0.0f) return 127;
  int e = static_cast<int>(std::ceil(std::log2(amax / fmt_max)));
  return static_cast<uint8_t>(std::clamp(e + 127, 0, 254));
}

ScaleView e8m0_scale(const std::vector<uint8_t>& bytes, int64_t r, int64_t c) {
  return ScaleView{DType::F8_E8M0, {r, c}, std::as_bytes(std::span<const uint8_t>(bytes))};
}

}  // namespace

TEST(Quant, Fp8E4M3EdgeCodes) {
  EXPECT_EQ(fp8_e4m3_to_float_ref(0x00), 0.0f);
  EXPECT_TRUE(std::signbit(fp8_e4m3_to_float_ref(0x80)));         // -0
  EXPECT_EQ(fp8_e4m3_to_float_ref(0x01), std::ldexp(1.0f, -9));   // smallest subnormal
  EXPECT_EQ(fp8_e4m3_to_float_ref(0x07), 7 * std::ldexp(1.0f, -9));  // largest subnormal
  EXPECT_EQ(fp8_e4m3_to_float_ref(0x08), std::ldexp(1.0f, -6));   // smallest normal
  EXPECT_EQ(fp8_e4m3_to_float_ref(0x38), 1.0f);
  EXPECT_EQ(fp8_e4m3_to_float_ref(0x7E), 448.0f);                 // largest finite
  EXPECT_EQ(fp8_e4m3_to_float_ref(0xFE), -448.0f);
  EXPECT_EQ(fp8_e4m3_to_float_ref(0x78), 256.0f);                 // exponent 15 is finite in E4M3FN
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_float_ref(0x7F)));
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_float_ref(0xFF)));
  int nans = 0, infs = 0;
  for (int c = 0; c < 256; ++c) {
    float v = fp8_e4m3_to_float_ref(static_cast<uint8_t>(c));
    nans += std::isnan(v);
    infs += std::isinf(v);
    EXPECT_EQ(std::bit_cast<uint32_t>(v), std::bit_cast<uint32_t>(fp8_e4m3_to_float(static_cast<uint8_t>(c))));
  }
  EXPECT_EQ(nans, 2);
  EXPECT_EQ(infs, 0);
}

TEST(Quant, Fp8E5M2AndE8M0AndFp4EdgeCodes) {
  EXPECT_EQ(fp8_e5m2_to_float_ref(0x01), std::ldexp(1.0f, -16));
  EXPECT_EQ(fp8_e5m2_to_float_ref(0x04), std::ldexp(1.0f, -14));
  EXPECT_EQ(fp8_e5m2_to_float_ref(0x3C), 1.0f);
  EXPECT_EQ(fp8_e5m2_to_float_ref(0x7B), 57344.0f);
  EXPECT_EQ(fp8_e5m2_to_float_ref(0x7C), std::numeric_limits<float>::infinity());
  EXPECT_EQ(fp8_e5m2_to_float_ref(0xFC), -std::numeric_limits<float>::infinity());
  for (uint8_t c : {0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF}) EXPECT_TRUE(std::isnan(fp8_e5m2_to_float_ref(c)));

  EXPECT_EQ(e8m0_to_float_ref(127), 1.0f);
  EXPECT_EQ(e8m0_to_float_ref(0), std::ldexp(1.0f, -127));  // float subnormal, exact
  EXPECT_EQ(e8m0_to_float_ref(254), std::ldexp(1.0f, 127));
  EXPECT_TRUE(std::isnan(e8m0_to_float_ref(255)));

  const float want[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
  for (int n = 0; n < 16; ++n) {
    EXPECT_EQ(fp4_e2m1_to_float_ref(static_cast<uint8_t>(n)), want[n]) << n;
    EXPECT_EQ(fp4_e2m1_to_float(static_cast<uint8_t>(n)), want[n]) << n;
  }
  EXPECT_TRUE(std::signbit(fp4_e2m1_to_float_ref(8)));
}

TEST(Quant, Bf16AndF16) {
  EXPECT_EQ(bf16_to_float(0x3F80), 1.0f);
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);      // tie -> even (down)
  EXPECT_EQ(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);  // tie -> even (up)
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3F81);
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7F80);  // rounds to +inf
  EXPECT_EQ(float_to_bf16(-std::numeric_limits<float>::infinity()), 0xFF80);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::bit_cast<float>(0x7F800001u)))));  // low-bit NaN stays NaN

  EXPECT_EQ(f16_to_float(0x3C00), 1.0f);
  EXPECT_EQ(f16_to_float(0xC000), -2.0f);
  EXPECT_EQ(f16_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(f16_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_to_float(0x0400), std::ldexp(1.0f, -14));
  EXPECT_EQ(f16_to_float(0x7C00), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(f16_to_float(0x7E00)));
  EXPECT_TRUE(std::signbit(f16_to_float(0x8000)));
}

TEST(Quant, Fp8BlockDequantOfSyntheticWeights) {
  // 200 x 300: 2 x 3 blocks of 128, partial blocks on the bottom and right edges.
  const int64_t rows = 200, cols = 300, sr = ceil_div(rows, 128), sc = ceil_div(cols, 128);
  trex::Rng rng(7);
  std::vector<float> w(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)  // block-dependent magnitudes, so a wrong block index shows
      w[r * cols + c] = static_cast<float>((rng.uniform() * 2 - 1) * std::ldexp(1.0, int((r / 128) * 5 - (c / 128) * 7)));
  w[0] = 0.0f;
  std::vector<uint8_t> scale(sr * sc), codes(rows * cols);
  for (int64_t br = 0; br < sr; ++br)
    for (int64_t bc = 0; bc < sc; ++bc) {
      float amax = 0;
      for (int64_t r = br * 128; r < std::min(rows, br * 128 + 128); ++r)
        for (int64_t c = bc * 128; c < std::min(cols, bc * 128 + 128); ++c) amax = std::max(amax, std::fabs(w[r * cols + c]));
      scale[br * sc + bc] = block_scale_exponent(amax, 448.0f);
    }
  std::vector<float> want(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      int e = scale[(r / 128) * sc + c / 128] - 127;
      uint8_t q = nearest_code(std::ldexp(w[r * cols + c], -e), 256, fp8_e4m3_to_float_ref);
      codes[r * cols + c] = q;
      want[r * cols + c] = std::ldexp(fp8_e4m3_to_float_ref(q), e);
    }
  auto sv = e8m0_scale(scale, sr, sc);
  std::vector<float> fast(rows * cols), ref(rows * cols);
  dequant_fp8_block(codes, rows, cols, sv, fast);
  dequant_fp8_block_ref(codes, rows, cols, sv, ref);
  EXPECT_TRUE(same_bits(fast, want));
  EXPECT_TRUE(same_bits(ref, want));
  // Round-trip error is within half an E4M3 step (relative 2^-4) plus the subnormal step.
  for (int64_t i = 0; i < rows * cols; ++i) {
    int e = scale[((i / cols) / 128) * sc + (i % cols) / 128] - 127;
    EXPECT_LE(std::fabs(fast[i] - w[i]), std::fabs(w[i]) * 0.0625f + std::ldexp(1.0f, e - 10)) << i;
  }

  // The same weights with float32 scales (V3-style weight_scale_inv) and bf16 scales.
  std::vector<float> fscale(scale.size());
  std::vector<uint16_t> bscale(scale.size());
  for (size_t i = 0; i < scale.size(); ++i) {
    fscale[i] = e8m0_to_float_ref(scale[i]);
    bscale[i] = float_to_bf16(fscale[i]);
  }
  std::vector<float> out32(rows * cols), out16(rows * cols);
  dequant_fp8_block(codes, rows, cols, ScaleView{DType::F32, {sr, sc}, std::as_bytes(std::span(fscale))}, out32);
  dequant_fp8_block(codes, rows, cols, ScaleView{DType::BF16, {sr, sc}, std::as_bytes(std::span(bscale))}, out16);
  EXPECT_TRUE(same_bits(out32, want));
  EXPECT_TRUE(same_bits(out16, want));
}

TEST(Quant, Fp8SpecialCodesAndExtremeScales) {
  // One row of every code; scales 2^0, NaN (0xFF), 2^-127 (products become float subnormals), 2^127.
  std::vector<uint8_t> codes(256);
  for (int c = 0; c < 256; ++c) codes[c] = static_cast<uint8_t>(c);
  for (uint8_t s : {uint8_t(127), uint8_t(255), uint8_t(0), uint8_t(254)}) {
    std::vector<uint8_t> scale = {s, s};
    std::vector<float> out(256), ref(256), want(256);
    dequant_fp8_block(codes, 1, 256, e8m0_scale(scale, 1, 2), out);
    dequant_fp8_block_ref(codes, 1, 256, e8m0_scale(scale, 1, 2), ref);
    for (int c = 0; c < 256; ++c)
      want[c] = s == 255 ? std::numeric_limits<float>::quiet_NaN()
                         : static_cast<float>(static_cast<double>(fp8_e4m3_to_float_ref(uint8_t(c))) * std::ldexp(1.0, s - 127));
    EXPECT_TRUE(same_bits(out, want)) << "scale byte " << int(s);
    EXPECT_TRUE(same_bits(ref, want)) << "scale byte " << int(s);
  }
}

TEST(Quant, Fp4PackedDequantOfSyntheticWeights) {
  // 5 x 70: groups of 32 -> 3 scales per row, the last group holds 6 elements.
  const int64_t rows = 5, cols = 70, sc = ceil_div(cols, 32);
  trex::Rng rng(11);
  std::vector<uint8_t> scale(rows * sc);
  for (auto& s : scale) s = static_cast<uint8_t>(120 + rng.next_u64() % 16);
  std::vector<uint8_t> nib(rows * cols), packed(rows * cols / 2, 0);
  std::vector<float> want(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      int e = scale[r * sc + c / 32] - 127;
      float x = static_cast<float>((rng.uniform() * 2 - 1) * 6.5 * std::ldexp(1.0, e));
      uint8_t q = nearest_code(std::ldexp(x, -e), 16, fp4_e2m1_to_float_ref);
      nib[r * cols + c] = q;
      want[r * cols + c] = std::ldexp(fp4_e2m1_to_float_ref(q), e);
      packed[r * (cols / 2) + c / 2] |= static_cast<uint8_t>(c % 2 == 0 ? q : q << 4);  // 2j low, 2j+1 high
    }
  nib[0] = 0x8;  // -0 survives
  packed[0] = static_cast<uint8_t>((packed[0] & 0xF0) | 0x8);
  want[0] = -0.0f;
  auto sv = e8m0_scale(scale, rows, sc);
  std::vector<float> fast(rows * cols), ref(rows * cols);
  dequant_fp4_packed(packed, rows, cols, sv, fast);
  dequant_fp4_packed_ref(packed, rows, cols, sv, ref);
  EXPECT_TRUE(same_bits(fast, want));
  EXPECT_TRUE(same_bits(ref, want));
}

TEST(Quant, ShapeMismatchesAreErrors) {
  std::vector<uint8_t> codes(130 * 10), scale(2);
  std::vector<float> out(130 * 10);
  EXPECT_NO_THROW(dequant_fp8_block(codes, 130, 10, e8m0_scale(scale, 2, 1), out));
  EXPECT_THROW(dequant_fp8_block(codes, 130, 10, e8m0_scale(scale, 1, 2), out), trex::Error);
  std::vector<uint8_t> scale1(1);
  EXPECT_THROW(dequant_fp8_block(codes, 130, 10, e8m0_scale(scale1, 1, 1), out), trex::Error);
  std::vector<float> short_out(10);
  EXPECT_THROW(dequant_fp8_block(codes, 130, 10, e8m0_scale(scale, 2, 1), short_out), trex::Error);
  std::vector<uint8_t> packed(2 * 3), fscale(2 * 1);
  std::vector<float> fout(2 * 6);
  EXPECT_NO_THROW(dequant_fp4_packed(packed, 2, 6, e8m0_scale(fscale, 2, 1), fout));
  EXPECT_THROW(dequant_fp4_packed(packed, 2, 6, e8m0_scale(fscale, 1, 2), fout), trex::Error);
  std::vector<float> fout_odd(2 * 5);
  EXPECT_THROW(dequant_fp4_packed(packed, 2, 5, e8m0_scale(fscale, 2, 1), fout_odd), trex::Error);
}

TEST(Quant, ScaleNames) {
  EXPECT_EQ(scale_name_candidates("layers.0.attn.wq_a.weight"),
            (std::vector<std::string>{"layers.0.attn.wq_a.scale", "layers.0.attn.wq_a.weight_scale_inv",
                                      "layers.0.attn.wq_a.weight.scale"}));
}

TEST(Quant, MatchesIndependentPythonDecoder) {
  const fs::path p = fs::path(TREX_SOURCE_DIR) / "tests/model/data/python_format.safetensors";
  ASSERT_TRUE(fs::exists(p)) << "fixture missing: " << p;
  auto f = SafetensorsFile::open(p);
  {
    const auto& w = f.at("layers.0.attn.wq_a.weight");
    ASSERT_EQ(w.dtype, DType::F8_E4M3);
    auto sv = scale_view(f.view("layers.0.attn.wq_a.scale"));
    auto bytes = f.view(w).bytes;
    std::span<const uint8_t> codes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    std::vector<float> out(w.numel());
    dequant_fp8_block(codes, w.shape[0], w.shape[1], sv, out);
    EXPECT_TRUE(same_bits(out, convert_to_float(f.view("layers.0.attn.wq_a.expected"))));
  }
  {
    const auto& w = f.at("layers.0.ffn.experts.0.w1.weight");
    ASSERT_EQ(w.dtype, DType::I8);
    auto sv = scale_view(f.view("layers.0.ffn.experts.0.w1.scale"));
    auto bytes = f.view(w).bytes;
    std::span<const uint8_t> packed(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    std::vector<float> out(w.numel() * 2);
    dequant_fp4_packed(packed, w.shape[0], w.shape[1] * 2, sv, out);
    EXPECT_TRUE(same_bits(out, convert_to_float(f.view("layers.0.ffn.experts.0.w1.expected"))));
  }
  EXPECT_TRUE(same_bits(convert_to_float(f.view("plain.e5m2")), convert_to_float(f.view("plain.e5m2.expected"))));
}

// Tensors above the OpenMP threshold take the parallel fast path; it must equal the serial reference.
TEST(Quant, LargeTensorsFastPathEqualsReference) {
  trex::Rng rng(99);
  const int64_t rows = 600, cols = 700;
  std::vector<uint8_t> codes(rows * cols), scale(ceil_div(rows, 128) * ceil_div(cols, 128));
  for (auto& c : codes) c = static_cast<uint8_t>(rng.next_u64());
  for (auto& s : scale) s = static_cast<uint8_t>(100 + rng.next_u64() % 50);
  auto sv = e8m0_scale(scale, ceil_div(rows, 128), ceil_div(cols, 128));
  std::vector<float> fast(rows * cols), ref(rows * cols);
  dequant_fp8_block(codes, rows, cols, sv, fast);
  dequant_fp8_block_ref(codes, rows, cols, sv, ref);
  EXPECT_TRUE(same_bits(fast, ref));

  const int64_t fcols = 720;  // 22.5 groups of 32 per row: a partial last group
  std::vector<uint8_t> packed(rows * fcols / 2), fscale(rows * ceil_div(fcols, 32));
  for (auto& c : packed) c = static_cast<uint8_t>(rng.next_u64());
  for (auto& s : fscale) s = static_cast<uint8_t>(100 + rng.next_u64() % 50);
  auto fsv = e8m0_scale(fscale, rows, ceil_div(fcols, 32));
  std::vector<float> ffast(rows * fcols), fref(rows * fcols);
  dequant_fp4_packed(packed, rows, fcols, fsv, ffast);
  dequant_fp4_packed_ref(packed, rows, fcols, fsv, fref);
  EXPECT_TRUE(same_bits(ffast, fref));
}
