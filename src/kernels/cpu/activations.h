// Gated activations of feed-forward blocks, elementwise in f32.
#pragma once
#include <cstdint>

namespace db::kernels {

// SwiGLU: out[i] = silu(gate[i]) * up[i], silu(x) = x / (1 + exp(-x)). out may alias gate or up.
void swiglu(const float* gate, const float* up, int64_t n, float* out);

}  // namespace db::kernels
