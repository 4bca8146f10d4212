// AWQ and GPTQ 4-bit linear layers repacked at load into the engine's blocks.
//
// Stored forms (4-bit codes q, zero points z and f16 scales s per group of
// `group_size` inputs; the weight is W[out][in] = (q - z) * s):
//   AWQ (AutoAWQ "gemm"): qweight int32 {in, out / 8}, qzeros int32
//     {in / g, out / 8}, both packed along the output with the interleaved
//     nibble order: nibble k (bits 4k..4k+3) of word j holds output 8j + {0, 2,
//     4, 6, 1, 3, 5, 7}[k]; scales {in / g, out}.
//   GPTQ: qweight int32 {in / 8, out} packed along the input (nibble k of word
//     (i / 8, o) is input 8(i / 8) + k), qzeros int32 {ceil(in / g), out / 8}
//     packed along the output in plain order (nibble k: output 8j + k), scales
//     {ceil(in / g), out}, g_idx int32 {in}: the group of every input (with
//     desc_act the groups are not contiguous). checkpoint_format "gptq" stores
//     z - 1 in qzeros, "gptq_v2" z itself.
//
// The default target is Q4_1, written straight from the codes: for a block of
// 32 inputs that lie in one group, d = s (the same f16) and m = f16(-z * s), so
// each value d * q + m differs from (q - z) * s only by the rounding of m:
// |error| <= 2^-11 * |z * s| (half an f16 ulp; 2^-25 absolute below f16's
// normal range). A block whose inputs span several groups (desc_act) cannot be
// one Q4_1 block; such a matrix goes through floats into Q8_0 instead (error
// <= half a Q8_0 step, about max|w| / 254 over its 32-block). Rows whose input
// count is not a multiple of 32 are stored as F16 (every (q - z) * s with an f16
// s and |q - z| <= 16 is within f16's rounding of the exact value).
#pragma once
#include <optional>
#include <string>

#include "model/checkpoint_quant.h"
#include "model/converted_matrix.h"
#include "util/thread_pool.h"

namespace db {

// The stored tensors of one linear layer ("<prefix>.qweight", ...).
struct Int4Layer {
  TensorView qweight, qzeros, scales;
  std::optional<TensorView> g_idx;  // GPTQ only; absent: input i is in group i / group_size
};

// How a layer was stored.
enum class Int4Path {
  Q4_1Direct,     // codes copied into Q4_1 blocks
  ThroughFloats,  // dequantized, then quantized / stored in the target type
};

struct Int4Result {
  ConvertedMatrix matrix;
  Int4Path path;
};

// Converts one layer: into Q4_1 directly when `target` is unset or Q4_1 and the
// groups allow it (see above), else through floats into `target` (Q8_0 when
// unset), falling back to F16 where the rows are not whole blocks. Rows are
// converted on `pool` when given. Throws db::Error for shapes or dtypes that do
// not fit the method, naming the tensor: `what` + "<part>'" with `what` as
// "<file>: tensor '<layer prefix>." (e.g. "...: tensor 'model.layers.0.mlp.up_proj.").
Int4Result repack_int4(const CheckpointQuant& q, const Int4Layer& t, std::optional<DType> target, ThreadPool* pool,
                       const std::string& what);

}  // namespace db
