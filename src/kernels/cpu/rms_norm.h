// RMSNorm: y = w * (x / sqrt(mean(x^2) + eps)), per row, f32.
#pragma once
#include <cstdint>

#include "util/cpu_features.h"

namespace db::kernels {

// One row of `dim` floats; x and y may alias. The sum of squares is accumulated
// in double, element i into partial sum i % 8, the eight partial sums then added
// in a fixed tree, so a row's result depends on nothing else. Every ISA level
// keeps exactly these sums (a float's square is exact in double, so a fused
// multiply-add rounds as the separate add does): identical bytes at every level.
void rms_norm(const float* x, const float* weight, int64_t dim, float eps, float* y);
// rms_norm() of n_rows consecutive rows (row r at x + r * dim, into y + r * dim;
// y may alias x). The vector levels sum several rows at once, whose chains of
// adds then overlap: the same bytes per row as rms_norm(), in less time.
void rms_norm_rows(const float* x, const float* weight, int64_t n_rows, int64_t dim, float eps, float* y);
// rms_norm_rows() with the implementation of `level`; throws db::Error if this
// CPU cannot run that level.
void rms_norm_rows_isa(IsaLevel level, const float* x, const float* weight, int64_t n_rows, int64_t dim, float eps,
                       float* y);

// The step every level shares: 1 / sqrt(mean + eps) from the eight partial
// sums (the fixed tree). Each level then writes y[i] = w[i] * (x[i] * that).
// The kernel rms_norm_rows_isa runs at `level` (for tests of the dispatch).
using RmsNormRowsFn = void (*)(const float* x, const float* weight, int64_t n_rows, int64_t dim, float eps, float* y);
RmsNormRowsFn rms_norm_rows_kernel(IsaLevel level);

float rms_norm_inverse(const double (&part)[8], int64_t dim, float eps);

}  // namespace db::kernels
