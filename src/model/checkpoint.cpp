// Checkpoint folders: open shards, fold scales into their weights, load into / save from a ParamStore.
#include "model/checkpoint.hpp"

#include <algorithm>
#include <cstring>
#include <set>

#include "model/checkpoint_hf.hpp"
#include "model/checkpoint_layout.hpp"
#include "model/quant.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/jsonl.hpp"

namespace trex::model {
namespace fs = std::filesystem;

namespace {
bool is_integer_dtype(DType dt) {
  switch (dt) {
    case DType::U8: case DType::I8: case DType::I16: case DType::U16: case DType::I32: case DType::U32:
    case DType::I64: case DType::U64: return true;
    default: return false;
  }
}
}  // namespace

Checkpoint Checkpoint::open(const fs::path& path) {
  Checkpoint ck;
  std::vector<fs::path> shards;
  fs::path dir;
  if (fs::is_directory(path)) {
    dir = path;
    const fs::path index = path / "model.safetensors.index.json";
    if (fs::exists(index)) {
      Json j = parse_json_file(index);
      const Json& wm = require_field(j, "weight_map", SourceLocation{index.string()});
      if (!wm.is_object()) throw Error(SourceLocation{index.string()}, "'weight_map' must be an object");
      std::set<std::string> names;
      for (auto& [tensor, file] : wm.items()) {
        if (!file.is_string()) throw Error(SourceLocation{index.string()}, "weight_map['" + tensor + "'] is not a string");
        const std::string f = file.get<std::string>();
        if (f.find('/') != std::string::npos || f == "..")
          throw Error(SourceLocation{index.string()}, "weight_map names a file outside the folder: '" + f + "'");
        names.insert(f);
      }
      for (const auto& n : names) shards.push_back(path / n);
    } else {
      for (const auto& e : fs::directory_iterator(path))
        if (e.is_regular_file() && e.path().extension() == ".safetensors") shards.push_back(e.path());
      std::sort(shards.begin(), shards.end());
    }
    if (shards.empty()) throw Error(SourceLocation{path.string()}, "no .safetensors files in checkpoint folder");
  } else {
    if (!fs::exists(path)) throw Error(SourceLocation{path.string()}, "checkpoint not found");
    dir = path.parent_path();
    shards.push_back(path);
  }
  if (fs::exists(dir / "config.json")) ck.config_path_ = dir / "config.json";

  // All tensors of all shards, names unique across shards.
  struct Raw {
    size_t file;
    const TensorInfo* info;
  };
  std::map<std::string, Raw> raw;
  for (const auto& s : shards) {
    ck.files_.push_back(SafetensorsFile::open(s));
  }
  for (size_t fi = 0; fi < ck.files_.size(); ++fi)
    for (const auto& t : ck.files_[fi].tensors()) {
      auto [it, fresh] = raw.emplace(t.name, Raw{fi, &t});
      if (!fresh)
        throw Error(SourceLocation{ck.files_[fi].source()},
                    "tensor '" + t.name + "' also present in " + ck.files_[it->second.file].source());
    }

  // Fold scales into their weights.
  std::set<std::string> consumed;
  for (const auto& [name, r] : raw) {
    if (consumed.count(name)) continue;
    CheckpointEntry e;
    e.name = name;
    e.file = r.file;
    e.data = r.info;
    e.shape = r.info->shape;
    const std::string src = ck.files_[r.file].source();
    const TensorInfo* scale = nullptr;
    std::string scale_name;
    for (const auto& cand : scale_name_candidates(name)) {
      auto it = raw.find(cand);
      if (it != raw.end()) {
        scale = it->second.info;
        scale_name = cand;
        if (it->second.file != r.file)
          throw Error(SourceLocation{src}, "scale '" + cand + "' of tensor '" + name + "' is stored in another shard (" +
                                               ck.files_[it->second.file].source() + ")");
        break;
      }
    }
    if (scale) {
      const DType dt = r.info->dtype;
      if (dt == DType::F8_E4M3) {
        e.format = StoredFormat::FP8Block;
      } else if (dt == DType::I8 || dt == DType::U8) {
        if (r.info->shape.size() != 2)
          throw Error(SourceLocation{src}, "packed FP4 tensor '" + name + "' must be 2-D, has shape " + shape_str(r.info->shape));
        e.format = StoredFormat::FP4Packed;
        e.shape = {r.info->shape[0], r.info->shape[1] * 2};  // two E2M1 values per byte
      } else if (dt == DType::F4) {
        e.format = StoredFormat::FP4Packed;
      } else {
        throw Error(SourceLocation{src}, "tensor '" + name + "' has a scale ('" + scale_name + "') but dtype " +
                                             std::string(dtype_name(dt)) + " is not a quantised format");
      }
      if (e.shape.size() != 2)
        throw Error(SourceLocation{src}, "quantised tensor '" + name + "' must be 2-D, has shape " + shape_str(e.shape));
      e.scale = scale;
      consumed.insert(scale_name);
    }
    ck.entries_[name] = std::move(e);
  }
  for (const auto& n : consumed) ck.entries_.erase(n);  // scales seen before their weight in name order

  // transformers' fused routed experts ([E, 2f, d] gate_up_proj = w1 rows then w3 rows per expert, [E, d, f]
  // down_proj = w2) become per-expert slices named as transformers names a single expert's tensor.
  std::vector<std::string> fused;
  for (const auto& [name, e] : ck.entries_) {
    const std::string k = hf_module_key(name);
    if (k.ends_with(".mlp.experts.gate_up_proj") || k.ends_with(".mlp.experts.down_proj")) fused.push_back(name);
  }
  for (const auto& name : fused) {
    const CheckpointEntry f = ck.entries_.at(name);
    const std::string src = ck.files_[f.file].source();
    if (f.format != StoredFormat::Plain || f.shape.size() != 3)
      throw Error(SourceLocation{src}, "fused experts tensor '" + name + "' must be a plain 3-D tensor, has shape " +
                                           shape_str(f.shape));
    const std::string k = hf_module_key(name);
    const bool gate_up = k.ends_with("gate_up_proj");
    const std::string prefix = k.substr(0, k.rfind('.') + 1);  // "model.layers.N.mlp.experts."
    const int64_t E = f.shape[0], rows = f.shape[1], cols = f.shape[2];
    if (gate_up && rows % 2 != 0)
      throw Error(SourceLocation{src}, "fused experts tensor '" + name + "' has an odd row count " + std::to_string(rows));
    const uint64_t esize = f.data->nbytes() / uint64_t(std::max<int64_t>(1, E * rows * cols));
    auto slice = [&](int64_t e, const char* w, int64_t row0, int64_t nrows) {
      CheckpointEntry s = f;
      s.name = prefix + std::to_string(e) + "." + w + ".weight";
      s.shape = {nrows, cols};
      s.byte_begin = uint64_t((e * rows + row0) * cols) * esize;
      s.byte_len = uint64_t(nrows * cols) * esize;
      s.fused_from = name;
      if (!ck.entries_.emplace(s.name, s).second)
        throw Error(SourceLocation{src}, "tensor '" + s.name + "' present both fused and per expert");
    };
    for (int64_t e = 0; e < E; ++e) {
      if (gate_up) {
        slice(e, "w1", 0, rows / 2);
        slice(e, "w3", rows / 2, rows / 2);
      } else {
        slice(e, "w2", 0, rows);
      }
    }
    ck.entries_.erase(name);
  }
  return ck;
}

const CheckpointEntry* Checkpoint::find(const std::string& name) const {
  auto it = entries_.find(name);
  if (it != entries_.end()) return &it->second;
  if (!hf_alias_built_) {
    for (const auto& [stored, e] : entries_) {
      auto [a, fresh] = hf_alias_.emplace(hf_module_key(stored), stored);
      if (!fresh)
        throw Error(SourceLocation{files_[e.file].source()}, "tensors '" + a->second + "' and '" + stored +
                                                                 "' are the same tensor under two spellings");
    }
    hf_alias_built_ = true;
  }
  auto a = hf_alias_.find(hf_module_key(name));
  return a == hf_alias_.end() ? nullptr : &entries_.at(a->second);
}

std::string Checkpoint::where(const CheckpointEntry& e) const { return files_[e.file].source(); }

void Checkpoint::read_float(const CheckpointEntry& e, std::span<float> out) const {
  const SafetensorsFile& f = files_[e.file];
  const std::string what = "tensor '" + e.name + "'";
  try {
    const TensorView v = f.view(*e.data);
    switch (e.format) {
      case StoredFormat::Plain: {
        if (!is_float_convertible(e.data->dtype))
          throw Error(what + ": dtype " + std::string(dtype_name(e.data->dtype)) + " cannot be read as float");
        const int64_t n = shape_numel(e.shape);
        if (static_cast<int64_t>(out.size()) != n)
          throw Error(what + ": destination holds " + std::to_string(out.size()) + " floats, tensor has " +
                      std::to_string(n));
        convert_to_float(e.data->dtype, e.byte_len ? v.bytes.subspan(e.byte_begin, e.byte_len) : v.bytes, out);
        break;
      }
      case StoredFormat::FP8Block: {
        const ScaleView s = scale_view(f.view(*e.scale));
        std::span<const uint8_t> codes(reinterpret_cast<const uint8_t*>(v.bytes.data()), v.bytes.size());
        dequant_fp8_block(codes, e.shape[0], e.shape[1], s, out, kFp8Block, what);
        break;
      }
      case StoredFormat::FP4Packed: {
        const ScaleView s = scale_view(f.view(*e.scale));
        std::span<const uint8_t> packed(reinterpret_cast<const uint8_t*>(v.bytes.data()), v.bytes.size());
        dequant_fp4_packed(packed, e.shape[0], e.shape[1], s, out, kFp4Group, what);
        break;
      }
    }
  } catch (const Error& err) {
    if (!err.where().file.empty()) throw;
    throw Error(SourceLocation{f.source()}, err.message());
  }
}

std::vector<float> Checkpoint::read_float(const std::string& name) const {
  const CheckpointEntry* e = find(name);
  if (!e) throw Error("checkpoint has no tensor '" + name + "'");
  int64_t n = 1;
  for (int64_t d : e->shape) n *= d;
  std::vector<float> out(static_cast<size_t>(n));
  read_float(*e, out);
  return out;
}

void Checkpoint::read_int64(const CheckpointEntry& e, std::span<int64_t> out) const {
  const SafetensorsFile& f = files_[e.file];
  if (e.format != StoredFormat::Plain || !is_integer_dtype(e.data->dtype))
    throw Error(SourceLocation{f.source()}, "tensor '" + e.name + "' is not an integer tensor (dtype " +
                                               std::string(dtype_name(e.data->dtype)) + ")");
  if (static_cast<int64_t>(out.size()) != shape_numel(e.shape))
    throw Error(SourceLocation{f.source()}, "tensor '" + e.name + "': element count mismatch");
  const TensorView v = f.view(*e.data);
  const std::byte* p = v.bytes.data() + e.byte_begin;
  auto load = [&]<typename T>(T) {
    for (size_t i = 0; i < out.size(); ++i) {
      T x;
      std::memcpy(&x, p + i * sizeof(T), sizeof(T));
      out[i] = static_cast<int64_t>(x);
    }
  };
  switch (e.data->dtype) {
    case DType::U8: load(uint8_t{}); break;
    case DType::I8: load(int8_t{}); break;
    case DType::I16: load(int16_t{}); break;
    case DType::U16: load(uint16_t{}); break;
    case DType::I32: load(int32_t{}); break;
    case DType::U32: load(uint32_t{}); break;
    case DType::I64: load(int64_t{}); break;
    case DType::U64: load(uint64_t{}); break;
    default: break;
  }
}

std::string LoadReport::summary() const {
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size() && i < 20; ++i) s += (i ? ", " : "") + v[i];
    if (v.size() > 20) s += ", ... (" + std::to_string(v.size()) + " in all)";
    return s;
  };
  std::string s = "loaded " + std::to_string(loaded) + " tensors (" + std::to_string(dequantised_fp8) + " FP8, " +
                  std::to_string(dequantised_fp4) + " FP4 dequantised)";
  if (hf_renamed) s += "; " + std::to_string(hf_renamed) + " under transformers' names";
  if (mtp_absent)
    s += "; MTP absent (" + std::to_string(mtp_absent) +
         " mtp.* tensors: the checkpoint has none, as transformers writes it; they keep their values)";
  if (!missing.empty()) s += "; missing: " + list(missing);
  if (!unexpected.empty()) s += "; unexpected: " + list(unexpected);
  return s;
}

