// Safetensors reader: an 8-byte little-endian header length, a JSON header mapping
// tensor names to {dtype, shape, data_offsets}, then the data; memory-mapped.
//
// Contract: `open` either returns a file whose every tensor lies inside the data
// section with exactly shape * element-size bytes, or throws db::Error naming the
// file and the tensor. "__metadata__" is ignored. Tensor data is not necessarily
// aligned to its element size (the format does not promise it): read it with memcpy.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/mapped_file.h"
#include "tensor/tensor.h"

namespace db {

class SafetensorsFile {
 public:
  // Accepted dtypes: F32, F16, BF16, F64, I8, I16, I32, I64 (integers read as raw
  // values), F8_E4M3 and F8_E5M2 (storage only: model/fp8_convert.h converts them).
  static std::unique_ptr<SafetensorsFile> open(const std::string& path);

  const std::string& path() const { return path_; }
  // Tensor names in sorted order.
  std::vector<std::string> tensor_names() const;
  size_t num_tensors() const { return tensors_.size(); }
  // nullopt when the file has no tensor of that name.
  std::optional<TensorView> find(const std::string& name) const;
  // Throws db::Error naming the file and the tensor when it is missing.
  TensorView tensor(const std::string& name) const;

 private:
  SafetensorsFile() = default;
  void parse_header();

  struct Entry {
    DType dtype;
    std::vector<int64_t> shape;  // outermost first
    size_t offset;               // absolute file offset of the first byte
  };
  std::string path_;
  std::unique_ptr<MappedFile> map_;
  std::map<std::string, Entry> tensors_;
};

}  // namespace db
