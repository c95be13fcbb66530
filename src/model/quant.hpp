// Number formats of DeepSeek-V4 checkpoints and their dequantisation to float32 (DEEPSEEK_V4.md §11):
// - scalar decoders for BF16, F16, FP8 E4M3 (OCP "fn": no Inf, S.1111.111 = NaN, max 448), FP8 E5M2
//   (IEEE-like, with Inf/NaN), E8M0 scale bytes (2^(e-127), 0xFF = NaN) and FP4 E2M1 nibbles;
// - FP8 weights with one scale per 128x128 block: W[o][i] = fp8(W[o][i]) * S[o/128][i/128];
// - FP4 weights packed two per byte (element 2j in the LOW nibble, 2j+1 in the HIGH nibble) with one
//   scale per 32 consecutive elements of a row: W[o][i] = e2m1(W[o][i]) * S[o][i/32].
// Scales are E8M0 bytes (official V4) or plain float32/bf16 values (V3-style `weight_scale_inv`).
// Partial blocks at the right/bottom edges use the scale of the block they fall in.
// Each decoder has a readable bit-arithmetic reference (`*_ref`) and a table-driven fast path;
// tests compare them on every code.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/safetensors.hpp"

namespace trex::model {

// ---- scalar formats ----
float bf16_to_float(uint16_t bits);
uint16_t float_to_bf16(float x);  // round to nearest even; NaN stays a (quiet) NaN
float f16_to_float(uint16_t bits);
float fp8_e4m3_to_float_ref(uint8_t code);
float fp8_e5m2_to_float_ref(uint8_t code);
float e8m0_to_float_ref(uint8_t code);
float fp4_e2m1_to_float_ref(uint8_t nibble);  // low 4 bits used

// Lookup tables built once from the references (the fast path).
const std::array<float, 256>& fp8_e4m3_table();
const std::array<float, 256>& fp8_e5m2_table();
const std::array<float, 256>& e8m0_table();
const std::array<float, 16>& fp4_e2m1_table();
inline float fp8_e4m3_to_float(uint8_t c) { return fp8_e4m3_table()[c]; }
inline float fp8_e5m2_to_float(uint8_t c) { return fp8_e5m2_table()[c]; }
inline float e8m0_to_float(uint8_t c) { return e8m0_table()[c]; }
inline float fp4_e2m1_to_float(uint8_t n) { return fp4_e2m1_table()[n & 15]; }

// True for the dtypes convert_to_float accepts: F32, F64, F16, BF16, F8_E4M3, F8_E5M2, F8_E8M0, the integer
// types and BOOL (exact for integers up to 2^24).
bool is_float_convertible(DType dt);
// Element-wise conversion of a whole tensor (no scales). `out.size()` must equal the element count.
void convert_to_float(DType dt, std::span<const std::byte> bytes, std::span<float> out);
std::vector<float> convert_to_float(const TensorView& v);

// ---- block-scaled formats ----
struct ScaleView {
  DType dtype = DType::F8_E8M0;  // F8_E8M0, F32 or BF16
  std::vector<int64_t> shape;    // 2-D
  std::span<const std::byte> bytes;
  float at(int64_t row, int64_t col) const;  // no bounds check beyond the shape validated by callers
};
ScaleView scale_view(const TensorView& v);  // throws if the dtype cannot hold a scale or it is not 2-D

constexpr int64_t kFp8Block = 128;
constexpr int64_t kFp4Group = 32;
constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// FP8 E4M3 codes [rows, cols] with scales [ceil(rows/block), ceil(cols/block)] -> out [rows, cols].
// Throws trex::Error (prefixed by `what`) on a shape mismatch.
void dequant_fp8_block(std::span<const uint8_t> codes, int64_t rows, int64_t cols, const ScaleView& scale,
                       std::span<float> out, int64_t block = kFp8Block, std::string_view what = "fp8 weight");
void dequant_fp8_block_ref(std::span<const uint8_t> codes, int64_t rows, int64_t cols, const ScaleView& scale,
                           std::span<float> out, int64_t block = kFp8Block);

// FP4 E2M1 packed bytes [rows, cols/2] (cols = logical columns, even) with scales [rows, ceil(cols/group)]
// -> out [rows, cols].
void dequant_fp4_packed(std::span<const uint8_t> packed, int64_t rows, int64_t cols, const ScaleView& scale,
                        std::span<float> out, int64_t group = kFp4Group, std::string_view what = "fp4 weight");
void dequant_fp4_packed_ref(std::span<const uint8_t> packed, int64_t rows, int64_t cols, const ScaleView& scale,
                            std::span<float> out, int64_t group = kFp4Group);

// ---- naming (§11) ----
// Names a checkpoint may use for the scale of weight `name`: "<module>.scale" (official V4 inference
// names, `name` = "<module>.weight"), "<name>_scale_inv" (Hugging Face V3 style), "<name>.scale".
std::vector<std::string> scale_name_candidates(std::string_view weight_name);

}  // namespace trex::model
