// The byte size of a KV cache row, shared by the block budget
// (kvcache/kv_cache_shape.h), the store (model/kv_store.h) and the attention
// kernels, which address Q8_0 rows by it.
#pragma once
#include <cstddef>
#include <cstdint>

#include "tensor/dtype.h"

namespace db {

// Bytes of one KV cache row of n >= 0 elements in t: n times the element size
// for plain types; for Q8_0, ceil(n / 32) GGML Q8_0 blocks (34 bytes: an fp16
// scale, then 32 int8 codes), the last padded with zero codes, so any n is
// allowed and element e lives in block e / 32. Out of line: the ISA-specific
// kernel files call it too (src/kernels/CMakeLists.txt).
size_t kv_row_bytes(DType t, int64_t n);

}  // namespace db
