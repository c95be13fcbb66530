// safetensors reader/writer (see safetensors.hpp for the format and the validation rules).
#include "model/safetensors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "util/atomic_file.hpp"
#include "util/error.hpp"

static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes a little-endian host");

namespace trex::model {
namespace {

struct DTypeEntry {
  DType dt;
  std::string_view name;
  int bits;
};
constexpr std::array<DTypeEntry, 20> kDTypes{{
    {DType::BOOL, "BOOL", 8},      {DType::F4, "F4", 4},          {DType::F6_E2M3, "F6_E2M3", 6},
    {DType::F6_E3M2, "F6_E3M2", 6}, {DType::U8, "U8", 8},          {DType::I8, "I8", 8},
    {DType::F8_E5M2, "F8_E5M2", 8}, {DType::F8_E4M3, "F8_E4M3", 8}, {DType::F8_E8M0, "F8_E8M0", 8},
    {DType::I16, "I16", 16},       {DType::U16, "U16", 16},       {DType::F16, "F16", 16},
    {DType::BF16, "BF16", 16},     {DType::I32, "I32", 32},       {DType::U32, "U32", 32},
    {DType::F32, "F32", 32},       {DType::C64, "C64", 64},       {DType::F64, "F64", 64},
    {DType::I64, "I64", 64},       {DType::U64, "U64", 64},
}};

[[noreturn]] void fail(const std::string& source, const std::string& msg) {
  throw Error(SourceLocation{source}, "safetensors: " + msg);
}

}  // namespace

std::string_view dtype_name(DType dt) { return kDTypes[static_cast<size_t>(dt)].name; }
int dtype_bits(DType dt) { return kDTypes[static_cast<size_t>(dt)].bits; }

bool try_parse_dtype(std::string_view name, DType& out) {
  for (const auto& e : kDTypes)
    if (e.name == name) {
      out = e.dt;
      return true;
    }
  return false;
}

DType parse_dtype(std::string_view name) {
  DType dt;
  if (!try_parse_dtype(name, dt)) throw Error("safetensors: unknown dtype '" + std::string(name) + "'");
  return dt;
}

int64_t shape_numel(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error("safetensors: negative dimension in shape " + shape_str(shape));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      throw Error("safetensors: element count overflows in shape " + shape_str(shape));
    n *= d;
  }
  return n;
}

uint64_t tensor_nbytes(DType dt, std::span<const int64_t> shape) {
  const uint64_t n = static_cast<uint64_t>(shape_numel(shape));
  const uint64_t bits = static_cast<uint64_t>(dtype_bits(dt));
  if (n > std::numeric_limits<uint64_t>::max() / bits)
    throw Error("safetensors: byte size overflows in shape " + shape_str(shape));
  if ((n * bits) % 8 != 0)
    throw Error("safetensors: " + std::string(dtype_name(dt)) + " tensor of shape " + shape_str(shape) +
                " does not fill whole bytes");
  return n * bits / 8;
}

std::string shape_str(std::span<const int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Backing bytes: a read-only private mapping of a file, or an owned string.
struct SafetensorsFile::Storage {
  void* map = nullptr;
  size_t map_len = 0;
  std::string owned;
  ~Storage() {
    if (map) ::munmap(map, map_len);
  }
};

SafetensorsFile::SafetensorsFile(SafetensorsFile&&) noexcept = default;
SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&&) noexcept = default;
SafetensorsFile::~SafetensorsFile() = default;

SafetensorsFile SafetensorsFile::open(const std::filesystem::path& path) {
  SafetensorsFile f;
  f.source_ = path.string();
  f.storage_ = std::make_unique<Storage>();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(f.source_, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    fail(f.source_, std::string("cannot stat: ") + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(f.source_, "not a regular file");
  }
  f.size_ = static_cast<uint64_t>(st.st_size);
  if (f.size_ > 0) {
    void* m = ::mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      int e = errno;
      ::close(fd);
      fail(f.source_, std::string("mmap failed: ") + std::strerror(e));
    }
    f.storage_->map = m;
    f.storage_->map_len = f.size_;
    f.base_ = static_cast<const std::byte*>(m);
  }
  ::close(fd);
  f.parse();
  return f;
}

SafetensorsFile SafetensorsFile::from_bytes(std::string bytes, std::string source_name) {
  SafetensorsFile f;
  f.source_ = std::move(source_name);
  f.storage_ = std::make_unique<Storage>();
  f.storage_->owned = std::move(bytes);
  f.base_ = reinterpret_cast<const std::byte*>(f.storage_->owned.data());
  f.size_ = f.storage_->owned.size();
  f.parse();
  return f;
}

