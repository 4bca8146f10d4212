// The two 8-bit float formats of FP8 checkpoints (safetensors F8_E4M3 /
// F8_E5M2, the OCP "FP8" formats PyTorch calls float8_e4m3fn / float8_e5m2),
// decoded to float32. Every FP8 value is exactly representable in float32.
#pragma once
#include <cstdint>

#include "tensor/dtype.h"

namespace db {

// E4M3 ("fn"): exponent bias 7, no infinities; S.1111.111 is NaN; largest finite 448.
float fp8_e4m3_to_f32(uint8_t v);
// E5M2: exponent bias 15, IEEE-like: exponent 31 holds infinities and NaNs; largest finite 57344.
float fp8_e5m2_to_f32(uint8_t v);

// The 256 float32 values of the bytes 0..255 in format t (F8_E4M3 or F8_E5M2);
// throws db::Error for another type. The table lives for the whole program.
const float* fp8_decode_table(DType t);

}  // namespace db
