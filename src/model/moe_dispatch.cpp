// Expert-parallel dispatch plan of an MoE call (see EpPlan in model_impl.hpp): which rows go to which rank, the
// per-expert counts every rank receives, and the permutation between the rank-major order MPI_Alltoallv
// delivers and the expert-major order the grouped expert GEMMs need.
#include <fmt/format.h>

#include "model/model_impl.hpp"
#include "util/error.hpp"

#include <cstring>

namespace trex::model::detail {

void ep_plan(ProcessGroup& pg, const std::vector<int64_t>& counts, int64_t n_experts, EpPlan& p) {
  p.ranks = pg.size();
  p.rank = pg.rank();
  if (n_experts % p.ranks != 0)
    throw Error(fmt::format("expert parallelism: {} routed experts do not split evenly over {} ranks (--ep must "
                            "divide n_routed_experts)", n_experts, p.ranks));
  const int64_t El = n_experts / p.ranks;
  p.local_experts = El;
  p.first_expert = int64_t(p.rank) * El;
  if (p.ranks == 1) {
    p.counts = counts;
  } else {
    // experts are owned in contiguous ranges, so `counts` is already [rank][local expert]
    p.recv_counts.assign(counts.size(), 0);
    pg.all_to_all_counts(counts, p.recv_counts);
    p.send_rows.assign(size_t(p.ranks), 0);
    p.recv_rows.assign(size_t(p.ranks), 0);
    p.counts.assign(size_t(El), 0);
    for (int r = 0; r < p.ranks; ++r)
      for (int64_t j = 0; j < El; ++j) {
        p.send_rows[size_t(r)] += counts[size_t(r * El + j)];
        p.recv_rows[size_t(r)] += p.recv_counts[size_t(r * El + j)];
        p.counts[size_t(j)] += p.recv_counts[size_t(r * El + j)];
      }
  }
  p.offsets.assign(size_t(El) + 1, 0);
  for (int64_t j = 0; j < El; ++j) p.offsets[size_t(j) + 1] = p.offsets[size_t(j)] + p.counts[size_t(j)];
  p.rows = p.offsets[size_t(El)];
  p.perm.clear();
  if (p.ranks == 1) return;
  // received buffer: rank r's block, inside it local expert j's rows; expert order: expert j, inside it rank r
  std::vector<int64_t> block(size_t(p.ranks) * size_t(El), 0);
  int64_t at = 0;
  for (int r = 0; r < p.ranks; ++r)
    for (int64_t j = 0; j < El; ++j) {
      block[size_t(r * El + j)] = at;
      at += p.recv_counts[size_t(r * El + j)];
    }
  p.perm.resize(size_t(p.rows));
  int64_t i = 0;
  for (int64_t j = 0; j < El; ++j)
    for (int r = 0; r < p.ranks; ++r)
      for (int64_t q = 0; q < p.recv_counts[size_t(r * El + j)]; ++q) p.perm[size_t(i++)] = block[size_t(r * El + j)] + q;
}

void ep_to_expert_order(const EpPlan& p, const float* received, float* out, int64_t row_len) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < p.rows; ++i)
    std::memcpy(out + i * row_len, received + p.perm[size_t(i)] * row_len, size_t(row_len) * sizeof(float));
}

void ep_from_expert_order(const EpPlan& p, const float* in, float* to_send, int64_t row_len) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < p.rows; ++i)
    std::memcpy(to_send + p.perm[size_t(i)] * row_len, in + i * row_len, size_t(row_len) * sizeof(float));
}

}  // namespace trex::model::detail
