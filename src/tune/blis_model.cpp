// The BLIS analytical model's formulas (blis_model.hpp), in the paper's order.
#include "tune/blis_model.hpp"

#include <algorithm>
#include <cmath>

#include "util/error.hpp"

namespace trex::tune {

BlisBlocking blis_blocking(const CpuModel& cpu, int elem_bytes, int acc_bytes, int k_step) {
  if (elem_bytes <= 0 || acc_bytes <= 0 || k_step <= 0) throw Error("blis_blocking: sizes must be positive");
  BlisBlocking b;
  // Registers: enough independent accumulators to cover L_fma · N_fma FMAs in flight.
  const int64_t nvec = cpu.vector_bits / (8 * acc_bytes);
  const int64_t need = nvec * cpu.fma_latency * cpu.fma_pipes;
  b.nr = int64_t(std::ceil(std::sqrt(double(need)) / double(nvec))) * nvec;
  b.mr = (need + b.nr - 1) / b.nr;
  b.accumulator_regs = int(b.mr * b.nr / nvec);
  if (b.accumulator_regs + b.nr / nvec + 1 > cpu.vregs) throw Error("blis_blocking: the micro-tile needs more registers than the core has");
  // L1 -> k_c: one way for C, the rest split between the A and B micro-panels in proportion m_r : n_r.
  const CacheLevel& l1 = cpu.level(1);
  b.l1_ways_a = int(double(l1.ways - 1) / (1.0 + double(b.nr) / double(b.mr)));
  b.kc = int64_t(b.l1_ways_a) * l1.sets * l1.line / (b.mr * elem_bytes);
  b.kc = std::max<int64_t>(k_step, b.kc / k_step * k_step);
  // L2 -> m_c: two ways reserved (B micro-panel, C).
  const CacheLevel& l2 = cpu.level(2);
  b.mc = int64_t(double(l2.ways - 2) * double(l2.bytes) / (double(l2.ways) * double(b.kc) * elem_bytes));
  b.mc = std::max(b.mr, b.mc / b.mr * b.mr);
  // L3 -> n_c: one way reserved, minus the ways the A block takes, of this CPU's share.
  const CacheLevel& l3 = cpu.level(3);
  const double way_bytes = double(l3.share_per_cpu()) / double(l3.ways);
  b.l3_ways_a = int(std::ceil(double(b.mc * b.kc * elem_bytes) / way_bytes));
  const double room = double(l3.ways - 1 - b.l3_ways_a) / double(l3.ways) * double(l3.share_per_cpu());
  b.nc = std::max(b.nr, int64_t(room / double(b.kc * elem_bytes)) / b.nr * b.nr);
  return b;
}

}  // namespace trex::tune
