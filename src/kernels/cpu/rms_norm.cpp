#include "kernels/cpu/rms_norm.h"

#include <cmath>

namespace db::kernels {

void rms_norm(const float* x, const float* weight, int64_t dim, float eps, float* y) {
  double sum_sq = 0.0;
  for (int64_t i = 0; i < dim; ++i) sum_sq += static_cast<double>(x[i]) * x[i];
  const float mean_sq = static_cast<float>(sum_sq / static_cast<double>(dim));
  const float inv_rms = 1.0f / std::sqrt(mean_sq + eps);
  for (int64_t i = 0; i < dim; ++i) y[i] = weight[i] * (x[i] * inv_rms);
}

}  // namespace db::kernels
