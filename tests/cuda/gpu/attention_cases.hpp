// Op check of the device attention core (cuda/sparse_attention.hpp) against its CPU oracle
// nn::sparse_attention_forward_ref / backward_ref (double accumulation, queries in order), on seeded packed-batch
// inputs: documents cutting the windows, compressed entries restarting at each document. The harness
// (op_check.hpp) drives it from the gpu tests (small and odd shapes) and from trex_cuda_op_perf (the model's sizes).
#pragma once
#include <cstdint>
#include <vector>

#include "op_check.hpp"

namespace trex::cuda::check {

// Which compressed entries each query lists: none (SWA); every visible one (HCA, the dense indexer warm-up); a
// top-k subset in selection order with the -1 padding skipped (CSA, as the model compacts the indexer's output).
enum class AttnLists { none, all_visible, subsets };

// N tokens in documents starting at doc_starts (the first must be 0), H heads of head_dim hd, window w; entries
// of `ratio` tokens per document (query at document position p sees floor((p + 1) / ratio)); subsets: topk per
// query. Compared per element within bounds stated in attention_cases.cpp: P and o against the double reference,
// the backward against the reference run on the device's own P and o; every output the same bits on a second
// call. ref_queries > 0 (perf shapes): the forward and dq of the first ref_queries queries only (a prefix is its own
// problem), the key and sink gradients then checked for determinism only.
OpReport check_sparse_attention(Harness& h, int64_t N, int64_t H, int64_t hd, int64_t window, AttnLists lists,
                                int64_t ratio, int64_t topk, const std::vector<int64_t>& doc_starts,
                                int64_t ref_queries = 0);

}  // namespace trex::cuda::check
