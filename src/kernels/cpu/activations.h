// Gated activations of feed-forward blocks, elementwise in f32.
#pragma once
#include <cstdint>

#include "util/cpu_features.h"

namespace db::kernels {

// SwiGLU: out[i] = silu(gate[i]) * up[i], silu(x) = x / (1 + exp(-x)). out may
// alias gate or up. An element's result depends only on its two inputs (and the
// process-wide ISA level), never on its index or on n.
void swiglu(const float* gate, const float* up, int64_t n, float* out);
// swiglu() with the implementation of `level` (the vector levels use a vector
// exponential); throws db::Error if this CPU cannot run that level.
void swiglu_isa(IsaLevel level, const float* gate, const float* up, int64_t n, float* out);

// The kernel swiglu_isa runs at `level` (for tests of the dispatch).
using SwigluFn = void (*)(const float* gate, const float* up, int64_t n, float* out);
SwigluFn swiglu_kernel(IsaLevel level);

}  // namespace db::kernels
