// safetensors reader/writer: round trip, a file laid out by the Python library's rules, and malformed
// inputs (truncated, bad JSON, overlaps, gaps, wrong sizes, huge header) that must raise trex::Error.
#include "model/safetensors.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "model/quant.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"

namespace fs = std::filesystem;
using namespace trex::model;

namespace {

const fs::path kFixture = fs::path(TREX_SOURCE_DIR) / "tests/model/data/python_format.safetensors";

fs::path temp_dir() {
  fs::path d = fs::temp_directory_path() / ("trex_st_test_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

std::string with_header(const std::string& json, const std::string& data) {
  std::string s(8, '\0');
  uint64_t n = json.size();
  std::memcpy(s.data(), &n, 8);
  return s + json + data;
}

void expect_error(const std::string& bytes, const std::string& needle) {
  try {
    SafetensorsFile::from_bytes(bytes, "bad.safetensors");
    FAIL() << "no error; expected one containing '" << needle << "'";
  } catch (const trex::Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("bad.safetensors"), std::string::npos) << what;
    EXPECT_NE(what.find(needle), std::string::npos) << what;
  }
}

}  // namespace

TEST(Safetensors, RoundTripAllDtypesThroughFile) {
  std::vector<float> f32 = {1.5f, -2.0f, 0.0f, 3.25f, 1e-30f, -7.0f};
  std::vector<double> f64 = {1.0 / 3.0, -1e300};
  std::vector<int64_t> i64 = {-1, 0, int64_t(1) << 40};
  std::vector<uint16_t> bf16 = {float_to_bf16(1.0f), float_to_bf16(-0.5f)};
  std::vector<uint8_t> fp8 = {0x00, 0x7E, 0xFF, 0x01};
  std::vector<uint8_t> f4 = {0x21};  // F4 [2]: two nibbles in one byte
  std::vector<TensorToWrite> ts = {
      {"b.f32", DType::F32, {2, 3}, as_bytes_of(f32)},
      {"a.f64", DType::F64, {2}, as_bytes_of(f64)},
      {"z.i64", DType::I64, {3}, as_bytes_of(i64)},
      {"m.bf16", DType::BF16, {1, 2}, as_bytes_of(bf16)},
      {"q.fp8", DType::F8_E4M3, {2, 2}, as_bytes_of(fp8)},
      {"q.f4", DType::F4, {2}, as_bytes_of(f4)},
      {"scalar.empty", DType::F32, {0}, {}},
  };
  fs::path p = temp_dir() / "rt.safetensors";
  write_safetensors(p, ts, {{"format", "pt"}, {"note", "round trip"}});
  auto f = SafetensorsFile::open(p);
  EXPECT_EQ(f.tensors().size(), ts.size());
  EXPECT_EQ(f.metadata().at("format"), "pt");
  EXPECT_EQ(f.metadata().at("note"), "round trip");
  EXPECT_EQ((8 + f.header_bytes()) % 8, 0u);
  for (const auto& t : ts) {
    const TensorInfo& info = f.at(t.name);
    EXPECT_EQ(info.dtype, t.dtype) << t.name;
    EXPECT_EQ(info.shape, t.shape) << t.name;
    auto v = f.view(info);
    ASSERT_EQ(v.bytes.size(), t.bytes.size()) << t.name;
    if (!t.bytes.empty()) {
      EXPECT_EQ(0, std::memcmp(v.bytes.data(), t.bytes.data(), t.bytes.size())) << t.name;
    }
  }
  // Same tensors, same bytes: file and in-memory serialisation agree and are deterministic.
  EXPECT_EQ(trex::read_file(p), serialize_safetensors(ts, {{"format", "pt"}, {"note", "round trip"}}));
  // Data order: widest dtype enum first (I64, F64, F32, BF16, F8_E4M3, F4), then by name.
  std::vector<std::string> order;
  for (const auto& t : f.tensors()) order.push_back(t.name);
  EXPECT_EQ(order, (std::vector<std::string>{"z.i64", "a.f64", "b.f32", "scalar.empty", "m.bf16", "q.fp8", "q.f4"}));
  fs::remove_all(p.parent_path());
}

TEST(Safetensors, WriterRejectsBadInput) {
  std::vector<float> v(3);
  std::vector<TensorToWrite> wrong_size = {{"x", DType::F32, {2, 2}, as_bytes_of(v)}};
  EXPECT_THROW(serialize_safetensors(wrong_size), trex::Error);
  std::vector<TensorToWrite> dup = {{"x", DType::F32, {3}, as_bytes_of(v)}, {"x", DType::F32, {3}, as_bytes_of(v)}};
  EXPECT_THROW(serialize_safetensors(dup), trex::Error);
  std::vector<TensorToWrite> reserved = {{"__metadata__", DType::F32, {3}, as_bytes_of(v)}};
  EXPECT_THROW(serialize_safetensors(reserved), trex::Error);
  std::vector<uint8_t> b(1);
  std::vector<TensorToWrite> odd_f4 = {{"x", DType::F4, {3}, as_bytes_of(b)}};
  EXPECT_THROW(serialize_safetensors(odd_f4), trex::Error);
  // A failed write leaves no file behind.
  fs::path p = temp_dir() / "never.safetensors";
  EXPECT_THROW(write_safetensors(p, wrong_size), trex::Error);
  EXPECT_FALSE(fs::exists(p));
  fs::remove_all(p.parent_path());
}

TEST(Safetensors, ReadsFileWrittenByPythonFormatRules) {
  ASSERT_TRUE(fs::exists(kFixture)) << "fixture missing: " << kFixture
                                    << " (regenerate with tests/model/data/make_safetensors_fixture.py)";
  auto f = SafetensorsFile::open(kFixture);
  EXPECT_EQ(f.metadata().at("format"), "pt");
  EXPECT_EQ(f.tensors().size(), 19u);

  auto f32 = convert_to_float(f.view("plain.f32"));
  ASSERT_EQ(f32.size(), 12u);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(f32[i], i * 0.5f - 1.0f);
  EXPECT_EQ(f.at("plain.f32").shape, (std::vector<int64_t>{3, 4}));

  auto f64 = convert_to_float(f.view("plain.f64"));
  EXPECT_EQ(f64[0], static_cast<float>(1.0 / 3.0));
  EXPECT_EQ(f64[1], -2.5f);
  EXPECT_TRUE(std::isinf(f64[2]));  // 1e300 does not fit a float

  auto f16 = convert_to_float(f.view("plain.f16"));
  std::vector<float> want16 = {0.0f, 1.0f, -2.0f, 65504.0f, std::ldexp(1.0f, -14), std::ldexp(1.0f, -24),
                               INFINITY, -INFINITY};
  EXPECT_EQ(f16, want16);

  EXPECT_EQ(convert_to_float(f.view("plain.bf16")), convert_to_float(f.view("plain.bf16.expected")));
  // Python rounded to nearest even exactly like float_to_bf16.
  std::vector<float> src = {1.0f, -3.140625f, 1.00390625f, 1.01171875f, 3.0e38f, -1e-40f, 0.0f, 65536.5f};
  auto bfv = f.view("plain.bf16");
  for (size_t i = 0; i < src.size(); ++i) {
    uint16_t b;
    std::memcpy(&b, bfv.bytes.data() + 2 * i, 2);
    EXPECT_EQ(b, float_to_bf16(src[i])) << i;
  }

  auto tid = f.view("ffn.gate.tid2eid");
  std::vector<int64_t> ids(6);
  std::memcpy(ids.data(), tid.bytes.data(), 48);
  EXPECT_EQ(ids, (std::vector<int64_t>{0, 5, 7, 2, -1, int64_t(1) << 40}));
  EXPECT_EQ(convert_to_float(f.view("plain.i32")), (std::vector<float>{-2147483648.0f, 0.0f, 2147483647.0f}));
  EXPECT_EQ(convert_to_float(f.view("plain.i8")), (std::vector<float>{-128, -1, 0, 127}));
  EXPECT_EQ(convert_to_float(f.view("plain.u8")), (std::vector<float>{0, 1, 255}));
  EXPECT_EQ(convert_to_float(f.view("plain.bool")), (std::vector<float>{1, 0, 1}));
  EXPECT_EQ(f.at("plain.empty").shape, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(f.at("plain.empty").nbytes(), 0u);
}

TEST(Safetensors, WriterReproducesPythonLayoutByteForByte) {
  ASSERT_TRUE(fs::exists(kFixture)) << "fixture missing: " << kFixture;
  auto f = SafetensorsFile::open(kFixture);
  std::vector<TensorToWrite> ts;
  for (const auto& t : f.tensors()) ts.push_back({t.name, t.dtype, t.shape, f.view(t).bytes});
  std::reverse(ts.begin(), ts.end());  // input order must not matter
  EXPECT_EQ(serialize_safetensors(ts, f.metadata()), trex::read_file(kFixture));
}

TEST(Safetensors, MalformedHeadersAreErrors) {
  const std::string ok_json = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  const std::string data8(8, '\1');
  EXPECT_NO_THROW(SafetensorsFile::from_bytes(with_header(ok_json, data8), "ok"));

  expect_error("", "too short");
  expect_error(std::string(7, '\0'), "too short");
  {  // header length beyond the file
    std::string s = with_header(ok_json, data8);
    s.resize(20);
    expect_error(s, "truncated");
  }
  {  // data truncated
    std::string s = with_header(ok_json, data8);
    s.pop_back();
    expect_error(s, "past the data buffer");
  }
  {  // huge header length
    std::string s(16, '{');
    uint64_t n = uint64_t(1) << 62;
    std::memcpy(s.data(), &n, 8);
    expect_error(s, "exceeds the limit");
  }
  expect_error(with_header(R"({"a":)", ""), "invalid header JSON");
  expect_error(with_header(R"([1,2])", ""), "does not start with '{'");
  expect_error(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", data8),
               "duplicate tensor name 'a'");
  expect_error(with_header(R"({"a":{"dtype":"F33","shape":[2],"data_offsets":[0,8]}})", data8), "unknown dtype 'F33'");
  expect_error(with_header(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", data8), "non-negative");
  expect_error(with_header(R"({"a":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})", data8), "non-negative");
  expect_error(with_header(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", data8), "needs 12 bytes");
  expect_error(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", data8), "end < begin");
  expect_error(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", data8), "data_offsets");
  expect_error(with_header(R"({"a":{"dtype":"F32","shape":[2]}})", data8), "data_offsets");
  expect_error(with_header(R"({"a":{"shape":[2],"data_offsets":[0,8]}})", data8), "dtype");
  expect_error(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}})", data8), "unknown field 'x'");
  expect_error(with_header(R"({"a":[1]})", data8), "not an object");
  expect_error(with_header(R"({"__metadata__":{"k":1}})", ""), "__metadata__");
  // Overlapping tensors, gaps, uncovered trailing bytes.
  expect_error(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", data8),
               "overlaps");
  expect_error(with_header(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", data8), "gap");
  expect_error(with_header(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", data8), "trailing bytes");
  // Shape products that overflow.
  expect_error(with_header(R"({"a":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", data8),
               "overflows");
  expect_error(with_header(R"({"a":{"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,8]}})", data8),
               "overflows");
  expect_error(with_header(R"({"a":{"dtype":"F4","shape":[3],"data_offsets":[0,8]}})", data8), "whole bytes");
  // Invalid UTF-8 inside the JSON.
  expect_error(with_header("{\"\xff\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", data8), "invalid header JSON");
}

TEST(Safetensors, OpenErrorsNameTheFile) {
  fs::path d = temp_dir();
  try {
    SafetensorsFile::open(d / "missing.safetensors");
    FAIL();
  } catch (const trex::Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.safetensors"), std::string::npos);
  }
  EXPECT_THROW(SafetensorsFile::open(d), trex::Error);  // a directory
  trex::write_file_atomic(d / "empty.safetensors", "");
  EXPECT_THROW(SafetensorsFile::open(d / "empty.safetensors"), trex::Error);
  fs::remove_all(d);
}

// Random corruption of a valid file: every outcome is a clean parse or a trex::Error, never a crash.
TEST(Safetensors, FuzzedFilesNeverCrash) {
  const std::string good = trex::read_file(kFixture);
  ASSERT_GT(good.size(), 100u) << "fixture missing: " << kFixture;
  trex::Rng rng(1234);
  int errors = 0, parsed = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s = good;
    const uint64_t hdr_end = 8 + [&] { uint64_t n; std::memcpy(&n, s.data(), 8); return n; }();
    switch (rng.next_u64() % 4) {
      case 0: s.resize(rng.next_u64() % s.size()); break;  // truncate anywhere
      case 1:                                           // flip bytes inside the header
        for (int k = 0; k < 3; ++k) s[rng.next_u64() % hdr_end] ^= static_cast<char>(1 + rng.next_u64() % 255);
        break;
      case 2: s[rng.next_u64() % 8] = static_cast<char>(rng.next_u64()); break;  // corrupt the length
      default: {  // replace a digit in the header with another digit (shapes, offsets change)
        size_t pos = 8 + rng.next_u64() % (hdr_end - 8);
        while (pos < hdr_end && !std::isdigit(static_cast<unsigned char>(s[pos]))) ++pos;
        if (pos < hdr_end) s[pos] = static_cast<char>('0' + rng.next_u64() % 10);
      }
    }
    try {
      auto f = SafetensorsFile::from_bytes(s, "fuzz");
      for (const auto& t : f.tensors()) {  // every view stays inside the input
        ASSERT_LE(8 + f.header_bytes() + t.end, s.size());
        auto v = f.view(t);
        unsigned sum = 0;
        for (std::byte b : v.bytes) sum += static_cast<unsigned>(b);  // touch every byte (ASan would flag)
        (void)sum;
      }
      ++parsed;
    } catch (const trex::Error&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 1000);
  EXPECT_GT(parsed, 0);  // some mutations (e.g. in metadata text) leave a valid file
}
