#include "kernels/cpu/rms_norm.h"

#include <cmath>
#include <string>

#include "kernels/cpu/isa_table.h"
#include "util/error.h"

namespace db::kernels {

#if defined(__x86_64__)
namespace avx2 {
void rms_norm_rows(const float* x, const float* weight, int64_t n_rows, int64_t dim, float eps, float* y);
}  // namespace avx2
namespace avx512 {
void rms_norm_rows(const float* x, const float* weight, int64_t n_rows, int64_t dim, float eps, float* y);
}  // namespace avx512
#endif

namespace {

void rms_norm_row_scalar(const float* x, const float* weight, int64_t dim, float eps, float* y) {
  // Element i adds to partial sum i % 8: eight independent chains rather than
  // one add waiting on the last (the sum was latency-bound).
  double part[8] = {};
  int64_t i = 0;
  for (; i + 8 <= dim; i += 8)
    for (int j = 0; j < 8; ++j) part[j] += static_cast<double>(x[i + j]) * x[i + j];
  for (int j = 0; i < dim; ++i, ++j) part[j] += static_cast<double>(x[i]) * x[i];
  const float inv_rms = rms_norm_inverse(part, dim, eps);
  for (i = 0; i < dim; ++i) y[i] = weight[i] * (x[i] * inv_rms);
}

void rms_norm_rows_scalar(const float* x, const float* weight, int64_t n_rows, int64_t dim, float eps, float* y) {
  for (int64_t r = 0; r < n_rows; ++r) rms_norm_row_scalar(x + r * dim, weight, dim, eps, y + r * dim);
}

const IsaTable<RmsNormRowsFn>& rms_norm_table() {
  static const IsaTable<RmsNormRowsFn> table{
      {IsaLevel::Scalar, &rms_norm_rows_scalar},
#if defined(__x86_64__)
      {IsaLevel::Avx2, &avx2::rms_norm_rows},
      {IsaLevel::Avx512, &avx512::rms_norm_rows},
#endif
  };
  return table;
}

}  // namespace

RmsNormRowsFn rms_norm_rows_kernel(IsaLevel level) { return rms_norm_table().at(level); }

float rms_norm_inverse(const double (&part)[8], int64_t dim, float eps) {
  const double sum_sq = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
  const float mean_sq = static_cast<float>(sum_sq / static_cast<double>(dim));
  return 1.0f / std::sqrt(mean_sq + eps);
}

void rms_norm_rows_isa(IsaLevel level, const float* x, const float* weight, int64_t n_rows, int64_t dim, float eps,
                       float* y) {
  if (!isa_supported(level))
    throw Error(std::string("rms_norm: ISA level ") + isa_name(level) + " is not supported by this CPU");
  rms_norm_rows_kernel(level)(x, weight, n_rows, dim, eps, y);
}

void rms_norm_rows(const float* x, const float* weight, int64_t n_rows, int64_t dim, float eps, float* y) {
  rms_norm_rows_isa(cpu_features().level, x, weight, n_rows, dim, eps, y);
}

void rms_norm(const float* x, const float* weight, int64_t dim, float eps, float* y) {
  rms_norm_rows(x, weight, 1, dim, eps, y);
}

}  // namespace db::kernels
