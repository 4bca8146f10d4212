// The vector attention tiles' gather of a chunk's K or V rows into f32
// scratch. A plain template, no intrinsics: ISA-specific files include it and
// instantiate it with their own row converters (internal linkage).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/attention_ops.h"
#include "tensor/dtype.h"
#include "tensor/kv_row_bytes.h"
#include "util/fp16.h"

namespace db::kernels {
namespace {

// out[0..d) = elements [e0, e0 + d) of a Q8_0 cache row (kv_row_bytes layout:
// 34-byte blocks of an fp16 scale and 32 int8 codes) as code * scale in f32.
// The elements are cut into runs that stay inside one block, each converted by
// dequant_run(codes, scale, n, out); every level computes the same product, so
// the floats are the same at every level.
template <class DequantRun>
void dequant_kv_q8_0_with(const DequantRun& dequant_run, const uint8_t* row, int64_t e0, int d, float* out) {
  constexpr int64_t kBlock = 32, kBytes = 34;
  for (int64_t e = e0, end = e0 + d; e < end;) {
    const uint8_t* block = row + e / kBlock * kBytes;
    const int64_t in_block = e % kBlock, n = std::min(kBlock - in_block, end - e);
    dequant_run(reinterpret_cast<const int8_t*>(block + 2 + in_block), fp16_to_f32(load_u16(block)),
                static_cast<int>(n), out + (e - e0));
    e += n;
  }
}

// dst[r * dpad + 0..d) = kv head `head` (d wide) of cache slot slots[r] as
// f32, r < n_rows, slots row_stride elements apart: F32 rows copied, F16 and
// BF16 rows through convert_row(src, dtype, d, out), Q8_0 rows through
// dequant_kv_q8_0_with(dequant_run, ...).
template <class ConvertRow, class DequantRun>
void load_rows_with(const ConvertRow& convert_row, const DequantRun& dequant_run, const void* base, DType dtype,
                    const int64_t* slots, int n_rows, int64_t row_stride, int head, int d, int dpad, float* dst) {
  const auto* bytes = static_cast<const uint8_t*>(base);
  if (dtype == DType::Q8_0) {
    const auto row_nbytes = static_cast<int64_t>(kv_row_bytes(dtype, row_stride));
    for (int r = 0; r < n_rows; ++r)
      dequant_kv_q8_0_with(dequant_run, bytes + slots[r] * row_nbytes, int64_t{head} * d, d,
                           dst + static_cast<int64_t>(r) * dpad);
    return;
  }
  const auto elem = static_cast<int64_t>(block_bytes(dtype));
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
