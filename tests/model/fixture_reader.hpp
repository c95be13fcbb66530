// Minimal reader of the committed twin fixtures (safetensors layout: u64 header length, JSON header, raw
// little-endian data). Test-only; F32 and I64 tensors.
#pragma once
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace trex::testing {

struct FixtureTensor {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<float> f32;
  std::vector<int64_t> i64;
};

struct Fixture {
  std::map<std::string, FixtureTensor> tensors;
  nlohmann::json metadata;
  const FixtureTensor& at(const std::string& name) const {
    auto it = tensors.find(name);
    if (it == tensors.end()) throw std::runtime_error("fixture has no tensor " + name);
    return it->second;
  }
};

inline Fixture read_fixture(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open fixture " + path + " (regenerate with tests/reference/model/gen_fixture.py)");
  uint64_t hlen = 0;
  in.read(reinterpret_cast<char*>(&hlen), 8);
  std::string header(hlen, '\0');
  in.read(header.data(), std::streamsize(hlen));
  auto j = nlohmann::json::parse(header);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Fixture fx;
  for (auto& [name, v] : j.items()) {
    if (name == "__metadata__") {
      fx.metadata = v;
      continue;
    }
    FixtureTensor t;
    t.dtype = v["dtype"].get<std::string>();
    t.shape = v["shape"].get<std::vector<int64_t>>();
    const size_t b = v["data_offsets"][0].get<size_t>(), e = v["data_offsets"][1].get<size_t>();
    if (e > data.size()) throw std::runtime_error("fixture tensor out of range: " + name);
    if (t.dtype == "F32") {
      t.f32.resize((e - b) / 4);
      std::memcpy(t.f32.data(), data.data() + b, e - b);
    } else if (t.dtype == "I64") {
      t.i64.resize((e - b) / 8);
      std::memcpy(t.i64.data(), data.data() + b, e - b);
    } else {
      throw std::runtime_error("fixture dtype " + t.dtype);
    }
    fx.tensors[name] = std::move(t);
  }
  return fx;
}

}  // namespace trex::testing
