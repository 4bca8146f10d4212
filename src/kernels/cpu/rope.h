// Rotary position embedding applied in place to a token's heads.
//
// Pair layout within the first n_rot = 2 * n_pairs dims of each head:
//   INTERLEAVED: pairs (2i, 2i+1)            GGUF llama (q/k rows permuted by the converter)
//   NEOX:        pairs (i, i + n_rot/2)      GGUF qwen2 and every HF checkpoint
// Pair i rotates by angle position * inv_freq[i]; dims past n_rot are untouched.
#pragma once
#include <cstdint>

namespace db::kernels {

enum class RopeStyle { INTERLEAVED, NEOX };

// cos_out[i] = mscale * cos(theta_i), sin_out[i] = mscale * sin(theta_i),
// theta_i = float(position) * inv_freq[i] (an f32 product, as the reference does).
void rope_angles(int32_t position, const float* inv_freq, int n_pairs, float mscale, float* cos_out, float* sin_out);

// Rotates each of n_heads vectors (consecutive, head_dim floats each) of x.
void rope_rotate(float* x, int n_heads, int head_dim, int n_pairs, RopeStyle style, const float* cos_v,
                 const float* sin_v);

}  // namespace db::kernels
