// A non-owning view of a tensor's bytes (usually inside a memory-mapped model file).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tensor/dtype.h"

namespace db {

struct TensorView {
  DType dtype = DType::F32;
  // Dimensions, outermost first (numpy / PyTorch order). A weight matrix of a
  // linear layer y = W x is {out_features, in_features}; rows are contiguous.
  std::vector<int64_t> shape;
  const void* data = nullptr;  // first byte of the first row

  int64_t numel() const;
  // Innermost dimension (elements per row) and number of rows (product of the rest).
  int64_t cols() const { return shape.empty() ? 1 : shape.back(); }
  int64_t rows() const { return cols() == 0 ? 0 : numel() / cols(); }
  size_t row_nbytes() const { return row_bytes(dtype, cols()); }
  size_t nbytes() const { return row_nbytes() * static_cast<size_t>(rows()); }
  const uint8_t* row(int64_t r) const { return static_cast<const uint8_t*>(data) + r * row_nbytes(); }
  std::string shape_str() const;
};

}  // namespace db
