// The tensor inventory of an official-format DeepSeek-V4 checkpoint (DEEPSEEK_V4.md §11), derived from a
// ModelConfig: every tensor name, its logical shape, how the official safetensors store it (BF16, F32,
// FP8 with 128x128 E8M0 block scales, FP4 packed with per-32 E8M0 scales, I64), and the component it
// belongs to. Parameter counts (model_info), the weight loader and checkpoint writers share this list.
// For the Flash config it has 69,187 stored tensors (scales included), as the official shards do.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/config.hpp"

namespace trex::model {

enum class StoredAs { BF16, F32, FP8Block, FP4Packed, I64 };
const char* stored_as_name(StoredAs s);

// Component tags used in parameter breakdowns.
enum class Component {
  Embedding, Head, FinalNorm, Attention, Compressor, Indexer, HyperConnections, Norms, Router, HashTable,
  RoutedExperts, SharedExperts, MtpProjection,
};
const char* component_name(Component c);

struct LayoutTensor {
  std::string name;            // official name, e.g. "layers.3.attn.wq_a.weight"
  std::vector<int64_t> shape;  // logical (dequantised) shape
  StoredAs stored = StoredAs::BF16;
  Component component = Component::Attention;
  int64_t layer = -1;          // block index (>= num_hidden_layers: MTP block), -1 for top-level tensors
  bool mtp = false;            // belongs to an MTP module (mtp.N.*)
  int64_t expert = -1;         // routed expert index, -1 otherwise
  int64_t numel() const;
  bool is_parameter() const { return stored != StoredAs::I64; }  // the hash table is a fixed buffer
  // Name of the scale tensor stored next to a quantised weight ("<module>.scale"), empty otherwise.
  std::string scale_name() const;
  std::vector<int64_t> stored_shape() const;  // FP4: [rows, cols/2]
  std::vector<int64_t> scale_shape() const;   // FP8: [ceil(r/128), ceil(c/128)]; FP4: [r, ceil(c/32)]
  uint64_t stored_bytes() const;              // data bytes of the tensor and its scale
  int stored_tensor_count() const { return scale_name().empty() ? 1 : 2; }
};

// Tensors in the official order of modules: top level, layers 0..L-1, then mtp.0.. (each MTP module: its
// projections, norms, head collapse, then a full block named mtp.N.<block tensor>).
std::vector<LayoutTensor> checkpoint_layout(const ModelConfig& cfg);

}  // namespace trex::model
