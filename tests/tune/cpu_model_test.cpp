// tune::CpuModel: the sysfs reader on a fake cache tree (instruction caches skipped, shared CPU lists counted,
// bad files refused naming the file) and the BLIS analytical model's published values (PLANNER_AND_TUNER.md §B2).
#include "tune/cpu_model.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "temp_dir.hpp"
#include "tune/blis_model.hpp"
#include "util/error.hpp"

namespace {

namespace fs = std::filesystem;
using namespace trex::tune;

void write_index(const fs::path& cpu, int i, const char* level, const char* type, const char* size, const char* ways,
                 const char* sets, const char* shared) {
  const fs::path d = cpu / "cache" / ("index" + std::to_string(i));
  fs::create_directories(d);
  std::ofstream(d / "level") << level << "\n";
  std::ofstream(d / "type") << type << "\n";
  std::ofstream(d / "size") << size << "\n";
  std::ofstream(d / "ways_of_associativity") << ways << "\n";
  std::ofstream(d / "coherency_line_size") << "64\n";
  std::ofstream(d / "number_of_sets") << sets << "\n";
  std::ofstream(d / "shared_cpu_list") << shared << "\n";
}

TEST(TuneCpuModel, ReadsTheSysfsCacheTree) {
  const auto root = trex::testing::fresh_temp_dir("tune_sysfs");
  const auto cpu = root / "cpu0";
  write_index(cpu, 0, "1", "Data", "48K", "12", "64", "0");
  write_index(cpu, 1, "1", "Instruction", "32K", "8", "64", "0");
  write_index(cpu, 2, "2", "Unified", "1024K", "16", "1024", "0-1");
  write_index(cpu, 3, "3", "Unified", "32768K", "16", "32768", "0-3,8-11");
  std::ofstream(root / "cpuinfo") << "processor\t: 0\ncpu family\t: 26\nmodel name\t: AMD\n";
  const CpuModel c = detect_cpu(cpu, root / "cpuinfo");
  EXPECT_EQ(c.name, "zen5 (detected)");
  ASSERT_EQ(c.caches.size(), 3u);  // the instruction cache is not a data level
  EXPECT_EQ(c.level(1).bytes, 48 * 1024);
  EXPECT_EQ(c.level(1).ways, 12);
  EXPECT_EQ(c.level(2).shared_by, 2);
  EXPECT_EQ(c.level(3).shared_by, 8);
  EXPECT_EQ(c.level(3).share_per_cpu(), 4LL << 20);
  EXPECT_EQ(c.fma_pipes, 2);
  std::ofstream(root / "cpuinfo") << "cpu family\t: 25\n";
  EXPECT_EQ(detect_cpu(cpu, root / "cpuinfo").fma_pipes, 1);  // Zen 4: 512-bit FMAs at half rate
  EXPECT_THROW(c.level(4), trex::Error);
}

TEST(TuneCpuModel, BadSysfsFilesAreRefusedNamingTheFile) {
  const auto root = trex::testing::fresh_temp_dir("tune_sysfs_bad");
  const auto cpu = root / "cpu0";
  write_index(cpu, 0, "1", "Data", "48Q", "12", "64", "0");
  EXPECT_THAT([&] { detect_cpu(cpu, root / "nocpuinfo"); },
              ::testing::ThrowsMessage<trex::Error>(::testing::HasSubstr("index0/size")));
  write_index(cpu, 0, "1", "Data", "48K", "twelve", "64", "0");
  EXPECT_THROW(detect_cpu(cpu, root / "nocpuinfo"), trex::Error);
  write_index(cpu, 0, "1", "Data", "48K", "12", "64", "3-1");
  EXPECT_THROW(detect_cpu(cpu, root / "nocpuinfo"), trex::Error);
  fs::remove(cpu / "cache" / "index0" / "number_of_sets");
  EXPECT_THROW(detect_cpu(cpu, root / "nocpuinfo"), trex::Error);
  EXPECT_THROW(detect_cpu(root / "nowhere", root / "nocpuinfo"), trex::Error);
  EXPECT_THROW(cpu_preset("zen9"), trex::Error);
}

// §B2's derived values for Zen 5: FP32 m_r x n_r = 8 x 16 (8 accumulators), C_A = 3 ways, k_c = 384,
// m_c = 597 -> 592; BF16 (2-byte elements, k in pairs) k_c = 768.
TEST(TuneBlisModel, ReproducesTheDerivedZen5Blocking) {
  const CpuModel z5 = cpu_preset("zen5");
  const BlisBlocking f = blis_blocking(z5, 4);
  EXPECT_EQ(f.mr, 8);
  EXPECT_EQ(f.nr, 16);
  EXPECT_EQ(f.accumulator_regs, 8);
  EXPECT_EQ(f.l1_ways_a, 3);
  EXPECT_EQ(f.kc, 384);
  EXPECT_EQ(f.mc, 592);
  // n_c: (16 - 1 - ways of A) / 16 of the 4 MB share; the 909 KB A block takes 4 ways of 256 KB.
  EXPECT_EQ(f.l3_ways_a, 4);
  EXPECT_EQ(f.nc, (int64_t(11.0 / 16 * (4 << 20) / (384 * 4)) / 16) * 16);
  const BlisBlocking h = blis_blocking(z5, 2, 4, 2);
  EXPECT_EQ(h.kc, 768);
  EXPECT_EQ(h.mr, 8);
  EXPECT_EQ(h.nr, 16);
  // Zen 4 (one full-width FMA per cycle): half the accumulators in flight.
  const BlisBlocking z4 = blis_blocking(cpu_preset("zen4"), 4);
  EXPECT_EQ(z4.mr * z4.nr / 16, 4);
}

}  // namespace
