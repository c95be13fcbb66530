// CPU presets and the sysfs reader (cpu_model.hpp).
#include "tune/cpu_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "util/atomic_file.hpp"
#include "util/error.hpp"

namespace trex::tune {

namespace {

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

int64_t parse_size(const std::string& text, const std::filesystem::path& where) {
  // "32K", "1024K", "32768K", "1M" or plain bytes
  size_t pos = 0;
  int64_t v = 0;
  try {
    v = std::stoll(text, &pos);
  } catch (const std::exception&) {
    throw Error(fmt::format("{}: not a size: '{}'", where.string(), text));
  }
  const std::string unit = text.substr(pos);
  if (unit.empty()) return v;
  if (unit == "K") return v * 1024;
  if (unit == "M") return v * 1024 * 1024;
  throw Error(fmt::format("{}: unknown size unit in '{}'", where.string(), text));
}

int64_t parse_int(const std::string& text, const std::filesystem::path& where) {
  try {
    size_t pos = 0;
    const int64_t v = std::stoll(text, &pos);
    if (pos == text.size()) return v;
  } catch (const std::exception&) {
  }
  throw Error(fmt::format("{}: not an integer: '{}'", where.string(), text));
}

// "0-1", "0,2,4-7" -> number of CPUs
int count_cpus(const std::string& list, const std::filesystem::path& where) {
  int n = 0;
  std::stringstream ss(list);
  std::string part;
  while (std::getline(ss, part, ',')) {
    const auto dash = part.find('-');
    if (dash == std::string::npos) {
      parse_int(part, where);
      ++n;
    } else {
      const int64_t a = parse_int(part.substr(0, dash), where), b = parse_int(part.substr(dash + 1), where);
      if (b < a) throw Error(fmt::format("{}: bad CPU range '{}'", where.string(), part));
      n += int(b - a + 1);
    }
  }
  return std::max(1, n);
}

CpuModel zen5() {
  CpuModel c;
  c.name = "zen5";
  c.vector_bits = 512;
  c.fma_pipes = 2;  // two full 512-bit FMA pipes (Hot Chips 2024)
  c.fma_latency = 4;
  c.ghz = 3.4;      // MACHINE.md: 220 GFLOP/s per core = 64 FLOP/cycle x ~3.4 GHz
  c.caches = {{1, 48 * 1024, 12, 64, 64, 1}, {2, 1024 * 1024, 16, 64, 1024, 1}, {3, 32LL << 20, 16, 64, 32768, 8}};
  return c;
}

CpuModel zen4() {
  CpuModel c;
  c.name = "zen4";
  c.vector_bits = 512;
  c.fma_pipes = 1;  // 512-bit operations issue as two 256-bit halves: one full-width FMA per cycle
  c.fma_latency = 4;
  c.ghz = 3.7;      // measured 117 GFLOP/s per core (register-only FP32 FMA loop, bench_gemm_shapes peak)
  c.caches = {{1, 32 * 1024, 8, 64, 64, 1}, {2, 1024 * 1024, 8, 64, 2048, 1}, {3, 32LL << 20, 16, 64, 32768, 2}};
  return c;
}

}  // namespace

const CacheLevel& CpuModel::level(int l) const {
  for (const auto& c : caches)
    if (c.level == l) return c;
  throw Error(fmt::format("cpu model '{}' has no L{} cache", name, l));
}

std::vector<std::string> cpu_preset_names() { return {"zen5", "zen4"}; }

CpuModel cpu_preset(const std::string& name) {
  if (name == "zen5") return zen5();
  if (name == "zen4") return zen4();
  throw Error(fmt::format("unknown CPU preset '{}' (zen5, zen4, or detect)", name));
}

CpuModel detect_cpu(const std::filesystem::path& sysfs_cpu, const std::filesystem::path& cpuinfo) {
  CpuModel c = zen5();
  std::string family;
  {
    std::ifstream in(cpuinfo);
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("cpu family", 0) == 0) {
        family = trim(line.substr(line.find(':') + 1));
        family.erase(0, family.find_first_not_of(' '));
        break;
      }
  }
  if (family == "25") c = zen4();
  c.name = family == "25" ? "zen4 (detected)" : family == "26" ? "zen5 (detected)"
                                                               : "unknown family '" + family + "', zen5 core parameters";
  c.caches.clear();
  const auto dir = sysfs_cpu / "cache";
  if (!std::filesystem::is_directory(dir)) throw Error(fmt::format("{}: no cache description", dir.string()));
  for (int i = 0; i < 16; ++i) {
    const auto idx = dir / fmt::format("index{}", i);
    if (!std::filesystem::is_directory(idx)) continue;
    auto field = [&](const char* name) { return trim(read_file(idx / name)); };
    const std::string type = field("type");
    if (type == "Instruction") continue;
    CacheLevel l;
    l.level = int(parse_int(field("level"), idx / "level"));
    l.bytes = parse_size(field("size"), idx / "size");
    l.ways = int(parse_int(field("ways_of_associativity"), idx / "ways_of_associativity"));
    l.line = int(parse_int(field("coherency_line_size"), idx / "coherency_line_size"));
    l.sets = parse_int(field("number_of_sets"), idx / "number_of_sets");
    l.shared_by = count_cpus(field("shared_cpu_list"), idx / "shared_cpu_list");
    if (l.bytes <= 0 || l.ways <= 0 || l.line <= 0 || l.sets <= 0)
      throw Error(fmt::format("{}: cache fields must be positive", idx.string()));
    c.caches.push_back(l);
  }
  std::sort(c.caches.begin(), c.caches.end(), [](const CacheLevel& a, const CacheLevel& b) { return a.level < b.level; });
  if (c.caches.empty()) throw Error(fmt::format("{}: no data cache found", dir.string()));
  return c;
}

nlohmann::ordered_json cpu_to_json(const CpuModel& c) {
  nlohmann::ordered_json j;
  j["name"] = c.name;
  j["vector_bits"] = c.vector_bits;
  j["vregs"] = c.vregs;
  j["fma_pipes"] = c.fma_pipes;
  j["fma_latency"] = c.fma_latency;
  j["ghz"] = c.ghz;
  j["peak_fp32_gflops"] = c.peak_fp32_gflops();
  auto caches = nlohmann::ordered_json::array();
  for (const auto& l : c.caches)
    caches.push_back({{"level", l.level}, {"bytes", l.bytes}, {"ways", l.ways}, {"line", l.line}, {"sets", l.sets},
                      {"shared_by", l.shared_by}});
  j["caches"] = caches;
  return j;
}

}  // namespace trex::tune