LoadReport load_weights(const fs::path& path, ParamStore& store, const LoadOptions& opt) {
  return load_weights(Checkpoint::open(path), store, opt);
}

LoadReport load_weights(const Checkpoint& ck, ParamStore& store, const LoadOptions& opt) {
  LoadReport rep;
  std::vector<std::string> mismatched;
  // Shapes first, so a bad checkpoint is rejected before any value is overwritten.
  // A sharded store (model parallelism) loads the tensors it holds; the others are the model's, not unexpected.
  std::set<std::string> consumed;  // stored entry names some tensor of the model takes
  bool any_mtp = false;
  for (const auto* table : {&store.canonical_table(), &store.canonical_int_table()})
    for (const auto& p : *table)
      if (const CheckpointEntry* e = ck.find(p.name)) {
        consumed.insert(e->name);
        any_mtp = any_mtp || p.name.starts_with("mtp.");
      }
  auto check_shape = [&](const ParamInfo& p) -> const CheckpointEntry* {
    const CheckpointEntry* e = ck.find(p.name);
    if (!e) {
      rep.missing.push_back(p.name);
      return nullptr;
    }
    rep.hf_renamed += e->name != p.name;
    if (e->shape != p.shape)
      mismatched.push_back(p.name + (e->name != p.name ? " (stored as " + e->name + ")" : std::string()) +
                           ": checkpoint " + shape_str(e->shape) + " in " + ck.files()[e->file].source() +
                           ", model " + shape_str(p.shape));
    return e;
  };
  std::vector<std::pair<const ParamInfo*, const CheckpointEntry*>> floats, ints;
  for (const auto& p : store.table())
    if (auto* e = check_shape(p)) floats.emplace_back(&p, e);
  for (const auto& p : store.int_table())
    if (auto* e = check_shape(p)) ints.emplace_back(&p, e);
  for (const auto& [name, e] : ck.entries())
    if (!consumed.count(name)) rep.unexpected.push_back(name);
  if (!mismatched.empty()) {
    std::string m = "checkpoint shapes do not match the model (" + std::to_string(mismatched.size()) + "): ";
    for (size_t i = 0; i < mismatched.size() && i < 10; ++i) m += (i ? "; " : "") + mismatched[i];
    throw Error(m);
  }
  // transformers' layout: no MTP module at all, everything else present.
  if (opt.allow_absent_mtp && !any_mtp && !rep.missing.empty() &&
      std::all_of(rep.missing.begin(), rep.missing.end(), [](const std::string& n) { return n.starts_with("mtp."); })) {
    rep.mtp_absent = int64_t(rep.missing.size());
    rep.missing.clear();
  }
  if (!rep.missing.empty() && !opt.allow_missing) throw Error("checkpoint incomplete: " + rep.summary());
  if (!rep.unexpected.empty() && !opt.allow_unexpected)
    throw Error("checkpoint has tensors the model does not: " + rep.summary());
  for (const auto& [p, e] : floats) {
    ck.read_float(*e, store.params().subspan(static_cast<size_t>(p->offset), static_cast<size_t>(p->numel)));
    rep.dequantised_fp8 += e->format == StoredFormat::FP8Block;
    rep.dequantised_fp4 += e->format == StoredFormat::FP4Packed;
    ++rep.loaded;
  }
  for (const auto& [p, e] : ints) {
    ck.read_int64(*e, store.int_params().subspan(static_cast<size_t>(p->offset), static_cast<size_t>(p->numel)));
    ++rep.loaded;
  }
  return rep;
}

