// The BLIS analytical model (Low, Igual, Smith, Quintana-Ortí, TOMS 2016; PLANNER_AND_TUNER.md §B2): register
// micro-tile m_r × n_r and cache blocks k_c (L1), m_c (L2), n_c (L3) of a GotoBLAS GEMM from the core's FMA
// latency and pipes and each cache's ways, sets and line size. The same formulas as LLVM Polly's matmul
// optimizer. Used as the tuner's reference point and printed by `trex tune cpu`.
#pragma once
#include <cstdint>

#include "tune/cpu_model.hpp"

namespace trex::tune {

struct BlisBlocking {
  int64_t mr = 0, nr = 0, kc = 0, mc = 0, nc = 0;
  int accumulator_regs = 0;  // m_r·n_r / N_vec
  int l1_ways_a = 0;         // C_A: L1 ways given to the A micro-panel
  int l3_ways_a = 0;         // L3 ways the packed A block takes
};

// elem_bytes: bytes of a stored A/B element (4 fp32, 2 bf16); acc_bytes: bytes of an accumulator lane (4).
// k_step: k_c is rounded down to a multiple of it (2 for bf16 pairs).
BlisBlocking blis_blocking(const CpuModel& cpu, int elem_bytes, int acc_bytes = 4, int k_step = 1);

}  // namespace trex::tune
