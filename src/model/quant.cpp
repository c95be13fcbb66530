// Scalar number formats and block dequantisation (see quant.hpp).
#include "model/quant.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "util/error.hpp"

namespace trex::model {

float bf16_to_float(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

uint16_t float_to_bf16(float x) {
  uint32_t u = std::bit_cast<uint32_t>(x);
  if (std::isnan(x)) return static_cast<uint16_t>((u >> 16) | 0x0040);  // keep sign, force quiet bit
  uint32_t rounding = 0x7FFF + ((u >> 16) & 1);
  return static_cast<uint16_t>((u + rounding) >> 16);
}

float f16_to_float(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  float v;
  if (exp == 0x1F)
    v = man ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else if (exp == 0)
    v = std::ldexp(static_cast<float>(man), -24);  // subnormal: man/1024 * 2^-14
  else
    v = std::ldexp(static_cast<float>(man | 0x400), static_cast<int>(exp) - 25);  // (1024+man)/1024 * 2^(e-15)
  return sign ? -v : v;
}

float fp8_e4m3_to_float_ref(uint8_t c) {
  const int sign = c >> 7, exp = (c >> 3) & 0xF, man = c & 0x7;
  float v;
  if (exp == 0xF && man == 0x7)
    v = std::numeric_limits<float>::quiet_NaN();  // the only NaN pattern; E4M3FN has no infinity
  else if (exp == 0)
    v = std::ldexp(static_cast<float>(man), -9);  // subnormal: man/8 * 2^(1-7)
  else
    v = std::ldexp(static_cast<float>(8 + man), exp - 10);  // (1 + man/8) * 2^(exp-7)
  return sign ? -v : v;
}

float fp8_e5m2_to_float_ref(uint8_t c) {
  const int sign = c >> 7, exp = (c >> 2) & 0x1F, man = c & 0x3;
  float v;
  if (exp == 0x1F)
    v = man ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else if (exp == 0)
    v = std::ldexp(static_cast<float>(man), -16);  // man/4 * 2^(1-15)
  else
    v = std::ldexp(static_cast<float>(4 + man), exp - 17);  // (1 + man/4) * 2^(exp-15)
  return sign ? -v : v;
}

float e8m0_to_float_ref(uint8_t c) {
  if (c == 0xFF) return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, static_cast<int>(c) - 127);  // 2^-127 is a float subnormal: still exact
}

float fp4_e2m1_to_float_ref(uint8_t n) {
  const int sign = (n >> 3) & 1, exp = (n >> 1) & 0x3, man = n & 1;
  // bias 1; exp 0 is subnormal (man * 0.5); codes 0..7 -> 0, 0.5, 1, 1.5, 2, 3, 4, 6
  float v = exp == 0 ? 0.5f * static_cast<float>(man) : std::ldexp(1.0f + 0.5f * static_cast<float>(man), exp - 1);
  return sign ? -v : v;
}

namespace {
template <size_t N, typename F>
std::array<float, N> make_table(F f) {
  std::array<float, N> t{};
  for (size_t i = 0; i < N; ++i) t[i] = f(static_cast<uint8_t>(i));
  return t;
}
}  // namespace

const std::array<float, 256>& fp8_e4m3_table() {
  static const auto t = make_table<256>(fp8_e4m3_to_float_ref);
  return t;
}
const std::array<float, 256>& fp8_e5m2_table() {
  static const auto t = make_table<256>(fp8_e5m2_to_float_ref);
  return t;
}
const std::array<float, 256>& e8m0_table() {
  static const auto t = make_table<256>(e8m0_to_float_ref);
  return t;
}
const std::array<float, 16>& fp4_e2m1_table() {
  static const auto t = make_table<16>(fp4_e2m1_to_float_ref);
  return t;
}

bool is_float_convertible(DType dt) {
  switch (dt) {
    case DType::F32: case DType::F64: case DType::F16: case DType::BF16: case DType::F8_E4M3:
    case DType::F8_E5M2: case DType::F8_E8M0: case DType::BOOL: case DType::U8: case DType::I8:
    case DType::I16: case DType::U16: case DType::I32: case DType::U32: case DType::I64: case DType::U64:
      return true;
    default:
      return false;
  }
}

namespace {
template <typename T>
void convert_loop(const std::byte* src, std::span<float> out) {
  for (size_t i = 0; i < out.size(); ++i) {
    T v;
    std::memcpy(&v, src + i * sizeof(T), sizeof(T));
    out[i] = static_cast<float>(v);
  }
}
template <typename F>
void convert_u8(const std::byte* src, std::span<float> out, F f) {
  for (size_t i = 0; i < out.size(); ++i) out[i] = f(static_cast<uint8_t>(src[i]));
}
template <typename F>
void convert_u16(const std::byte* src, std::span<float> out, F f) {
  for (size_t i = 0; i < out.size(); ++i) {
    uint16_t v;
    std::memcpy(&v, src + 2 * i, 2);
    out[i] = f(v);
  }
}
}  // namespace

void convert_to_float(DType dt, std::span<const std::byte> bytes, std::span<float> out) {
  if (!is_float_convertible(dt))
    throw Error("cannot convert dtype " + std::string(dtype_name(dt)) + " to float32 element-wise");
  if (bytes.size() != out.size() * static_cast<size_t>(dtype_bits(dt) / 8))
    throw Error("convert_to_float: " + std::to_string(bytes.size()) + " bytes of " + std::string(dtype_name(dt)) +
                " do not hold " + std::to_string(out.size()) + " elements");
  const std::byte* p = bytes.data();
  switch (dt) {
    case DType::F32: if (!out.empty()) std::memcpy(out.data(), p, bytes.size()); break;
    case DType::F64: convert_loop<double>(p, out); break;
    case DType::F16: convert_u16(p, out, f16_to_float); break;
    case DType::BF16: convert_u16(p, out, bf16_to_float); break;
    case DType::F8_E4M3: { const auto& t = fp8_e4m3_table(); convert_u8(p, out, [&](uint8_t c) { return t[c]; }); break; }
    case DType::F8_E5M2: { const auto& t = fp8_e5m2_table(); convert_u8(p, out, [&](uint8_t c) { return t[c]; }); break; }
    case DType::F8_E8M0: { const auto& t = e8m0_table(); convert_u8(p, out, [&](uint8_t c) { return t[c]; }); break; }
    case DType::BOOL: convert_u8(p, out, [](uint8_t c) { return c ? 1.0f : 0.0f; }); break;
    case DType::U8: convert_loop<uint8_t>(p, out); break;
    case DType::I8: convert_loop<int8_t>(p, out); break;
    case DType::I16: convert_loop<int16_t>(p, out); break;
    case DType::U16: convert_loop<uint16_t>(p, out); break;
    case DType::I32: convert_loop<int32_t>(p, out); break;
    case DType::U32: convert_loop<uint32_t>(p, out); break;
    case DType::I64: convert_loop<int64_t>(p, out); break;
    case DType::U64: convert_loop<uint64_t>(p, out); break;
    default: break;
  }
}

std::vector<float> convert_to_float(const TensorView& v) {
  std::vector<float> out(static_cast<size_t>(v.info->numel()));
  convert_to_float(v.info->dtype, v.bytes, out);
  return out;
}

// ---- scales ----

float ScaleView::at(int64_t row, int64_t col) const {
  const size_t i = static_cast<size_t>(row * shape[1] + col);
  switch (dtype) {
    case DType::F8_E8M0: return e8m0_to_float(static_cast<uint8_t>(bytes[i]));
    case DType::BF16: {
      uint16_t b;
      std::memcpy(&b, bytes.data() + 2 * i, 2);
      return bf16_to_float(b);
    }
    default: {
      float f;
      std::memcpy(&f, bytes.data() + 4 * i, 4);
      return f;
    }
  }
}

ScaleView scale_view(const TensorView& v) {
  const TensorInfo& t = *v.info;
  if (t.dtype != DType::F8_E8M0 && t.dtype != DType::F32 && t.dtype != DType::BF16)
    throw Error("scale tensor '" + t.name + "' has dtype " + std::string(dtype_name(t.dtype)) +
                "; expected F8_E8M0, F32 or BF16");
  if (t.shape.size() != 2)
    throw Error("scale tensor '" + t.name + "' has shape " + shape_str(t.shape) + "; expected 2-D");
  return ScaleView{t.dtype, t.shape, v.bytes};
}

namespace {
void check_scale_shape(const ScaleView& s, int64_t want_rows, int64_t want_cols, std::string_view what,
                       const char* rule) {
  if (s.shape.size() != 2 || s.shape[0] != want_rows || s.shape[1] != want_cols)
    throw Error(std::string(what) + ": scale shape " + shape_str(s.shape) + " does not match " + rule + " = [" +
                std::to_string(want_rows) + ", " + std::to_string(want_cols) + "]");
  const size_t esz = s.dtype == DType::F8_E8M0 ? 1 : s.dtype == DType::BF16 ? 2 : 4;
  if (s.bytes.size() != static_cast<size_t>(want_rows * want_cols) * esz)
    throw Error(std::string(what) + ": scale byte size does not match its shape");
}
void check_sizes(size_t got_in, size_t want_in, size_t got_out, size_t want_out, std::string_view what) {
  if (got_in != want_in)
    throw Error(std::string(what) + ": " + std::to_string(got_in) + " input bytes, expected " + std::to_string(want_in));
  if (got_out != want_out)
    throw Error(std::string(what) + ": output holds " + std::to_string(got_out) + " floats, expected " +
                std::to_string(want_out));
}
}  // namespace

void dequant_fp8_block(std::span<const uint8_t> codes, int64_t rows, int64_t cols, const ScaleView& scale,
                       std::span<float> out, int64_t block, std::string_view what) {
  if (rows < 0 || cols < 0 || block <= 0) throw Error(std::string(what) + ": bad dimensions");
  check_sizes(codes.size(), static_cast<size_t>(rows * cols), out.size(), static_cast<size_t>(rows * cols), what);
  const int64_t sc = ceil_div(cols, block);
  check_scale_shape(scale, ceil_div(rows, block), sc, what, "[ceil(rows/128), ceil(cols/128)]");
  const auto& lut = fp8_e4m3_table();
  // Rows are independent: parallel over rows for large tensors (element-wise, so deterministic).
#pragma omp parallel for schedule(static) if (rows * cols > (1 << 18))
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* src = codes.data() + r * cols;
    float* dst = out.data() + r * cols;
    for (int64_t b = 0; b < sc; ++b) {
      const float s = scale.at(r / block, b);
      const int64_t c1 = std::min(cols, (b + 1) * block);
      for (int64_t c = b * block; c < c1; ++c) dst[c] = lut[src[c]] * s;
    }
  }
}