void save_weights(const fs::path& dir, const ParamStore& store, const ModelConfig& cfg, DType dtype,
                  const SaveOptions& opt) {
  if (dtype != DType::F32 && dtype != DType::BF16)
    throw Error("save_weights: dtype must be F32 or BF16, got " + std::string(dtype_name(dtype)));
  if (store.sharded())
    throw Error("save_weights: this store holds only part of the model (gather it into a canonical store first)");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(SourceLocation{dir.string()}, "cannot create checkpoint folder: " + ec.message());
  // Tensors official checkpoints keep in F32 (mHC, sinks, ape, gate bias) stay F32 in a BF16 checkpoint.
  std::set<std::string> keep_f32;
  if (dtype == DType::BF16)
    for (const auto& t : checkpoint_layout(cfg))
      if (t.stored == StoredAs::F32) keep_f32.insert(t.name);
  std::vector<std::vector<uint16_t>> bf16_buffers;
  bf16_buffers.reserve(store.table().size());
  std::vector<TensorToWrite> ts;
  for (const auto& p : store.table()) {
    auto src = store.params().subspan(static_cast<size_t>(p.offset), static_cast<size_t>(p.numel));
    if (dtype == DType::F32 || keep_f32.count(p.name)) {
      ts.push_back({p.name, DType::F32, p.shape, std::as_bytes(src)});
    } else {
      auto& buf = bf16_buffers.emplace_back(src.size());
      for (size_t i = 0; i < src.size(); ++i) buf[i] = float_to_bf16(src[i]);
      ts.push_back({p.name, DType::BF16, p.shape, as_bytes_of(buf)});
    }
  }
  for (const auto& p : store.int_table()) {
    auto src = store.int_params().subspan(static_cast<size_t>(p.offset), static_cast<size_t>(p.numel));
    ts.push_back({p.name, DType::I64, p.shape, std::as_bytes(src)});
  }
  const std::map<std::string, std::string> meta = {{"format", "pt"}, {"producer", "trex"}};
  uint64_t total = 0;
  for (const auto& t : ts) total += t.bytes.size();
  // Shards of another layout from an earlier save into this folder would be read with the new ones.
  auto remove_shards = [&] {
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string n = e.path().filename().string();
      if (n.starts_with("model-") && n.ends_with(".safetensors") && n.find("-of-") != std::string::npos)
        fs::remove(e.path(), ec);
    }
  };
  if (total <= opt.max_shard_bytes) {
    write_safetensors(dir / "model.safetensors", ts, meta);
    fs::remove(dir / "model.safetensors.index.json", ec);
    remove_shards();
  } else {
    // Whole tensors in name order, a new shard when the next one would overflow (a tensor larger than the
    // limit gets a shard of its own), as transformers' split_torch_state_dict_into_shards does.
    std::vector<const TensorToWrite*> order;
    for (const auto& t : ts) order.push_back(&t);
    std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->name < b->name; });
    std::vector<std::vector<TensorToWrite>> shards(1);
    uint64_t in_shard = 0;
    for (const auto* t : order) {
      if (!shards.back().empty() && in_shard + t->bytes.size() > opt.max_shard_bytes) {
        shards.emplace_back();
        in_shard = 0;
      }
      shards.back().push_back(*t);
      in_shard += t->bytes.size();
    }
    remove_shards();
    fs::remove(dir / "model.safetensors", ec);
    nlohmann::ordered_json index;
    index["metadata"] = {{"total_size", total}, {"producer", "trex"}};
    nlohmann::ordered_json wm = nlohmann::ordered_json::object();
    char buf[64];
    for (size_t i = 0; i < shards.size(); ++i) {
      std::snprintf(buf, sizeof buf, "model-%05zu-of-%05zu.safetensors", i + 1, shards.size());
      write_safetensors(dir / buf, shards[i], meta);
      for (const auto& t : shards[i]) wm[t.name] = buf;
    }
    index["weight_map"] = wm;
    write_file_atomic(dir / "model.safetensors.index.json", index.dump(2) + "\n");
  }
  write_file_atomic(dir / "config.json", cfg.to_hf_json().dump(2) + "\n");
  write_file_atomic(dir / "generation_config.json", hf_generation_config(cfg).dump(2) + "\n");
  if (!opt.tokenizer.empty())
    write_hf_tokenizer(dir, opt.tokenizer, cfg.max_position_embeddings > 0 ? cfg.max_position_embeddings : 65536);
}

}  // namespace trex::model
