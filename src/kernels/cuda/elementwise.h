// RMSNorm, RoPE (YaRN included) and SwiGLU on device f32 arrays, with the contracts
// of the CPU kernels they mirror (kernels/cpu/rms_norm.h, rope.h, activations.h).
#pragma once
#include <cstdint>

#include "kernels/cpu/rope.h"
#include "kernels/cuda/runtime.h"

namespace db::kernels::cuda {

// y[r] = w * x[r] / sqrt(mean(x[r]^2) + eps) for n_rows rows of dim floats (y may
// alias x); the sum of squares in f32 over a block-wide tree.
void rms_norm_rows(const float* x, const float* weight, int64_t n_rows, int64_t dim, float eps, float* y,
                   Stream& stream);

// Rotates x [n_tokens][n_heads][head_dim] in place as kernels::rope_angles +
// rope_rotate do for token t at positions[t]: pair i by theta = f32(position *
// inv_freq[i]), cos and sin taken in double and scaled by mscale (YaRN passes its
// inv_freq and mscale; plain RoPE mscale 1). positions (n_tokens) and inv_freq
// (n_pairs) are device arrays.
void rope(float* x, int64_t n_tokens, int n_heads, int head_dim, int n_pairs, RopeStyle style,
          const int32_t* positions, const float* inv_freq, float mscale, Stream& stream);

// out[i] = silu(gate[i]) * up[i], silu(v) = v / (1 + exp(-v)); out may alias gate or up.
void swiglu(const float* gate, const float* up, int64_t n, float* out, Stream& stream);

}  // namespace db::kernels::cuda
