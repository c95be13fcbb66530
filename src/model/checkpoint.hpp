// Model checkpoints on disk: safetensors files with the official tensor names (DEEPSEEK_V4.md §11) plus
// config.json. Reading accepts one .safetensors file or a folder (model.safetensors.index.json "weight_map",
// else every *.safetensors in it); quantised official weights are dequantised on load: F8_E4M3 + 128x128
// block scale, FP4 packed in I8/U8 (or native F4) + per-32 scale, the scale named "<module>.scale"
// (official) or "<name>_scale_inv" (Hugging Face V3 style). Writing produces model.safetensors + config.json
// (F32, or BF16 with the tensors that official checkpoints keep in F32 left in F32).
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/config.hpp"
#include "model/params.hpp"
#include "model/safetensors.hpp"

namespace trex::model {

enum class StoredFormat { Plain, FP8Block, FP4Packed };

// One logical tensor of a checkpoint (a weight with its scale folded in).
struct CheckpointEntry {
  std::string name;
  std::vector<int64_t> shape;  // logical (dequantised) shape
  StoredFormat format = StoredFormat::Plain;
  size_t file = 0;             // index into Checkpoint::files()
  const TensorInfo* data = nullptr;
  const TensorInfo* scale = nullptr;  // FP8Block / FP4Packed only
  // A slice of a fused tensor (transformers' [E, 2f, d] experts.gate_up_proj / [E, d, f] down_proj): the
  // entry's bytes are data[byte_begin, byte_begin + byte_len) of a Plain tensor; byte_len 0 = the whole tensor.
  uint64_t byte_begin = 0, byte_len = 0;
  std::string fused_from;  // the stored tensor's name for a slice, empty otherwise
};

class Checkpoint {
 public:
  static Checkpoint open(const std::filesystem::path& path);

  const std::vector<SafetensorsFile>& files() const { return files_; }
  const std::map<std::string, CheckpointEntry>& entries() const { return entries_; }
  // By the exact stored name, else by transformers' spelling of the same tensor (hf_module_key: a folder written
  // by save_pretrained, "model."-prefixed module paths, fused experts split into per-expert slices).
  const CheckpointEntry* find(const std::string& name) const;
  // config.json next to the weights, if present.
  std::optional<std::filesystem::path> config_path() const { return config_path_; }

  // Dequantises/converts one tensor into `out` (size = element count of the logical shape). Errors name
  // the file and tensor.
  void read_float(const CheckpointEntry& e, std::span<float> out) const;
  std::vector<float> read_float(const std::string& name) const;
  // Integer tensors (e.g. ffn.gate.tid2eid), any integer dtype.
  void read_int64(const CheckpointEntry& e, std::span<int64_t> out) const;

 private:
  std::vector<SafetensorsFile> files_;
  std::map<std::string, CheckpointEntry> entries_;
  std::optional<std::filesystem::path> config_path_;
  mutable std::map<std::string, std::string> hf_alias_;  // hf_module_key(stored name) -> stored name (lazy)
  mutable bool hf_alias_built_ = false;
  std::string where(const CheckpointEntry& e) const;
};

struct LoadOptions {
  bool allow_missing = false;     // model tensors absent from the checkpoint keep their values
  bool allow_unexpected = false;  // checkpoint tensors the model does not have are ignored
  // A checkpoint without ANY mtp.* tensor while everything else is there (transformers builds no MTP module, so
  // its save_pretrained folders have none) loads, the MTP tensors keeping their values (LoadReport::mtp_absent
  // says so). false: that is "missing" like any other tensor.
  bool allow_absent_mtp = true;
};

struct LoadReport {
  int64_t loaded = 0;
  std::vector<std::string> missing;     // in the model, not in the checkpoint
  std::vector<std::string> unexpected;  // in the checkpoint, not in the model
  int64_t dequantised_fp8 = 0, dequantised_fp4 = 0;
  int64_t mtp_absent = 0;   // MTP tensors absent as a whole (allow_absent_mtp): they kept their values
  int64_t hf_renamed = 0;   // tensors found under transformers' name rather than the official one
  std::string summary() const;
};

// Fills `store` (float tensors and the int64 hash tables) from the checkpoint at `path`. Shape mismatches are
// always errors; missing / unexpected tensors are errors unless allowed (all names are listed either way).
LoadReport load_weights(const std::filesystem::path& path, ParamStore& store, const LoadOptions& opt = {});
LoadReport load_weights(const Checkpoint& ckpt, ParamStore& store, const LoadOptions& opt = {});

struct SaveOptions {
  // Weights above this many bytes are split into model-0000i-of-0000n.safetensors shards (whole tensors, in
  // name order) with model.safetensors.index.json, as transformers' save_pretrained does (its default 50 GB).
  uint64_t max_shard_bytes = 50ull << 30;
  // tokenizer.json to place beside the weights with a tokenizer_config.json (chat template); empty: none.
  std::filesystem::path tokenizer;
};

// Writes a checkpoint folder that is both trex's and a Hugging Face model folder (checkpoint_hf.hpp): the weights
// (official names; one model.safetensors, or shards + index), config.json (official and transformers fields),
// generation_config.json, and the tokenizer files when SaveOptions::tokenizer names one. Each file atomically;
// shard files of another layout left by an earlier save are removed. `dtype` is F32 or BF16.
void save_weights(const std::filesystem::path& dir, const ParamStore& store, const ModelConfig& cfg,
                  DType dtype = DType::F32, const SaveOptions& opt = {});

}  // namespace trex::model