void dequant_fp8_block_ref(std::span<const uint8_t> codes, int64_t rows, int64_t cols, const ScaleView& scale,
                           std::span<float> out, int64_t block) {
  check_sizes(codes.size(), static_cast<size_t>(rows * cols), out.size(), static_cast<size_t>(rows * cols), "fp8 ref");
  check_scale_shape(scale, ceil_div(rows, block), ceil_div(cols, block), "fp8 ref", "[ceil(rows/128), ceil(cols/128)]");
  for (int64_t o = 0; o < rows; ++o)
    for (int64_t i = 0; i < cols; ++i)
      out[static_cast<size_t>(o * cols + i)] =
          fp8_e4m3_to_float_ref(codes[static_cast<size_t>(o * cols + i)]) * scale.at(o / block, i / block);
}

void dequant_fp4_packed(std::span<const uint8_t> packed, int64_t rows, int64_t cols, const ScaleView& scale,
                        std::span<float> out, int64_t group, std::string_view what) {
  if (rows < 0 || cols < 0 || group <= 0 || group % 2 != 0) throw Error(std::string(what) + ": bad dimensions");
  if (cols % 2 != 0) throw Error(std::string(what) + ": packed FP4 needs an even number of columns, got " + std::to_string(cols));
  check_sizes(packed.size(), static_cast<size_t>(rows * cols / 2), out.size(), static_cast<size_t>(rows * cols), what);
  const int64_t sc = ceil_div(cols, group);
  check_scale_shape(scale, rows, sc, what, "[rows, ceil(cols/32)]");
  const auto& lut = fp4_e2m1_table();
#pragma omp parallel for schedule(static) if (rows * cols > (1 << 18))
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* src = packed.data() + r * (cols / 2);
    float* dst = out.data() + r * cols;
    for (int64_t g = 0; g < sc; ++g) {
      const float s = scale.at(r, g);
      const int64_t c1 = std::min(cols, (g + 1) * group);
      for (int64_t c = g * group; c < c1; c += 2) {  // group is even, so a byte never straddles two groups
        const uint8_t byte = src[c / 2];
        dst[c] = lut[byte & 0xF] * s;
        dst[c + 1] = lut[byte >> 4] * s;
      }
    }
  }
}

