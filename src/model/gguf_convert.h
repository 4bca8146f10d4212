// Rewrites a GGUF model file with its weight matrices stored in another type
// (`deepbatch convert`): every tensor of two or more dimensions whose type can
// be read and whose rows the new type can hold is converted row by row
// (dequantized to floats, then stored in the new type); vectors (norms,
// biases) and other tensors are copied unchanged, and so is the metadata,
// except general.file_type, which names the new type. Converting a quantized
// file to F16/F32 keeps its weights exactly; to a quantized type it quantizes
// them as GGML's reference quantizers do. The new file is assembled in memory
// (about its own size) and then written.
#pragma once
#include <cstdint>
#include <string>

#include "tensor/dtype.h"

namespace db {

struct GgufConvertReport {
  int64_t converted = 0;  // tensors stored in the new type
  int64_t copied = 0;     // tensors copied unchanged
  uint64_t bytes = 0;     // size of the written file
};

// `type`: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1 or Q8_0. Throws db::Error for
// another type, an unreadable input, or a failed write (naming the path).
GgufConvertReport convert_gguf(const std::string& in_path, const std::string& out_path, DType type);

// The type a name such as "f16" or "Q8_0" stands for (any case); throws db::Error
// listing the accepted names otherwise.
DType convert_type_from_name(const std::string& name);

}  // namespace db
