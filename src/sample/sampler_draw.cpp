// The non-greedy path of Sampler: temperature, top-k, top-p, min-p and the draw.
#include <cmath>
#include <numeric>

#include "sample/sampler.h"
#include "sample/weights.h"
#include "util/error.h"

namespace db {
namespace {

// Inverse-CDF draw over the candidates id_of(0 .. count) whose weight is >= floor;
// `mass` is their total weight when floor is 0 (it is recomputed otherwise).
template <typename IdOf>
int32_t inverse_cdf(int32_t count, IdOf id_of, const float* weights, float floor, double mass, double u) {
  if (floor > 0.0f) {
    mass = 0.0;
    for (int32_t i = 0; i < count; ++i) {
      const float w = weights[id_of(i)];
      if (w >= floor) mass += w;
    }
  }
  const double target = u * mass;
  double cumulative = 0.0;
  int32_t last_positive = -1;
  for (int32_t i = 0; i < count; ++i) {
    const int32_t id = id_of(i);
    const float w = weights[id];
    if (w < floor || w <= 0.0f) continue;
    cumulative += w;
    last_positive = id;
    if (cumulative > target) return id;
  }
  DB_CHECK(last_positive >= 0, "no candidate with positive weight");
  return last_positive;  // reached only through rounding when u is close to 1
}

}  // namespace

int32_t Sampler::draw(const float* logits, int32_t vocab, const SamplingParams& params, double u) {
  const float max_logit = logits[argmax(logits, vocab)];
  if (!std::isfinite(max_logit)) throw Error("logits have no finite maximum; cannot sample");
  const float inv_temperature = 1.0f / params.temperature;
  const float floor = params.min_p;  // min-p relative to the top token, whose weight is exactly 1
  const int32_t k = params.effective_top_k(vocab);
  weights_.resize(vocab);
  float* weights = weights_.data();

  if (k == vocab && params.top_p >= 1.0f) {
    const double mass = exp_weights(logits, vocab, max_logit, inv_temperature, weights);
    return inverse_cdf(vocab, [](int32_t i) { return i; }, weights, floor, mass, u);
  }
  double mass = 0.0;
  if (k < vocab) {
    select_top_k(logits, vocab, k, order_);
    for (int32_t id : order_) weights[id] = exp_nonpositive((logits[id] - max_logit) * inv_temperature);
    mass = gather_sum(weights, order_.data(), k);
  } else {
    order_.resize(vocab);
    std::iota(order_.begin(), order_.end(), 0);
    mass = exp_weights(logits, vocab, max_logit, inv_temperature, weights);
  }
  int32_t kept = k;
  if (params.top_p < 1.0f) {
    kept = nucleus_.select(order_, logits, weights, max_logit, inv_temperature, mass * params.top_p);
    mass = gather_sum(weights, order_.data(), kept);
  }
  return inverse_cdf(kept, [this](int32_t i) { return order_[i]; }, weights, floor, mass, u);
}

}  // namespace db
