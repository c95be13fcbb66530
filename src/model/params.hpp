// Flat parameter storage (llm.c style): every float tensor of the model lives in one contiguous buffer, its
// gradient at the same offset of a second buffer, and a table names each tensor with its official
// checkpoint name (DEEPSEEK_V4.md §11) and shape. The hash-routing tables (ffn.gate.tid2eid, int64) live in
// a separate integer buffer with their own table.
//
// Model sharding (expert and pipeline parallelism): a ParamPlacement says which tensors this rank holds and in
// which replica group. The canonical table (every tensor, the one-process offsets) stays for checkpoints and
// initialisation; the local buffers hold only the tensors placed here, group 0's first, then group 1's, ...,
// each group in canonical order, so every group is one contiguous range (its gradients are reduced over one
// communicator). Without a placement local == canonical.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/config.hpp"

namespace trex::model {

struct ParamInfo {
  std::string name;            // official name, e.g. "layers.3.attn.wq_a.weight"
  std::vector<int64_t> shape;  // row-major
  int64_t offset = 0;          // element offset in the flat buffer (float or int64 buffer)
  int64_t numel = 0;
  bool trainable = true;       // false: buffers without gradient (ffn.gate.bias, tid2eid)
  int64_t canonical_offset = 0;  // offset in the one-process (unsharded) layout
  int64_t canonical_index = 0;   // position in the canonical table (initialisation streams are keyed by it)
  int group = 0;                 // replica group (see ParamPlacement)
};

// Which tensors a rank holds: -1 = not held, otherwise the tensor's replica group (0, 1, ...).
using ParamPlacement = std::function<int(const std::string& name)>;

class ParamStore {
 public:
  // Lays out every tensor of `cfg` (§11 names) that `place` holds (empty: all, group 0); contents zero.
  // with_grads = false: no gradient buffer (a checkpoint writer's canonical copy).
  explicit ParamStore(const ModelConfig& cfg, const ParamPlacement& place = {}, bool with_grads = true);

  std::span<float> params() { return params_; }
  std::span<const float> params() const { return params_; }
  std::span<float> grads() { return grads_; }
  std::span<const float> grads() const { return grads_; }
  std::span<int64_t> int_params() { return ints_; }
  std::span<const int64_t> int_params() const { return ints_; }
  const std::vector<ParamInfo>& table() const { return table_; }          // float tensors
  const std::vector<ParamInfo>& int_table() const { return int_table_; }  // int64 tensors (tid2eid)

  // Every tensor of the model with its one-process offsets (== table() when nothing is sharded).
  const std::vector<ParamInfo>& canonical_table() const { return canonical_; }
  const std::vector<ParamInfo>& canonical_int_table() const { return canonical_int_; }
  int64_t canonical_numel() const { return n_canonical_; }
  bool sharded() const { return table_.size() != canonical_.size() || int_table_.size() != canonical_int_.size(); }
  // [begin, end) of each replica group's tensors in the local buffers (index = group).
  const std::vector<std::pair<int64_t, int64_t>>& group_ranges() const { return group_ranges_; }

  // Local offset of a float tensor by name; -1 if absent (or not held here).
  int64_t find(const std::string& name) const;
  // Local offset of a tensor of the model; -1 when this rank does not hold it; throws if the model lacks it.
  int64_t held_offset(const std::string& name) const;
  const ParamInfo& info(const std::string& name) const;  // throws trex::Error if absent or not held
  float* param(const std::string& name) { return params_.data() + info(name).offset; }
  float* grad(const std::string& name) { return grads_.data() + info(name).offset; }
  int64_t* int_param(const std::string& name);  // nullptr when held by another rank

 private:
  int64_t add(const std::string& name, std::vector<int64_t> shape, bool trainable = true);
  int64_t add_int(const std::string& name, std::vector<int64_t> shape);
  void add_block(const ModelConfig& cfg, const std::string& prefix, int64_t layer);

  std::vector<ParamInfo> canonical_, canonical_int_, table_, int_table_;
  std::unordered_map<std::string, size_t> index_, int_index_, canonical_index_, canonical_int_index_;
  std::vector<std::pair<int64_t, int64_t>> group_ranges_;
  std::vector<float> params_, grads_;
  std::vector<int64_t> ints_;
  int64_t n_float_ = 0, n_int_ = 0, n_canonical_ = 0;
};

}  // namespace trex::model
