// Flat parameter storage (llm.c style): every float tensor of the model lives in one contiguous buffer, its
// gradient at the same offset of a second buffer, and a table names each tensor with its official
// checkpoint name (DEEPSEEK_V4.md §11) and shape. The hash-routing tables (ffn.gate.tid2eid, int64) live in
// a separate integer buffer with their own table.
#pragma once
#include <cstdint>
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
};

class ParamStore {
 public:
  // Lays out every tensor of `cfg` (§11 names); contents zero.
  explicit ParamStore(const ModelConfig& cfg);

  std::span<float> params() { return params_; }
  std::span<const float> params() const { return params_; }
  std::span<float> grads() { return grads_; }
  std::span<const float> grads() const { return grads_; }
  std::span<int64_t> int_params() { return ints_; }
  std::span<const int64_t> int_params() const { return ints_; }
  const std::vector<ParamInfo>& table() const { return table_; }          // float tensors
  const std::vector<ParamInfo>& int_table() const { return int_table_; }  // int64 tensors (tid2eid)

  // Offset of a float tensor by name; -1 if absent.
  int64_t find(const std::string& name) const;
  const ParamInfo& info(const std::string& name) const;  // throws trex::Error if absent
  float* param(const std::string& name) { return params_.data() + info(name).offset; }
  float* grad(const std::string& name) { return grads_.data() + info(name).offset; }
  int64_t* int_param(const std::string& name);

 private:
  int64_t add(const std::string& name, std::vector<int64_t> shape, bool trainable = true);
  int64_t add_int(const std::string& name, std::vector<int64_t> shape);
  void add_block(const ModelConfig& cfg, const std::string& prefix, int64_t layer);

  std::vector<ParamInfo> table_, int_table_;
  std::unordered_map<std::string, size_t> index_, int_index_;
  std::vector<float> params_, grads_;
  std::vector<int64_t> ints_;
  int64_t n_float_ = 0, n_int_ = 0;
};

}  // namespace trex::model
