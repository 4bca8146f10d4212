// RMSNorm: y = w * (x / sqrt(mean(x^2) + eps)), per row, f32.
#pragma once
#include <cstdint>

namespace db::kernels {

// One row of `dim` floats; x and y may alias. The sum of squares is accumulated
// in double, element i into partial sum i % 8, the eight partial sums then added
// in a fixed tree, so a row's result depends on nothing else.
void rms_norm(const float* x, const float* weight, int64_t dim, float eps, float* y);

}  // namespace db::kernels
