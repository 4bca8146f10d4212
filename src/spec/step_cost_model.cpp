#include "spec/step_cost_model.h"

#include <algorithm>
#include <bit>

namespace db {

namespace {
constexpr double kWeight = 0.1;  // of the newest step in a bucket's mean
}

int StepCostModel::bucket_of(int32_t tokens) {
  if (tokens <= 16) return std::max(tokens, 1) - 1;
  const int log2 = std::bit_width(static_cast<uint32_t>(tokens)) - 1;  // 17..31 -> 4
  return std::min(kBuckets - 1, 16 + log2 - 4);
}

void StepCostModel::observe(int32_t tokens, double seconds) {
  if (tokens <= 0 || !(seconds >= 0)) return;
  const int b = bucket_of(tokens);
  if (!warm_[b]) {
    warm_[b] = true;
    return;
  }
  const double w = count_[b] == 0 ? 1.0 : kWeight;
  mean_seconds_[b] += w * (seconds - mean_seconds_[b]);
  mean_tokens_[b] += w * (static_cast<double>(tokens) - mean_tokens_[b]);
  ++count_[b];
}

std::optional<double> StepCostModel::seconds(int32_t tokens) const {
  const auto n = static_cast<double>(tokens);
  int lo = -1, below = -1, hi = -1;  // the highest two points at or under n, the lowest above it
  for (int b = 0; b < kBuckets; ++b) {
    if (count_[b] == 0) continue;
    if (mean_tokens_[b] <= n) {
      below = lo;
      lo = b;
    } else if (hi < 0) {
      hi = b;
    }
  }
  if (lo < 0) return std::nullopt;
  const auto line = [&](int a, int c) {
    const double dx = mean_tokens_[c] - mean_tokens_[a];
    if (dx <= 0) return mean_seconds_[c];
    const double slope = std::max(0.0, (mean_seconds_[c] - mean_seconds_[a]) / dx);
    return mean_seconds_[a] + slope * (n - mean_tokens_[a]);
  };
  if (hi >= 0) return line(lo, hi);
  if (mean_tokens_[lo] == n) return mean_seconds_[lo];
  if (below < 0) return std::nullopt;
  return line(below, lo);
}

}  // namespace db