void SafetensorsFile::parse() {
  using nlohmann::json;
  if (size_ < 8) fail(source_, "file too short for the 8-byte header length (" + std::to_string(size_) + " bytes)");
  uint64_t n = 0;
  std::memcpy(&n, base_, 8);
  if (n > kMaxHeaderBytes)
    fail(source_, "header length " + std::to_string(n) + " exceeds the limit of " + std::to_string(kMaxHeaderBytes));
  if (n > size_ - 8)
    fail(source_, "header length " + std::to_string(n) + " runs past the end of the file (" + std::to_string(size_) +
                      " bytes): truncated?");
  if (n < 2) fail(source_, "header too short to be a JSON object");
  header_len_ = n;
  const char* hdr = reinterpret_cast<const char*>(base_ + 8);
  if (hdr[0] != '{') fail(source_, "header does not start with '{'");

  // Duplicate top-level keys are an error (nlohmann would silently keep the last one).
  std::set<std::string> seen;
  std::string duplicate;
  json::parser_callback_t cb = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::key && depth == 1 && duplicate.empty()) {
      if (!seen.insert(parsed.get<std::string>()).second) duplicate = parsed.get<std::string>();
    }
    return true;
  };
  json header;
  try {
    header = json::parse(hdr, hdr + n, cb);
  } catch (const json::exception& e) {
    std::string msg = e.what();
    auto pos = msg.find("] ");
    fail(source_, "invalid header JSON: " + (pos == std::string::npos ? msg : msg.substr(pos + 2)));
  }
  if (!duplicate.empty()) fail(source_, "duplicate tensor name '" + duplicate + "' in header");
  if (!header.is_object()) fail(source_, "header is not a JSON object");

  const uint64_t data_size = size_ - 8 - n;
  tensors_.clear();
  index_.clear();
  metadata_.clear();
  for (auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) fail(source_, "__metadata__ must be an object of strings");
      for (auto& [k, v] : entry.items()) {
        if (!v.is_string()) fail(source_, "__metadata__ value for '" + k + "' is not a string");
        metadata_[k] = v.get<std::string>();
      }
      continue;
    }
    const std::string where = "tensor '" + name + "': ";
    if (name.empty()) fail(source_, "empty tensor name");
    if (!entry.is_object()) fail(source_, where + "entry is not an object");
    for (auto& [k, v] : entry.items())
      if (k != "dtype" && k != "shape" && k != "data_offsets") fail(source_, where + "unknown field '" + k + "'");
    TensorInfo t;
    t.name = name;
    auto dt = entry.find("dtype");
    if (dt == entry.end() || !dt->is_string()) fail(source_, where + "missing or non-string 'dtype'");
    if (!try_parse_dtype(dt->get<std::string>(), t.dtype))
      fail(source_, where + "unknown dtype '" + dt->get<std::string>() + "'");
    auto sh = entry.find("shape");
    if (sh == entry.end() || !sh->is_array()) fail(source_, where + "missing or non-array 'shape'");
    for (auto& d : *sh) {
      if (!d.is_number_unsigned())  // nlohmann stores every non-negative integer literal as unsigned
        fail(source_, where + "shape entries must be non-negative integers");
      uint64_t u = d.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) fail(source_, where + "dimension too large");
      t.shape.push_back(static_cast<int64_t>(u));
    }
    auto off = entry.find("data_offsets");
    if (off == entry.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
        !(*off)[1].is_number_unsigned())
      fail(source_, where + "'data_offsets' must be two non-negative integers");
    t.begin = (*off)[0].get<uint64_t>();
    t.end = (*off)[1].get<uint64_t>();
    if (t.end < t.begin) fail(source_, where + "data_offsets end < begin");
    if (t.end > data_size)
      fail(source_, where + "data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
                        ") run past the data buffer (" + std::to_string(data_size) + " bytes): truncated?");
    uint64_t want;
    try {
      want = tensor_nbytes(t.dtype, t.shape);
    } catch (const Error& e) {
      fail(source_, where + e.message());
    }
    if (want != t.nbytes())
      fail(source_, where + std::string(dtype_name(t.dtype)) + " " + shape_str(t.shape) + " needs " +
                        std::to_string(want) + " bytes but data_offsets span " + std::to_string(t.nbytes()));
    tensors_.push_back(std::move(t));
  }

  // Tensors must tile the data buffer exactly: sorted by offset, each starts where the previous ended.
  std::sort(tensors_.begin(), tensors_.end(), [](const TensorInfo& a, const TensorInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t cursor = 0;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const TensorInfo& t = tensors_[i];
    if (t.begin < cursor)
      fail(source_, "tensor '" + t.name + "' [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
                        ") overlaps tensor '" + tensors_[i - 1].name + "'");
    if (t.begin > cursor)
      fail(source_, "gap in the data buffer before tensor '" + t.name + "' (bytes " + std::to_string(cursor) + ".." +
                        std::to_string(t.begin) + " unused)");
    cursor = t.end;
    index_.emplace(t.name, i);
  }
  if (cursor != data_size)
    fail(source_, "data buffer has " + std::to_string(data_size - cursor) + " trailing bytes not covered by any tensor");
}

