#include "model/rope_frequencies.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace db {

namespace {

void apply_llama3(const RopeScaling& rs, std::vector<float>& inv_freq) {
  const float old_ctx = static_cast<float>(rs.original_context);
  const float low_freq_wavelen = old_ctx / rs.low_freq_factor;
  const float high_freq_wavelen = old_ctx / rs.high_freq_factor;
  for (float& f : inv_freq) {
    const float wavelen = 2.0f * std::numbers::pi_v<float> / f;
    if (wavelen < high_freq_wavelen) continue;  // high frequencies keep their value
    const float scaled = f / rs.factor;
    if (wavelen > low_freq_wavelen) {
      f = scaled;
      continue;
    }
    const float smooth = (old_ctx / wavelen - rs.low_freq_factor) / (rs.high_freq_factor - rs.low_freq_factor);
    f = (1.0f - smooth) * f / rs.factor + smooth * f;
  }
}

// Dimension index (of `dims`) at which a frequency completes `rotations` turns over the original context.
double yarn_correction_dim(double rotations, int dims, double base, double original_context) {
  return dims * std::log(original_context / (rotations * 2.0 * std::numbers::pi)) / (2.0 * std::log(base));
}

void apply_yarn(const ModelConfig& c, std::vector<float>& inv_freq) {
  const RopeScaling& rs = c.rope_scaling;
  const double orig = static_cast<double>(rs.original_context);
  double low = std::floor(yarn_correction_dim(rs.beta_fast, c.rope_dims, c.rope_theta, orig));
  double high = std::ceil(yarn_correction_dim(rs.beta_slow, c.rope_dims, c.rope_theta, orig));
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(c.rope_dims - 1));
  if (low == high) high += 0.001;
  for (size_t i = 0; i < inv_freq.size(); ++i) {
    const float ramp = std::clamp(static_cast<float>((static_cast<double>(i) - low) / (high - low)), 0.0f, 1.0f);
    const float extrapolation_weight = 1.0f - ramp;
    const float extrapolated = inv_freq[i];
    const float interpolated = inv_freq[i] / rs.factor;
    inv_freq[i] = interpolated * (1.0f - extrapolation_weight) + extrapolated * extrapolation_weight;
  }
}

}  // namespace

std::vector<float> rope_inv_freq(const ModelConfig& c) {
  const int n_pairs = c.rope_dims / 2;
  std::vector<float> inv_freq(static_cast<size_t>(n_pairs));
  for (int i = 0; i < n_pairs; ++i) {
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(c.rope_dims);
    inv_freq[static_cast<size_t>(i)] = 1.0f / std::pow(c.rope_theta, exponent);
  }
  const RopeScaling& rs = c.rope_scaling;
  switch (rs.type) {
    case RopeScalingType::NONE:
      break;
    case RopeScalingType::LINEAR:
      for (float& f : inv_freq) f /= rs.factor;
      break;
    case RopeScalingType::LLAMA3:
      apply_llama3(rs, inv_freq);
      break;
    case RopeScalingType::YARN:
      apply_yarn(c, inv_freq);
      break;
  }
  for (size_t i = 0; i < rs.freq_factors.size() && i < inv_freq.size(); ++i) inv_freq[i] /= rs.freq_factors[i];
  return inv_freq;
}

float rope_mscale(const ModelConfig& c) {
  return c.rope_scaling.type == RopeScalingType::YARN ? c.rope_scaling.attn_factor : 1.0f;
}

}  // namespace db
