// tune::CpuModel: the hardware parameters the kernel tiling tuner reasons with (PLANNER_AND_TUNER.md §B1) —
// vector width, FMA pipes and latency, vector registers, clock, and each data cache level's size, ways, line and
// sets — read from Linux's sysfs cache description (detect_cpu) or taken from a preset (zen5: MACHINE.md's
// development machine; zen4: the 2-core VM this project runs on, whose 512-bit FMAs issue at half rate).
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trex::tune {

struct CacheLevel {
  int level = 0;
  int64_t bytes = 0;        // per instance
  int ways = 0, line = 0;
  int64_t sets = 0;
  int shared_by = 1;        // logical CPUs sharing one instance
  int64_t share_per_cpu() const { return bytes / std::max(1, shared_by); }
};

struct CpuModel {
  std::string name;
  int vector_bits = 512, vregs = 32;
  int fma_pipes = 2;        // full-width FMAs issued per cycle
  int fma_latency = 4;      // cycles
  double ghz = 3.4;
  std::vector<CacheLevel> caches;  // data / unified caches, L1 first
  const CacheLevel& level(int l) const;  // throws trex::Error if absent
  double peak_fp32_gflops() const { return double(vector_bits / 32) * 2.0 * fma_pipes * ghz; }
  double peak_bf16_gflops() const { return 2.0 * peak_fp32_gflops(); }  // vdpbf16ps: two products per lane
};

std::vector<std::string> cpu_preset_names();
CpuModel cpu_preset(const std::string& name);  // zen5, zen4
// Caches from <sysfs_cpu>/cache/index*/ (level, type, size, ways_of_associativity, coherency_line_size,
// number_of_sets, shared_cpu_list); the core parameters from the preset matching /proc/cpuinfo's family
// (25 → zen4, 26 → zen5; zen5 otherwise, said in the name). Throws trex::Error naming the file it cannot read.
CpuModel detect_cpu(const std::filesystem::path& sysfs_cpu = "/sys/devices/system/cpu/cpu0",
                    const std::filesystem::path& cpuinfo = "/proc/cpuinfo");
nlohmann::ordered_json cpu_to_json(const CpuModel& c);

}  // namespace trex::tune
