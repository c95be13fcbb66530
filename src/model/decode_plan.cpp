// plan_decode_step: the pool rows of one batched decoding step (decode_plan.hpp).
#include "model/decode_plan.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "util/error.hpp"

namespace trex::model {

DecodeLayout::DecodeLayout(const DecodeCapacity& c, int64_t window) : cap(c), w(window) {
  if (cap.sequences < 1 || cap.tokens < 1 || cap.rows < 1)
    throw Error("decode capacity: sequences, tokens and rows must be at least 1 (got " + std::to_string(cap.sequences) +
                ", " + std::to_string(cap.tokens) + ", " + std::to_string(cap.rows) + ")");
  if (w < 1) throw Error("decode capacity: the sliding window must be at least 1");
  // Every row index is an int32 (the kernels' lists); the largest pool is a key pool with ratio-1 entries.
  const double biggest =
      double(cap.rows) + double(cap.sequences) * double(w) + double(cap.sequences) * double(cap.tokens);
  if (biggest >= double(std::numeric_limits<int32_t>::max()))
    throw Error("decode capacity: " + std::to_string(cap.sequences) + " sequences of " + std::to_string(cap.tokens) +
                " tokens need more than 2^31 cache rows");
}

int64_t DecodeLayout::key_rows(int64_t m) const {
  return cap.rows + cap.sequences * w + (m != 0 ? cap.sequences * entries_per_sequence(m) : 0);
}

const DecodeCompressorPlan& DecodePlan::compressor(int64_t m, bool overlap) const {
  for (const auto& c : compressors)
    if (c.m == m && c.overlap == overlap) return c;
  throw Error("decode plan: no compressor plan for ratio " + std::to_string(m));
}

DecodePlan plan_decode_step(const ModelConfig& cfg, const DecodeLayout& L, std::span<const DecodeSequenceStep> seqs) {
  const int64_t w = L.w, S = int64_t(seqs.size());
  if (S == 0) throw Error("decode: no sequences to step");
  DecodePlan P;
  std::vector<int64_t> first(static_cast<size_t>(S));
  for (int64_t s = 0; s < S; ++s) {
    const DecodeSequenceStep& q = seqs[size_t(s)];
    if (q.slot < 0 || q.slot >= L.cap.sequences)
      throw Error("decode: sequence slot " + std::to_string(q.slot) + " outside the decoder's " +
                  std::to_string(L.cap.sequences));
    for (int64_t t = 0; t < s; ++t)
      if (seqs[size_t(t)].slot == q.slot) throw Error("decode: the same sequence appears twice in one step");
    if (q.count < 1) throw Error("decode: sequence " + std::to_string(s) + " has no new tokens");
    if (q.length < 0 || q.length + q.count > L.cap.tokens)
      throw Error("decode: a sequence of " + std::to_string(q.length + q.count) +
                  " tokens exceeds the decoder's capacity of " + std::to_string(L.cap.tokens) + " tokens per sequence");
    first[size_t(s)] = P.R;
    P.R += q.count;
  }
  if (P.R > L.cap.rows)
    throw Error("decode: a step of " + std::to_string(P.R) + " new tokens exceeds the decoder's " +
                std::to_string(L.cap.rows) + " rows per step");
  const int64_t R = P.R;
  P.pos.resize(size_t(R));
  P.ws.resize(size_t(R));
  P.nold.resize(size_t(R));
  P.cmax = std::max<int64_t>(1, w - 1);
  P.comp.assign(size_t(R * P.cmax), -1);
  P.ncomp.resize(size_t(R));
  for (int64_t s = 0; s < S; ++s) {
    const DecodeSequenceStep& q = seqs[size_t(s)];
    for (int64_t j = 0; j < q.count; ++j) {
      const int64_t r = first[size_t(s)] + j, p = q.length + j;
      P.pos[size_t(r)] = int32_t(p);
      P.ws[size_t(r)] = int32_t(first[size_t(s)] + (std::max(q.length, p - w + 1) - q.length));
      int32_t n = 0;  // the older window keys: ring rows of positions max(0, p - w + 1) .. length - 1
      for (int64_t t = std::max<int64_t>(0, p - w + 1); t < q.length; ++t)
        P.comp[size_t(r * P.cmax + n++)] = L.key_ring(q.slot, t);
      P.nold[size_t(r)] = P.ncomp[size_t(r)] = n;
    }
    P.last_row.push_back(int32_t(first[size_t(s)] + q.count - 1));
    for (int64_t j = std::max<int64_t>(0, q.count - w); j < q.count; ++j) {
      P.ring_src.push_back(int32_t(first[size_t(s)] + j));
      P.ring_dst.push_back(L.key_ring(q.slot, q.length + j));
    }
  }
  // one plan per compressor kind of the main layers
  for (int64_t l = 0; l < cfg.num_hidden_layers; ++l) {
    const int64_t m = cfg.ratio(l);
    if (m == 0) continue;
    const bool overlap = cfg.kind(l) == AttnKind::CSA;
    bool seen = false;
    for (const auto& c : P.compressors) seen = seen || (c.m == m && c.overlap == overlap);
    if (seen) continue;
    DecodeCompressorPlan C;
    C.m = m;
    C.overlap = overlap;
    const int64_t slots = C.slots();
    const int64_t topk = cfg.index_topk;
    for (int64_t s = 0; s < S; ++s) {
      const DecodeSequenceStep& q = seqs[size_t(s)];
      // the compressor row of position t: this step's row, or the ring (t >= length - 2m there)
      auto row_of = [&](int64_t t) {
        return t >= q.length ? int32_t(first[size_t(s)] + (t - q.length)) : L.compressor_ring(m, q.slot, t);
      };
      for (int64_t p = q.length; p < q.length + q.count; ++p) {
        if ((p + 1) % m != 0) continue;
        const int64_t blk = p / m, s0 = p + 1 - m, j = C.NE++;
        for (int64_t k = 0; k < slots; ++k) {
          // CSA: slots 0 .. m-1 are the previous block (absent for block 0: the block's own rows stand in, unread)
          const int64_t t = overlap ? (k < m ? (blk > 0 ? s0 - m + k : s0 + k) : s0 + k - m) : s0 + k;
          C.gather.push_back(row_of(t));
        }
        C.start.push_back(int32_t(j * slots + (overlap ? m : 0)));
        C.idx.push_back(int32_t(blk));
        C.epos.push_back(int32_t(blk * m));
        C.key_dst.push_back(L.key_entry(m, q.slot, blk));
        if (overlap) C.index_dst.push_back(L.index_entry(m, q.slot, blk));
      }
      for (int64_t j = std::max<int64_t>(0, q.count - 2 * m); j < q.count; ++j) {
        C.ring_src.push_back(int32_t(first[size_t(s)] + j));
        C.ring_dst.push_back(L.compressor_ring(m, q.slot, q.length + j));
      }
      for (int64_t j = 0; j < q.count; ++j) {
        const int32_t nv = int32_t((q.length + j + 1) / m);
        C.nvis.push_back(nv);
        C.key_base.push_back(L.key_entry(m, q.slot, 0));
        C.index_base.push_back(L.index_entry(m, q.slot, 0));
        C.max_nvis = std::max(C.max_nvis, nv);
      }
    }
    C.cmax = std::max<int64_t>(1, (w - 1) + (overlap ? topk : C.max_nvis));
    C.comp.assign(size_t(R * C.cmax), -1);
    C.ncomp.resize(size_t(R));
    for (int64_t r = 0; r < R; ++r) {  // the older window keys (as the SWA lists), then the entries
      int32_t* list = C.comp.data() + r * C.cmax;
      int32_t n = P.nold[size_t(r)];
      std::copy(P.comp.begin() + r * P.cmax, P.comp.begin() + r * P.cmax + n, list);
      const int32_t nv = C.nvis[size_t(r)];
      if (overlap) {
        C.ncomp[size_t(r)] = n + int32_t(std::min<int64_t>(topk, nv));
      } else {
        for (int32_t e = 0; e < nv; ++e) list[n++] = C.key_base[size_t(r)] + e;
        C.ncomp[size_t(r)] = n;
      }
    }
    P.compressors.push_back(std::move(C));
  }
  return P;
}

}  // namespace trex::model
