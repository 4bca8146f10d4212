// The vector RMSNorm levels' walk over rows (kernels/cpu/rms_norm.h): rows in
// fours, whose sums of squares are taken together so that their chains of
// dependent adds overlap, then each row scaled. A plain template, no
// intrinsics: ISA-specific files include it and instantiate it with their own
// vector steps (internal linkage).
//
// V provides: a type Sums (one row's eight partial sums); zero(), add(sums, p)
// (the squares of the 8 floats at p into partial sums 0..7), add_tail(sums, p,
// n) (the first n < 8 floats at p into partial sums 0..n-1), store(sums, part)
// and scale_row(x, weight, dim, inv_rms, y).
#pragma once
#include <cstdint>

namespace db::kernels {

// Declared here as well as in rms_norm.h, whose cpu_features.h (std::string
// members) the ISA-specific files must not include; defined in rms_norm.cpp.
float rms_norm_inverse(const double (&part)[8], int64_t dim, float eps);

namespace {

template <class V, int R>
void norm_rows(const float* x, const float* weight, int64_t dim, float eps, float* y) {
  typename V::Sums sums[R];
  for (auto& s : sums) s = V::zero();
  int64_t i = 0;
  for (; i + 8 <= dim; i += 8)
    for (int r = 0; r < R; ++r) V::add(sums[r], x + r * dim + i);
  if (i < dim)  // the tail's element j goes to partial sum j
    for (int r = 0; r < R; ++r) V::add_tail(sums[r], x + r * dim + i, dim - i);
  for (int r = 0; r < R; ++r) {  // every sum is taken before any row is written (y may alias x)
    alignas(64) double part[8];
    V::store(sums[r], part);
    V::scale_row(x + r * dim, weight, dim, rms_norm_inverse(part, dim, eps), y + r * dim);
  }
}

template <class V>
void norm_rows_in_fours(const float* x, const float* weight, int64_t n_rows, int64_t dim, float eps, float* y) {
  int64_t r = 0;
  for (; r + 4 <= n_rows; r += 4) norm_rows<V, 4>(x + r * dim, weight, dim, eps, y + r * dim);
  for (; r < n_rows; ++r) norm_rows<V, 1>(x + r * dim, weight, dim, eps, y + r * dim);
}

}  // namespace
}  // namespace db::kernels
