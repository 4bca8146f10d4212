#include "sample/logprobs.h"

#include "sample/weights.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace db {

double log_sum_exp(const float* logits, int32_t vocab) {
  float max_logit = -std::numeric_limits<float>::infinity();
  for (int32_t i = 0; i < vocab; ++i) max_logit = std::max(max_logit, logits[i]);
  if (!std::isfinite(max_logit)) return max_logit;
  return max_logit + std::log(sum_exp_weights(logits, vocab, max_logit, 1.0f));
}

void top_tokens(const float* logits, int32_t vocab, int32_t n, std::vector<int32_t>& out) {
  out.clear();
  n = std::min(n, vocab);
  if (n <= 0) return;
  // out stays sorted best first; a token enters only if it beats the current last.
  // Scanning ids upward, an equal logit never beats an earlier (lower) id.
  for (int32_t id = 0; id < vocab; ++id) {
    const float x = logits[id];
    if (static_cast<int32_t>(out.size()) == n) {
      if (!(x > logits[out.back()])) continue;
      out.pop_back();
    }
    auto pos = std::upper_bound(out.begin(), out.end(), x, [&](float v, int32_t t) { return v > logits[t]; });
    out.insert(pos, id);
  }
}

std::vector<TokenLogprob> top_logprobs(const float* logits, int32_t vocab, int32_t n, double log_sum) {
  std::vector<int32_t> ids;
  top_tokens(logits, vocab, n, ids);
  std::vector<TokenLogprob> result;
  result.reserve(ids.size());
  for (int32_t id : ids) result.push_back({id, static_cast<float>(logits[id] - log_sum)});
  return result;
}

}  // namespace db
