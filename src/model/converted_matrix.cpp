#include "model/converted_matrix.h"

#include <cmath>
#include <cstring>

#include "kernels/quantize.h"
#include "kernels/quantize_k.h"
#include "util/fp16.h"

namespace db {

namespace {

// Q8_0 as GGML's reference quantizer writes it (d = max|x| / 127, codes x / d
// rounded half away from zero), without its per-element library calls: the
// conversion of a whole checkpoint spends most of its time here. A value within
// one float ulp of a rounding boundary may round the other way than roundf
// would, which moves it by at most one step (the error stays <= d / 2 + ulp).
void converted_row_q8_0(const float* x, kernels::BlockQ8_0* y, int64_t n) {
  for (int64_t b = 0; b < n / kernels::kQK; ++b, x += kernels::kQK) {
    float amax = 0.0f;
    for (int j = 0; j < kernels::kQK; ++j) {
      const float a = std::fabs(x[j]);
      amax = a > amax ? a : amax;
    }
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const uint16_t d16 = f32_to_fp16(d);
    std::memcpy(y[b].d, &d16, sizeof d16);
    for (int j = 0; j < kernels::kQK; ++j) {
      float v = x[j] * id;
      v = v >= -127.0f ? v : -127.0f;  // NaN -> -127, as GGML's clamp gives
      v = v <= 127.0f ? v : 127.0f;
      y[b].qs[j] = static_cast<int8_t>(static_cast<int>(v + (v >= 0.0f ? 0.5f : -0.5f)));
    }
  }
}

}  // namespace

ConvertedMatrix::ConvertedMatrix(DType t, int64_t rows, int64_t cols)
    : dtype(t), shape{rows, cols}, data(static_cast<size_t>(rows) * row_bytes(t, cols)) {}

TensorView ConvertedMatrix::view() const { return TensorView{dtype, shape, data.data()}; }

DType converted_row_type(DType want, int64_t cols) {
  return cols % block_size(want) == 0 ? want : DType::F16;
}

void store_float_row(DType t, const float* x, uint8_t* dst, int64_t n) {
  if (t == DType::Q8_0 && n % kernels::kQK == 0) {
    converted_row_q8_0(x, reinterpret_cast<kernels::BlockQ8_0*>(dst), n);
    return;
  }
  if (t == DType::Q4_K) {
    kernels::quantize_row_q4_k(x, reinterpret_cast<kernels::BlockQ4_K*>(dst), n);
    return;
  }
  kernels::quantize_row(t, x, dst, n);
}

}  // namespace db
