// The vector attention tiles' gather of a chunk's K or V rows into f32
// scratch. A plain template, no intrinsics: ISA-specific files include it and
// instantiate it with their own row converter (internal linkage).
#pragma once
#include <cstdint>
#include <cstring>

#include "kernels/cpu/attention_ops.h"
#include "tensor/dtype.h"

namespace db::kernels {
namespace {

// dst[r * dpad + 0..d) = kv head `head` (d wide) of cache slot slots[r] as
// f32, r < n_rows, slots row_stride elements apart: F32 rows copied, F16 and
// BF16 rows through convert_row(src, dtype, d, out).
template <class ConvertRow>
void load_rows_with(const ConvertRow& convert_row, const void* base, DType dtype, const int64_t* slots, int n_rows,
                    int64_t row_stride, int head, int d, int dpad, float* dst) {
  const auto elem = static_cast<int64_t>(block_bytes(dtype));
  const auto* bytes = static_cast<const uint8_t*>(base);
  for (int r = 0; r < n_rows; ++r) {
    const uint8_t* src = bytes + kv_cache_offset(slots[r], row_stride, head, d) * elem;
    float* out = dst + static_cast<int64_t>(r) * dpad;
    if (dtype == DType::F32)
      std::memcpy(out, src, static_cast<size_t>(d) * sizeof(float));
    else
      convert_row(src, dtype, d, out);
  }
}

}  // namespace
}  // namespace db::kernels
