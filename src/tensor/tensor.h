// A non-owning view of a tensor's bytes (usually inside a memory-mapped model file).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tensor/dtype.h"

namespace db {

// How a weight matrix's bytes are arranged.
enum class TensorLayout : uint8_t {
  Rows,      // GGUF order: row after row, each row a run of quantization blocks
  Panels16,  // the matmul kernels' repacked form (kernels/packed_weights.h): rows in
             // groups of 16, interleaved block by block; read only by the kernels
};

struct TensorView {
  DType dtype = DType::F32;
  // Dimensions, outermost first (numpy / PyTorch order). A weight matrix of a
  // linear layer y = W x is {out_features, in_features}; rows are contiguous.
  std::vector<int64_t> shape;
  const void* data = nullptr;  // first byte of the first row (Rows) or first panel (Panels16)
  TensorLayout layout = TensorLayout::Rows;

  int64_t numel() const;
  // Innermost dimension (elements per row) and number of rows (product of the rest).
  int64_t cols() const { return shape.empty() ? 1 : shape.back(); }
  int64_t rows() const { return cols() == 0 ? 0 : numel() / cols(); }
  // Bytes of a row and row r's address: Rows layout only.
  size_t row_nbytes() const { return row_bytes(dtype, cols()); }
  // Bytes of the whole tensor in its layout (Panels16: tensor/panel_layout.h,
  // each outer {rows, cols} matrix padded to whole groups).
  size_t nbytes() const;
  const uint8_t* row(int64_t r) const { return static_cast<const uint8_t*>(data) + r * row_nbytes(); }
  std::string shape_str() const;
};

}  // namespace db
