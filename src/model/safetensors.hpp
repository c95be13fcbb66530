// safetensors container: read (mmap, strict header validation) and write (atomic, 8-byte aligned header).
// Format: u64 little-endian header length N, N bytes of JSON
//   {"__metadata__": {str: str}, "<name>": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...},
// then the byte buffer; offsets are relative to the buffer, tensors tile it exactly (no gaps, no overlaps).
// Every malformed input raises trex::Error naming the file; nothing here interprets tensor values
// (see quant.hpp for number formats).
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace trex::model {

// All dtypes of the safetensors specification (Rust crate 0.6), in the crate's enum order (used for
// the writer's layout order, as the Python library does).
enum class DType : uint8_t {
  BOOL, F4, F6_E2M3, F6_E3M2, U8, I8, F8_E5M2, F8_E4M3, F8_E8M0, I16, U16, F16, BF16, I32, U32, F32, C64, F64,
  I64, U64,
};

std::string_view dtype_name(DType dt);
DType parse_dtype(std::string_view name);  // throws trex::Error on an unknown name
bool try_parse_dtype(std::string_view name, DType& out);
int dtype_bits(DType dt);                  // 4 for F4, 6 for F6_*, 8 * bytes otherwise

// Byte size of a tensor; throws trex::Error on overflow or on a sub-byte total that is not whole bytes.
uint64_t tensor_nbytes(DType dt, std::span<const int64_t> shape);
int64_t shape_numel(std::span<const int64_t> shape);  // throws on negative dims or overflow
std::string shape_str(std::span<const int64_t> shape);  // "[2, 3]"

struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // byte offsets into the data buffer
  int64_t numel() const { return shape_numel(shape); }
  uint64_t nbytes() const { return end - begin; }
};

// Read-only view of one tensor's bytes inside an open file.
struct TensorView {
  const TensorInfo* info = nullptr;
  std::span<const std::byte> bytes;
};

constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // same limit as the reference implementation

class SafetensorsFile {
 public:
  // Memory-maps `path` and validates the header. Throws trex::Error naming the file.
  static SafetensorsFile open(const std::filesystem::path& path);
  // Parses an in-memory image (tests, fuzzing); `source_name` is used in error messages.
  static SafetensorsFile from_bytes(std::string bytes, std::string source_name);

  SafetensorsFile(SafetensorsFile&&) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&&) noexcept;
  ~SafetensorsFile();

  const std::string& source() const { return source_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }  // in data-offset order
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const TensorInfo* find(std::string_view name) const;  // nullptr if absent
  bool contains(std::string_view name) const { return find(name) != nullptr; }
  const TensorInfo& at(std::string_view name) const;  // throws trex::Error if absent
  TensorView view(const TensorInfo& t) const;
  TensorView view(std::string_view name) const { return view(at(name)); }
  uint64_t header_bytes() const { return header_len_; }

 private:
  struct Storage;
  SafetensorsFile() = default;
  void parse();
  std::string source_;
  std::unique_ptr<Storage> storage_;
  const std::byte* base_ = nullptr;
  uint64_t size_ = 0, header_len_ = 0;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> index_;
  std::map<std::string, std::string> metadata_;
};

// One tensor to write: raw little-endian bytes of the given dtype and shape.
struct TensorToWrite {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::span<const std::byte> bytes;
};

// Lays out tensors like the Python library (by dtype, largest enum first, then by name), writes the
// header with "__metadata__" first and the tensors in offset order, pads the header with spaces to a
// multiple of 8 bytes. Validates names (unique, non-empty, not "__metadata__") and byte sizes.
std::string serialize_safetensors(std::span<const TensorToWrite> tensors,
                                  const std::map<std::string, std::string>& metadata = {});
// Same bytes, streamed to `path` through an AtomicFile (nothing half-written on failure).
void write_safetensors(const std::filesystem::path& path, std::span<const TensorToWrite> tensors,
                       const std::map<std::string, std::string>& metadata = {});

template <typename T>
std::span<const std::byte> as_bytes_of(const std::vector<T>& v) {
  return std::as_bytes(std::span<const T>(v));
}

}  // namespace trex::model
