#include "kernels/cpu/rms_norm.h"

#include <cmath>

namespace db::kernels {

void rms_norm(const float* x, const float* weight, int64_t dim, float eps, float* y) {
  // Element i adds to partial sum i % 8: eight independent chains rather than
  // one add waiting on the last (the sum was latency-bound).
  double part[8] = {};
  int64_t i = 0;
  for (; i + 8 <= dim; i += 8)
    for (int j = 0; j < 8; ++j) part[j] += static_cast<double>(x[i + j]) * x[i + j];
  for (int j = 0; i < dim; ++i, ++j) part[j] += static_cast<double>(x[i]) * x[i];
  const double sum_sq = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
  const float mean_sq = static_cast<float>(sum_sq / static_cast<double>(dim));
  const float inv_rms = 1.0f / std::sqrt(mean_sq + eps);
  for (i = 0; i < dim; ++i) y[i] = weight[i] * (x[i] * inv_rms);
}

}  // namespace db::kernels
