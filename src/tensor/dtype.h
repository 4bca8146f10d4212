// Element and quantization-block types. Numeric values equal GGML's type ids so
// that GGUF tensor infos map one-to-one; the FP8 types, which GGML has no id
// for, sit outside GGML's range (from 100) and are storage types only.
// Quantized types store blocks of `block_size(t)` elements in `block_bytes(t)`
// bytes, laid out exactly as GGML does.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace db {

enum class DType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  BF16 = 30,
  // Storage only (FP8 checkpoints, io/fp8.h): never computed with; a loader
  // converts such a matrix into a computable type (model/fp8_convert.h).
  F8_E4M3 = 100,  // 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities, NaN = S.1111.111
  F8_E5M2 = 101,  // 1 sign, 5 exponent (bias 15), 2 mantissa bits; IEEE-like infinities and NaNs
};

// Elements per block (1 for plain types).
int64_t block_size(DType t);
// Bytes per block (element size for plain types).
size_t block_bytes(DType t);
// Bytes for a row of n elements; n must be a multiple of block_size(t).
size_t row_bytes(DType t, int64_t n);
// "F32", "Q4_K", ...
std::string dtype_name(DType t);
// Maps a GGML type id to a DType; nullopt for ids this build does not know
// (and for the FP8 ids, which are not GGML's).
std::optional<DType> dtype_from_ggml(uint32_t id);
// True for types whose elements are stored in quantization blocks.
bool is_quantized(DType t);
// A KV cache element type by name: "f16", "bf16", "f32" or "q8_0" (int8 blocks of
// 32 with an fp16 scale). Throws db::Error "<what> must be f16, bf16, f32 or q8_0,
// got '<name>'" otherwise.
DType kv_dtype_from_name(const std::string& name, const std::string& what);

}  // namespace db
