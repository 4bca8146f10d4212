#include "tensor/tensor.h"

#include "tensor/panel_layout.h"

namespace db {

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

size_t TensorView::nbytes() const {
  if (layout == TensorLayout::Rows) return row_nbytes() * static_cast<size_t>(rows());
  const int64_t matrix_rows = shape.size() < 2 ? 1 : shape[shape.size() - 2];
  const int64_t matrices = matrix_rows == 0 ? 0 : rows() / matrix_rows;
  return static_cast<size_t>(matrices * panel_matrix_bytes(dtype, matrix_rows, cols()));
}

std::string TensorView::shape_str() const {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace db
