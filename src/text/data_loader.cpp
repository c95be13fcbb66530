// DataLoader: epoch permutations, rank sharding, resume.
#include "text/data_loader.hpp"

#include <numeric>

#include "util/error.hpp"
#include "util/rng.hpp"

namespace trex::text {

LoaderState LoaderState::from_json(const Json& j) {
  if (!j.is_object() || !j.contains("seed") || !j.contains("step") || !j["seed"].is_number_unsigned() ||
      !j["step"].is_number_unsigned())
    throw Error("loader state must be {\"seed\": uint, \"step\": uint}");
  return LoaderState{j["seed"].get<uint64_t>(), j["step"].get<uint64_t>()};
}

DataLoader::DataLoader(const SequenceDataset& data, LoaderConfig cfg) : data_(data), cfg_(cfg) {
  if (cfg_.world < 1 || cfg_.rank < 0 || cfg_.rank >= cfg_.world)
    throw Error("data loader: rank " + std::to_string(cfg_.rank) + " is not in 0.." + std::to_string(cfg_.world - 1));
  if (cfg_.batch_size == 0) throw Error("data loader: batch size must be positive");
  if (data_.size() == 0) throw Error("data loader: the dataset has no sequences");
  if (data_.size() > UINT32_MAX) throw Error("data loader: more than 2^32 sequences");
}

const std::vector<uint32_t>& DataLoader::permutation(uint64_t epoch) const {
  if (perm_epoch_ != epoch) {
    perm_.resize(size_t(data_.size()));
    std::iota(perm_.begin(), perm_.end(), 0u);
    if (cfg_.shuffle) {
      Rng rng = Rng::derive(cfg_.seed, epoch);
      rng.shuffle(perm_);
    }
    perm_epoch_ = epoch;
  }
  return perm_;
}

uint64_t DataLoader::sequence_at(uint64_t step, int rank, size_t row) const {
  const uint64_t g = step * cfg_.batch_size * uint64_t(cfg_.world) + uint64_t(rank) * cfg_.batch_size + row;
  const uint64_t n = data_.size();
  return permutation(g / n)[size_t(g % n)];
}

uint64_t DataLoader::epoch() const {
  return step_ * cfg_.batch_size * uint64_t(cfg_.world) / data_.size();
}

void DataLoader::restore(const LoaderState& s) {
  if (s.seed != cfg_.seed)
    throw Error("data loader: saved seed " + std::to_string(s.seed) + " differs from the configured " + std::to_string(cfg_.seed));
  step_ = s.step;
}

void DataLoader::next(Batch& b) {
  const size_t B = cfg_.batch_size, L = data_.seq_len();
  if (b.batch_size != B || b.seq_len != L) {
    b.batch_size = B;
    b.seq_len = L;
    b.tokens.assign(B * L, 0);
    b.positions.assign(B * L, 0);
    b.doc_ids.assign(B * L, 0);
    b.loss_mask.assign(B * L, 0);
    b.sequence_index.assign(B, 0);
  }
  for (size_t r = 0; r < B; ++r) {
    uint64_t idx = sequence_at(step_, cfg_.rank, r);
    b.sequence_index[r] = idx;
    data_.read(idx, SequenceView{b.tokens.data() + r * L, b.positions.data() + r * L, b.doc_ids.data() + r * L,
                                 b.loss_mask.data() + r * L});
  }
  ++step_;
}

}  // namespace trex::text