const TensorInfo* SafetensorsFile::find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

const TensorInfo& SafetensorsFile::at(std::string_view name) const {
  const TensorInfo* t = find(name);
  if (!t) fail(source_, "no tensor named '" + std::string(name) + "'");
  return *t;
}

TensorView SafetensorsFile::view(const TensorInfo& t) const {
  return TensorView{&t, std::span<const std::byte>(base_ + 8 + header_len_ + t.begin, t.nbytes())};
}

// ---- writer ----

namespace {

struct Layout {
  std::string header;                  // padded JSON, without the 8-byte length
  std::vector<const TensorToWrite*> order;  // data order
};

Layout layout(std::span<const TensorToWrite> tensors, const std::map<std::string, std::string>& metadata,
              const std::string& target) {
  using nlohmann::ordered_json;
  Layout out;
  std::set<std::string_view> names;
  for (const auto& t : tensors) {
    if (t.name.empty()) fail(target, "cannot write a tensor with an empty name");
    if (t.name == "__metadata__") fail(target, "'__metadata__' is reserved and cannot name a tensor");
    if (!names.insert(t.name).second) fail(target, "duplicate tensor name '" + t.name + "'");
    uint64_t want;
    try {
      want = tensor_nbytes(t.dtype, t.shape);
    } catch (const Error& e) {
      fail(target, "tensor '" + t.name + "': " + e.message());
    }
    if (want != t.bytes.size())
      fail(target, "tensor '" + t.name + "': " + std::string(dtype_name(t.dtype)) + " " + shape_str(t.shape) +
                       " needs " + std::to_string(want) + " bytes, got " + std::to_string(t.bytes.size()));
    out.order.push_back(&t);
  }
  // Python library order: larger dtype (enum order) first, then by name; keeps wide types aligned.
  std::sort(out.order.begin(), out.order.end(), [](const TensorToWrite* a, const TensorToWrite* b) {
    if (a->dtype != b->dtype) return a->dtype > b->dtype;
    return a->name < b->name;
  });
  ordered_json h = ordered_json::object();
  if (!metadata.empty()) {
    ordered_json m = ordered_json::object();
    for (const auto& [k, v] : metadata) m[k] = v;
    h["__metadata__"] = std::move(m);
  }
  uint64_t offset = 0;
  for (const TensorToWrite* t : out.order) {
    ordered_json e = ordered_json::object();
    e["dtype"] = std::string(dtype_name(t->dtype));
    e["shape"] = t->shape;
    e["data_offsets"] = {offset, offset + t->bytes.size()};
    h[t->name] = std::move(e);
    offset += t->bytes.size();
  }
  out.header = h.dump(-1, ' ', false, ordered_json::error_handler_t::strict);
  out.header.append((8 - out.header.size() % 8) % 8, ' ');
  if (out.header.size() > kMaxHeaderBytes) fail(target, "header would exceed the safetensors limit");
  return out;
}

std::string length_prefix(uint64_t n) {
  std::string s(8, '\0');
  std::memcpy(s.data(), &n, 8);
  return s;
}

}  // namespace

std::string serialize_safetensors(std::span<const TensorToWrite> tensors,
                                  const std::map<std::string, std::string>& metadata) {
  Layout l = layout(tensors, metadata, "<memory>");
  std::string out = length_prefix(l.header.size()) + l.header;
  for (const TensorToWrite* t : l.order)
    if (!t->bytes.empty()) out.append(reinterpret_cast<const char*>(t->bytes.data()), t->bytes.size());
  return out;
}

void write_safetensors(const std::filesystem::path& path, std::span<const TensorToWrite> tensors,
                       const std::map<std::string, std::string>& metadata) {
  Layout l = layout(tensors, metadata, path.string());
  AtomicFile f(path);
  f.write(length_prefix(l.header.size()));
  f.write(l.header);
  for (const TensorToWrite* t : l.order)
    f.write(std::string_view(reinterpret_cast<const char*>(t->bytes.data()), t->bytes.size()));
  f.commit();
}

}  // namespace trex::model
