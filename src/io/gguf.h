// GGUF reader (versions 2 and 3): every metadata value type, tensor infos, the
// data section's alignment, and tensors memory-mapped in place.
//
// Contract: `GGUFFile::open` either returns a fully validated file or throws
// db::Error naming the file, the key or tensor, what was expected and what was
// found. Every offset and size is bounds-checked against the file size, so a
// truncated or corrupt file never reads out of bounds, and every count is checked
// against the bytes left before anything is allocated for it. Limits: metadata
// arrays nest at most 16 levels and hold at most 2^23 elements over the whole file;
// tensors have at most 4 dimensions. Version 1 files and big-endian files are rejected.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "io/mapped_file.h"
#include "tensor/tensor.h"

namespace db {

enum class GGUFType : uint32_t {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6,
  BOOL = 7, STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};
// The data section's alignment when `general.alignment` is absent, and rounding up to it.
constexpr uint64_t kGGUFDefaultAlignment = 32;
constexpr uint64_t gguf_align_up(uint64_t x, uint64_t alignment) { return (x + alignment - 1) / alignment * alignment; }

// Pre-packed tensors (written by `deepbatch convert --pack`, model/gguf_pack.h):
// a tensor of ggml type kGGUFPanelTypeBase + id holds matrices of type id in
// the Panels16 layout (tensor/panel_layout.h), so that other GGUF readers refuse
// the file rather than misread it. Such a tensor is accepted only when the file's
// kGGUFPanelVersionKey equals this build's kPanelLayoutVersion.
constexpr uint32_t kGGUFPanelTypeBase = 1024;
inline constexpr const char* kGGUFPanelVersionKey = "deepbatch.panels.layout_version";
// The ISA level the file was packed for (util/cpu_features.h's level names).
inline constexpr const char* kGGUFPanelLevelKey = "deepbatch.panels.level";

// "UINT32", "STRING", ...; "type#N" for ids outside the enum.
std::string gguf_type_name(GGUFType t);

// One metadata value. Arrays hold their element type and elements; nested arrays are allowed.
// The alternative held in `v` follows `type`: UINT* -> uint64_t, INT* -> int64_t,
// FLOAT* -> double, BOOL -> bool, STRING -> std::string, ARRAY -> std::vector<GGUFValue>.
struct GGUFValue {
  GGUFType type = GGUFType::UINT8;
  std::variant<uint64_t, int64_t, double, bool, std::string, std::vector<GGUFValue>> v;
  GGUFType array_type = GGUFType::UINT8;  // element type when type == ARRAY
};
// `gguf_type_name(v.type)`, with the element type for arrays: "ARRAY[STRING]".
std::string gguf_value_type_name(const GGUFValue& v);

struct GGUFTensorInfo {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;  // outermost first (GGUF stores ne[] innermost first; reversed here)
  uint64_t offset = 0;         // relative to the start of the data section
  size_t nbytes = 0;           // bytes of tensor data (TensorView::nbytes of its view)
  TensorLayout layout = TensorLayout::Rows;  // Panels16 for a pre-packed tensor
};

class GGUFFile {
 public:
  static std::unique_ptr<GGUFFile> open(const std::string& path);

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  // Absolute file offset of the data section (tensor offsets are relative to it).
  size_t data_offset() const { return data_offset_; }
  // The whole file's mapping (e.g. to prefetch it).
  const MappedFile& mapping() const { return *map_; }

  // --- metadata ---
  const std::map<std::string, GGUFValue>& metadata() const { return kv_; }
  const GGUFValue* find(const std::string& key) const;
  bool has(const std::string& key) const { return find(key) != nullptr; }
  // Typed getters throw db::Error when the key is missing or has an incompatible type.
  // Integer getters accept any integer type whose value fits; float accepts any number.
  std::string get_string(const std::string& key) const;
  int64_t get_int(const std::string& key) const;
  uint64_t get_uint(const std::string& key) const;
  double get_float(const std::string& key) const;
  bool get_bool(const std::string& key) const;
  std::vector<std::string> get_string_array(const std::string& key) const;
  std::vector<int64_t> get_int_array(const std::string& key) const;
  std::vector<double> get_float_array(const std::string& key) const;
  // Optional variants: nullopt when the key is absent; still throw on a wrong type.
  std::optional<std::string> opt_string(const std::string& key) const;
  std::optional<int64_t> opt_int(const std::string& key) const;
  std::optional<double> opt_float(const std::string& key) const;
  std::optional<bool> opt_bool(const std::string& key) const;

  // --- tensors ---
  const std::vector<GGUFTensorInfo>& tensor_infos() const { return tensors_; }
  const GGUFTensorInfo* find_tensor(const std::string& name) const;
  // A view into the mapping; throws db::Error when the tensor is missing.
  TensorView tensor(const std::string& name) const;

 private:
  GGUFFile() = default;
  friend class GGUFParser;
  std::string path_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  std::map<std::string, GGUFValue> kv_;
  std::vector<GGUFTensorInfo> tensors_;
  std::map<std::string, size_t> tensor_index_;
  size_t data_offset_ = 0;
  std::unique_ptr<MappedFile> map_;
};

}  // namespace db