void dequant_fp4_packed_ref(std::span<const uint8_t> packed, int64_t rows, int64_t cols, const ScaleView& scale,
                            std::span<float> out, int64_t group) {
  check_sizes(packed.size(), static_cast<size_t>(rows * cols / 2), out.size(), static_cast<size_t>(rows * cols), "fp4 ref");
  check_scale_shape(scale, rows, ceil_div(cols, group), "fp4 ref", "[rows, ceil(cols/32)]");
  for (int64_t o = 0; o < rows; ++o)
    for (int64_t i = 0; i < cols; ++i) {
      const uint8_t byte = packed[static_cast<size_t>(o * (cols / 2) + i / 2)];
      const uint8_t nibble = (i % 2 == 0) ? (byte & 0xF) : (byte >> 4);  // element 2j low, 2j+1 high
      out[static_cast<size_t>(o * cols + i)] = fp4_e2m1_to_float_ref(nibble) * scale.at(o, i / group);
    }
}

std::vector<std::string> scale_name_candidates(std::string_view weight_name) {
  std::vector<std::string> out;
  const std::string w(weight_name);
  constexpr std::string_view suffix = ".weight";
  if (w.size() > suffix.size() && w.ends_with(suffix)) out.push_back(w.substr(0, w.size() - suffix.size()) + ".scale");
  out.push_back(w + "_scale_inv");
  out.push_back(w + ".scale");
  return out;
}

}  // namespace trex::model
