// FP8 block-quantized matrices (DeepSeek-V3 / R1 as released) converted once at
// load into a type the kernels compute with.
#pragma once
#include <cstdint>
#include <string>

#include "model/converted_matrix.h"
#include "util/thread_pool.h"

namespace db {

// w: an F8_E4M3 / F8_E5M2 matrix {rows, cols}; scale_inv: its block scales
// {ceil(rows / bm), ceil(cols / bn)} (F32, F16 or BF16). Element (r, c) is
// decode(w[r][c]) * scale_inv[r / bm][c / bn], computed in float32 (exact up to
// one rounding), then stored as converted_row_type(target, cols): rows of the
// last, partial blocks simply use the partial block's scale. Rows are
// converted on `pool` when given. Throws db::Error naming `file` and the tensor
// (`name`, or its "<name>_scale_inv") when the shapes or dtypes do not fit.
ConvertedMatrix convert_fp8_matrix(const TensorView& w, const TensorView& scale_inv, int64_t bm, int64_t bn,
                                   DType target, ThreadPool* pool, const std::string& file, const std::string& name);

}  // namespace db
