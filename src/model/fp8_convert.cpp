#include "model/fp8_convert.h"

#include <vector>

#include "io/fp8.h"
#include "kernels/matmul.h"
#include "util/error.h"

namespace db {

namespace {

void fp8_check_shapes(const TensorView& w, const TensorView& s, int64_t bm, int64_t bn, const std::string& file,
                      const std::string& name) {
  const std::string what = file + ": tensor '" + name + "'", scale = file + ": tensor '" + name + "_scale_inv'";
  if (w.dtype != DType::F8_E4M3 && w.dtype != DType::F8_E5M2)
    throw Error(what + ": expected an F8_E4M3 or F8_E5M2 matrix, got " + dtype_name(w.dtype));
  if (w.shape.size() != 2) throw Error(what + ": expected a matrix {rows, cols}, got shape " + w.shape_str());
  const std::vector<int64_t> want{(w.shape[0] + bm - 1) / bm, (w.shape[1] + bn - 1) / bn};
  if (s.shape != want) {
    TensorView expected;
    expected.shape = want;
    throw Error(scale + ": expected shape " + expected.shape_str() + " (blocks of " + std::to_string(bm) +
                " x " + std::to_string(bn) + " over " + w.shape_str() + "), got " + s.shape_str());
  }
  if (s.dtype != DType::F32 && s.dtype != DType::F16 && s.dtype != DType::BF16)
    throw Error(scale + ": expected F32, F16 or BF16 scales, got " + dtype_name(s.dtype));
}

}  // namespace

ConvertedMatrix convert_fp8_matrix(const TensorView& w, const TensorView& scale_inv, int64_t bm, int64_t bn,
                                   DType target, ThreadPool* pool, const std::string& file, const std::string& name) {
  fp8_check_shapes(w, scale_inv, bm, bn, file, name);
  const int64_t rows = w.shape[0], cols = w.shape[1];
  const int64_t scale_cols = scale_inv.shape[1];
  std::vector<float> scales(static_cast<size_t>(scale_inv.numel()));
  for (int64_t r = 0; r < scale_inv.shape[0]; ++r)
    kernels::dequantize_row(scale_inv, r, scales.data() + r * scale_cols);
  ConvertedMatrix out(converted_row_type(target, cols), rows, cols);
  const float* table = fp8_decode_table(w.dtype);
  auto convert_rows = [&](int64_t begin, int64_t end) {
    std::vector<float> row(static_cast<size_t>(cols));
    for (int64_t r = begin; r < end; ++r) {
      const uint8_t* src = w.row(r);
      const float* s = scales.data() + (r / bm) * scale_cols;
      for (int64_t c = 0; c < cols; ++c) row[static_cast<size_t>(c)] = table[src[c]] * s[c / bn];
      store_float_row(out.dtype, row.data(), out.row(r), cols);
    }
  };
  if (pool != nullptr) {
    pool->parallel_for(rows, convert_rows);
  } else {
    convert_rows(0, rows);
  }
  return out;
}

}  // namespace db
