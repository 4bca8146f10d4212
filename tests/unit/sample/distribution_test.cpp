// Statistical checks: the empirical distribution of seeded draws matches the
// reference truncated softmax, and truncated tokens are never drawn.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "sample/sampler.h"

namespace db {
namespace {

// Reference: the distribution the sampler must draw from, by full sort.
std::vector<double> reference_distribution(const std::vector<float>& logits, const SamplingParams& p) {
  const int32_t vocab = int32_t(logits.size());
  std::vector<int32_t> order(vocab);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  const double max_logit = logits[order[0]];
  std::vector<double> weight(vocab);
  for (int32_t i = 0; i < vocab; ++i) weight[i] = std::exp((logits[i] - max_logit) / p.temperature);
  const int32_t k = p.effective_top_k(vocab);
  double mass_k = 0.0;
  for (int32_t i = 0; i < k; ++i) mass_k += weight[order[i]];
  std::vector<double> dist(vocab, 0.0);
  double before = 0.0;
  for (int32_t i = 0; i < k; ++i) {
    const int32_t id = order[i];
    if (before >= p.top_p * mass_k) break;
    before += weight[id];
    if (weight[id] >= p.min_p) dist[id] = weight[id];
  }
  const double total = std::accumulate(dist.begin(), dist.end(), 0.0);
  for (double& d : dist) d /= total;
  return dist;
}

struct DrawStats {
  std::vector<int> counts;
  int outside = 0;  // draws of tokens with reference probability 0
};

DrawStats draw_many(const std::vector<float>& logits, const SamplingParams& p, int n, uint64_t seed) {
  const auto dist = reference_distribution(logits, p);
  Sampler sampler;
  const SamplerState state{seed, 0};
  const std::vector<int32_t> output(n, 0);
  DrawStats stats{std::vector<int>(logits.size(), 0), 0};
  for (int i = 0; i < n; ++i) {
    const int32_t t =
        sampler.sample(logits.data(), int32_t(logits.size()), p, state, {{}, std::span(output).first(i)}).token;
    ++stats.counts[t];
    stats.outside += dist[t] == 0.0;
  }
  return stats;
}

// Pearson chi-square over tokens with expected count >= 5; checks it against a
// bound far in the tail (about p = 1e-6) for its degrees of freedom.
void expect_matches(const std::vector<float>& logits, const SamplingParams& p, int n, uint64_t seed) {
  const auto dist = reference_distribution(logits, p);
  const DrawStats stats = draw_many(logits, p, n, seed);
  EXPECT_EQ(stats.outside, 0) << "drew tokens outside the truncated distribution";
  double chi2 = 0.0;
  int cells = 0;
  for (size_t i = 0; i < dist.size(); ++i) {
    const double expected = dist[i] * n;
    if (expected < 5.0) continue;
    chi2 += (stats.counts[i] - expected) * (stats.counts[i] - expected) / expected;
    ++cells;
  }
  ASSERT_GT(cells, 1);
  const double df = cells - 1;
  EXPECT_LT(chi2, df + 7.0 * std::sqrt(2.0 * df) + 10.0) << "chi-square " << chi2 << " over " << cells << " cells";
}

const std::vector<float> kDistributionLogits = {0.3f, 1.2f, -0.5f, 2.0f, 0.0f, 1.0f, -2.0f, 0.8f, 1.6f, -1.0f};

TEST(Distribution, TemperatureOneMatchesSoftmax) {
  SamplingParams p;
  expect_matches(kDistributionLogits, p, 20000, 1);
}

TEST(Distribution, TemperatureReshapes) {
  SamplingParams p;
  p.temperature = 0.5f;
  expect_matches(kDistributionLogits, p, 20000, 2);
  p.temperature = 2.0f;
  expect_matches(kDistributionLogits, p, 20000, 3);
}

TEST(Distribution, TopKTruncates) {
  SamplingParams p;
  p.top_k = 4;
  expect_matches(kDistributionLogits, p, 20000, 4);
  const auto dist = reference_distribution(kDistributionLogits, p);
  EXPECT_EQ(std::count_if(dist.begin(), dist.end(), [](double d) { return d > 0; }), 4);
}

TEST(Distribution, TopPTruncates) {
  SamplingParams p;
  p.top_p = 0.7f;
  expect_matches(kDistributionLogits, p, 20000, 5);
  const auto dist = reference_distribution(kDistributionLogits, p);
  const auto kept = std::count_if(dist.begin(), dist.end(), [](double d) { return d > 0; });
  EXPECT_GT(kept, 1);
  EXPECT_LT(kept, 10);
}

TEST(Distribution, AllTruncationsTogether) {
  SamplingParams p;
  p.temperature = 0.8f;
  p.top_k = 6;
  p.top_p = 0.9f;
  p.min_p = 0.15f;
  expect_matches(kDistributionLogits, p, 20000, 6);
}

// A realistic vocabulary: the nucleus is wider than the first sorted prefix, so
// selection has to widen; no token outside the reference nucleus may appear.
std::vector<float> large_logits(int32_t vocab) {
  std::vector<float> logits(vocab);
  for (int32_t i = 0; i < vocab; ++i)
    logits[i] = 2.0f * std::sin(0.37f * i) + 1.5f * std::cos(0.0013f * i * i) - 0.00002f * i;
  return logits;
}

TEST(Distribution, LargeVocabTopPStaysInNucleus) {
  const auto logits = large_logits(50000);
  SamplingParams p;
  p.top_p = 0.5f;
  const auto dist = reference_distribution(logits, p);
  const auto kept = std::count_if(dist.begin(), dist.end(), [](double d) { return d > 0; });
  EXPECT_GT(kept, 64 * 8);  // exercises more than one widening of the sorted prefix
  EXPECT_EQ(draw_many(logits, p, 200, 7).outside, 0);
}

TEST(Distribution, LargeVocabTopKWithTopP) {
  const auto logits = large_logits(50000);
  SamplingParams p;
  p.top_k = 50;
  p.top_p = 0.8f;
  p.temperature = 0.3f;
  expect_matches(logits, p, 1500, 8);
}

}  // namespace
}  // namespace db
