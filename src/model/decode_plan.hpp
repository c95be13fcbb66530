// trex::model::DecodePlan: the index lists of one step of a batched incremental decoder whose caches are flat
// row pools of fixed capacity (the GPU decoder's, cuda/gpu_decode.hpp; host C++ so that it is tested here, without
// a device). model::Decoder (decode.cpp) keeps per-sequence vectors and walks each token in order; a device wants
// every row of a step at once, over buffers allocated once. The plan says, for the step's rows, where every key,
// compressor row and compressed entry lives, so that the step runs as the training kernels over gathered lists:
//
//   key pool of a layer (head_dim-wide rows, K == V):  [rows: this step's new keys][sequences x window: the
//     sliding-window rings][sequences x tokens/m: the compressed entries (layers with ratio m)]
//   compressor pool (C and Z, W-wide rows):            [rows: this step's projected rows][sequences x 2m: rings]
//   indexer entry pool (CSA, index_head_dim rows):     [sequences x tokens/m]
//
// Attention of row r (position p of a sequence that held L tokens before the step) is nn::SparseAttention over the
// key pool: its window part ws[r] .. r are this step's rows of its sequence (positions max(L, p - w + 1) .. p), and
// its list `comp` holds the older window keys (ring rows of positions max(0, p - w + 1) .. L - 1, oldest first)
// followed by its compressed entries (HCA: every entry complete by p; CSA: the indexer's top-k, appended on the
// device after the selection). The same keys as model::Decoder's, in another summation order.
//
// A compressed entry is completed by the step that holds its block's last position: its slots are gathered (from
// the step's rows or the ring) into NE x slots rows laid out as nn::CompressorPool expects, pooled, normalised,
// rotated and written to the entry pools. The rings are updated after the step's reads: the last 2m compressor
// rows and the last `window` keys of each sequence.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "model/config.hpp"

namespace trex::model {

// Fixed at construction: `sequences` caches of up to `tokens` tokens each, steps of up to `rows` new tokens.
struct DecodeCapacity {
  int64_t sequences = 0, tokens = 0, rows = 0;
};

// Row indices of the pools (DecodeCapacity's, window w).
struct DecodeLayout {
  DecodeLayout(const DecodeCapacity& cap, int64_t window);
  DecodeCapacity cap;
  int64_t w = 0;

  int64_t entries_per_sequence(int64_t m) const { return cap.tokens / m; }  // complete blocks only
  int64_t key_rows(int64_t m) const;  // the key pool of a layer with ratio m (0: no entries region)
  int64_t compressor_rows(int64_t m) const { return cap.rows + cap.sequences * 2 * m; }
  int64_t index_rows(int64_t m) const { return cap.sequences * entries_per_sequence(m); }
  int32_t key_ring(int64_t slot, int64_t p) const { return int32_t(cap.rows + slot * w + p % w); }
  int32_t key_entry(int64_t m, int64_t slot, int64_t e) const {
    return int32_t(cap.rows + cap.sequences * w + slot * entries_per_sequence(m) + e);
  }
  int32_t compressor_ring(int64_t m, int64_t slot, int64_t p) const {
    return int32_t(cap.rows + slot * 2 * m + p % (2 * m));
  }
  int32_t index_entry(int64_t m, int64_t slot, int64_t e) const {
    return int32_t(slot * entries_per_sequence(m) + e);
  }
};

// One sequence of a step: its cache slot, the tokens it held before the step, the new tokens.
struct DecodeSequenceStep {
  int64_t slot = 0, length = 0, count = 0;
};

// The lists of one compressor kind (ratio m; overlap: CSA's 2m slots) for one step.
struct DecodeCompressorPlan {
  int64_t m = 0;
  bool overlap = false;
  int64_t slots() const { return overlap ? 2 * m : m; }
  // Entries completed in this step (sequence by sequence, blocks in order): NE of them.
  int64_t NE = 0;
  std::vector<int32_t> gather;     // [NE * slots] compressor pool rows: slot k of entry j goes to row j * slots + k
  std::vector<int32_t> start;      // [NE] nn::CompressorPool over the gathered rows: j * slots + (overlap ? m : 0)
  std::vector<int32_t> idx;        // [NE] block index in its sequence (0: a CSA block without a previous block)
  std::vector<int32_t> epos;       // [NE] RoPE position of the entry: block * m
  std::vector<int32_t> key_dst;    // [NE] key pool rows of the main compressor's entries
  std::vector<int32_t> index_dst;  // [NE] indexer entry pool rows (overlap only)
  // After the gather: this step's rows that stay in the rings (compressor pool rows, staging -> ring).
  std::vector<int32_t> ring_src, ring_dst;
  // Per row: entries visible (complete by its position, this step's included), the sequence's first entry row in
  // the key pool and in the indexer pool.
  std::vector<int32_t> nvis, key_base, index_base;
  int32_t max_nvis = 0;
  // The attention lists of layers of this kind: [R, cmax] each row's older window keys, then (HCA) every visible
  // entry; CSA: the older window keys only, its top-k appended on the device at column nold[r] (cmax = w - 1 + topk,
  // ncomp = nold + min(topk, nvis)).
  int64_t cmax = 0;
  std::vector<int32_t> comp, ncomp;
};

struct DecodePlan {
  int64_t R = 0;                    // rows (new tokens) of the step, sequence by sequence
  std::vector<int32_t> pos;         // [R] positions
  std::vector<int32_t> ws;          // [R] first step row of the row's window
  std::vector<int32_t> nold;        // [R] window keys from the ring (positions before the step)
  std::vector<int32_t> last_row;    // [sequences] each sequence's last new row
  // SWA layers' lists: [R, cmax] the older window keys (cmax = max(1, w - 1)).
  int64_t cmax = 0;
  std::vector<int32_t> comp, ncomp;
  // After attention: this step's keys that stay in the rings (key pool rows, staging -> ring).
  std::vector<int32_t> ring_src, ring_dst;
  std::vector<DecodeCompressorPlan> compressors;  // one per distinct (ratio, overlap) of the model's main layers
  const DecodeCompressorPlan& compressor(int64_t m, bool overlap) const;
};

// The plan of a step over `seqs` (distinct slots, count >= 1, length + count <= cap.tokens, total count <=
// cap.rows: trex::Error otherwise, naming the limit).
DecodePlan plan_decode_step(const ModelConfig& cfg, const DecodeLayout& layout,
                            std::span<const DecodeSequenceStep> seqs);

}  // namespace trex::model
