// Unnormalized probabilities exp((logit - max_logit) / temperature), computed
// with a branch-free exponential that the compiler vectorizes.
#pragma once
#include <bit>
#include <cstdint>

namespace db {

// exp(x) for x <= 0 (including -0 and -inf), within about 2 float ulps; 0 for x < -87.
// Rounds x / ln2 to n with the 1.5 * 2^23 trick, then e^x = 2^n * e^r with
// |r| <= ln2 / 2 and e^r from its Taylor series to degree 7 (error < 1e-8).
inline float exp_nonpositive(float x) {
  constexpr float kShift = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693145751953125f;       // ln 2 with trailing zero bits, exact times n
  constexpr float kLn2Lo = 1.42860682030941723e-6f;  // ln 2 - kLn2Hi
  constexpr uint32_t kLowestBits = std::bit_cast<uint32_t>(-87.0f);
  // Selections are bit masks (for x <= 0, x < -87 iff bits(x) > bits(-87)), which
  // keeps the loop free of branches so that it vectorizes.
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint32_t underflow = 0u - static_cast<uint32_t>(bits > kLowestBits);  // all ones or zero
  const float clamped = std::bit_cast<float>((bits & ~underflow) | (kLowestBits & underflow));
  const float shifted = clamped * kLog2e + kShift;
  const int32_t n = static_cast<int32_t>(std::bit_cast<uint32_t>(shifted) - std::bit_cast<uint32_t>(kShift));
  const float fn = shifted - kShift;
  const float r = (clamped - fn * kLn2Hi) - fn * kLn2Lo;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const float scale = std::bit_cast<float>(static_cast<uint32_t>(n + 127) << 23);
  const uint32_t value = std::bit_cast<uint32_t>(p * scale);
  return std::bit_cast<float>(value & ~underflow);
}

// out[i] = exp_nonpositive((logits[i] - max_logit) * inv_temperature) for i < n;
// returns the sum of out in double. max_logit must be >= every logit.
double exp_weights(const float* logits, int32_t n, float max_logit, float inv_temperature, float* out);

// The same sum as exp_weights without storing the weights.
double sum_exp_weights(const float* logits, int32_t n, float max_logit, float inv_temperature);

// Sum of weights[ids[i]] in double.
double gather_sum(const float* weights, const int32_t* ids, int32_t n);

}  // namespace db
