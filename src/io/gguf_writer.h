// A small GGUF version 3 writer: metadata of every type (incl. nested arrays) and
// tensors of any DType from raw bytes. Used to write tiny checkpoints and test files.
//
// Layout written: header, metadata in insertion order, tensor infos in insertion
// order, padding to the alignment, then each tensor's bytes, each tensor padded to
// the alignment except the last (so the file ends where the last tensor ends).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "io/gguf.h"

namespace db {

class GGUFWriter {
 public:
  // `alignment` must be a nonzero power of two; a value other than 32 is recorded as
  // the UINT32 key "general.alignment" (written first).
  explicit GGUFWriter(uint64_t alignment = kGGUFDefaultAlignment);

  // Scalars. Keys must be unique; "general.alignment" is reserved for the constructor.
  void add_uint8(const std::string& key, uint8_t v);
  void add_int8(const std::string& key, int8_t v);
  void add_uint16(const std::string& key, uint16_t v);
  void add_int16(const std::string& key, int16_t v);
  void add_uint32(const std::string& key, uint32_t v);
  void add_int32(const std::string& key, int32_t v);
  void add_uint64(const std::string& key, uint64_t v);
  void add_int64(const std::string& key, int64_t v);
  void add_float32(const std::string& key, float v);
  void add_float64(const std::string& key, double v);
  void add_bool(const std::string& key, bool v);
  void add_string(const std::string& key, const std::string& v);
  // Arrays. `elem` must be an integer type (resp. FLOAT32/FLOAT64) that holds every value.
  void add_string_array(const std::string& key, const std::vector<std::string>& v);
  void add_int_array(const std::string& key, GGUFType elem, const std::vector<int64_t>& v);
  void add_float_array(const std::string& key, GGUFType elem, const std::vector<double>& v);
  // Any value, nested arrays included; throws db::Error when the value is inconsistent
  // (variant alternative vs type, element types, out-of-range integers).
  void add_value(const std::string& key, const GGUFValue& v);
  // True if `key` was added.
  bool has(const std::string& key) const;

  // A tensor with `shape` outermost first; `nbytes` must equal the size its dtype and
  // shape imply (shape.back() a multiple of the block size). The bytes are copied.
  void add_tensor(const std::string& name, DType dtype, const std::vector<int64_t>& shape, const void* data,
                  size_t nbytes);
  // A tensor whose bytes are all zero; nothing is held in memory for it.
  void add_zero_tensor(const std::string& name, DType dtype, const std::vector<int64_t>& shape);
  // A tensor whose bytes the caller writes itself, for files too large to hold:
  // write header_bytes(), then each reserved tensor's bytes at
  // header_bytes().size() + the returned offset, in a file data_size() bytes
  // past the header (write() writes zeros for it). With `layout` Panels16 the
  // tensor is recorded as pre-packed (kGGUFPanelTypeBase + its type; sizes:
  // tensor/panel_layout.h); its dtype must have a panel layout and it at least
  // two dimensions.
  uint64_t reserve_tensor(const std::string& name, DType dtype, const std::vector<int64_t>& shape,
                          TensorLayout layout = TensorLayout::Rows);

  // Everything before the data section, padded to the alignment; the file is these
  // bytes followed by data_size() bytes of tensor data.
  std::vector<uint8_t> header_bytes() const;
  uint64_t data_size() const { return data_size_; }
  // The complete file.
  std::vector<uint8_t> to_bytes() const;
  // Writes the file; throws db::Error naming the path on I/O failure.
  void write(const std::string& path) const;

 private:
  struct Tensor {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;  // outermost first
    TensorLayout layout;
    std::vector<uint8_t> bytes;  // empty for a zero or reserved tensor
    uint64_t nbytes;             // size of the tensor's data
    uint64_t offset;             // within the data section
  };
  // Validates the tensor and appends it; returns its size in bytes.
  size_t checked_size(const std::string& name, DType dtype, const std::vector<int64_t>& shape,
                      TensorLayout layout = TensorLayout::Rows) const;
  void append(Tensor t);

  uint64_t alignment_;
  std::vector<std::pair<std::string, GGUFValue>> kv_;
  std::vector<Tensor> tensors_;
  uint64_t data_size_ = 0;  // end of the last tensor within the data section
};

}  // namespace db
