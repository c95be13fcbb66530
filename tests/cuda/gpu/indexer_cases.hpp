// Op check of the device lightning indexer (cuda/indexer.hpp) against its CPU oracle nn::indexer_scores_ref /
// indexer_kl_ref (double sums, one query at a time), on seeded packed batches: several documents, the entry grid of
// ratio 4 restarting per document (laid out as model::detail::Seq::build does). The chain the model runs: scores,
// cuda::topk_rows on them (or the dense lists), the KL forward and backward on the device's own lists. The harness
// (op_check.hpp) drives it from the gpu tests (small and odd shapes) and from trex_cuda_op_perf (the model's sizes).
#pragma once
#include <cstdint>
#include <vector>

#include "nn/indexer.hpp"
#include "op_check.hpp"

namespace trex::cuda::check {

// random: normal inputs (about half the (query, head, entry) dots are ReLU-dead); dead_heads: also every odd
// indexer head's qI zero (qk = 0: dead on every entry) and some negative head weights; ties: every odd entry of a
// document a copy of the one before (equal scores: the top-k's lower-index rule decides).
enum class IndexerInputs { random, dead_heads, ties };

// A seeded batch (the inputs of both sides): N tokens in documents of doc_lens tokens, the ratio-4 entry grid.
struct IndexerBatch {
  int64_t N = 0, HI = 0, cI = 0, NE = 0, smax = 1, H = 0, hd = 0;
  std::vector<int32_t> nvis, base;
  std::vector<float> qI, lam, K, q, Ce;
  nn::Indexer host(int64_t queries) const;  // the first `queries` queries
};
IndexerBatch make_indexer_batch(const std::vector<int64_t>& doc_lens, int64_t HI, int64_t cI, int64_t H, int64_t hd,
                                IndexerInputs inputs);

// What the device wrote (or a CPU replay of its recipe, tests/cuda/indexer_ref_test.cpp): scores [N, smax], the lists
// [N, ks], row_loss [N] (without coeff), dqI, dlam, dK.
struct IndexerOutputs {
  std::vector<float> scores;
  std::vector<int32_t> sel;
  std::vector<double> row_loss;
  std::vector<float> dqI, dlam, dK;
};
// Every comparison of check_indexer against the reference (bounds in indexer_cases.cpp), the first Nq queries; ks
// the lists' stride (dense: smax).
std::vector<Compare> compare_indexer(const IndexerBatch& b, const IndexerOutputs& o, int64_t ks, bool dense,
                                     double coeff, int64_t Nq);

// doc_lens: the documents' token counts (N their sum); HI indexer heads of cI, H main heads of hd; topk (ignored
// when dense: the lists are every visible entry). Compared per element within bounds stated in indexer_cases.cpp:
// the scores against the reference, the device's selection equal to nn::topk_lower_index on the device's scores,
// the loss and dqI, dlam, dK against the reference run on the device's selection; every output the same bits on a
// second call. ref_queries > 0 (perf shapes): the reference on the first ref_queries queries (a prefix is its own
// problem), dK then checked for determinism only.
OpReport check_indexer(Harness& h, const std::vector<int64_t>& doc_lens, int64_t HI, int64_t cI, int64_t H,
                       int64_t hd, int64_t topk, bool dense, IndexerInputs inputs = IndexerInputs::random,
                       int64_t ref_queries = 0);

}  // namespace trex::cuda::check
