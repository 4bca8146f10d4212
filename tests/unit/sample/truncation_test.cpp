#include "sample/truncation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <vector>

#include "sample/weights.h"

namespace db {
namespace {

// Logits quantized to quarters, so that many tie.
std::vector<float> tied_logits(int32_t vocab, uint32_t salt) {
  std::vector<float> logits(vocab);
  uint32_t x = 2463534242u ^ salt;
  for (int32_t i = 0; i < vocab; ++i) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    logits[i] = std::round(static_cast<float>(x % 4000) / 250.0f * 4.0f) / 4.0f - 8.0f;
  }
  return logits;
}

std::vector<int32_t> ranked(const std::vector<float>& logits) {
  std::vector<int32_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  return order;
}

TEST(Truncation, TopKMatchesFullSortOnTiesForBothStrategies) {
  const auto logits = tied_logits(5000, 1);
  const auto order = ranked(logits);
  std::vector<int32_t> out;
  for (int32_t k : {1, 2, 7, 100, 312, 313, 2000, 4999, 5000}) {  // heap below vocab / 16, nth_element above
    select_top_k(logits.data(), 5000, k, out);
    ASSERT_EQ(out.size(), size_t(k));
    EXPECT_EQ(std::set<int32_t>(out.begin(), out.end()), std::set<int32_t>(order.begin(), order.begin() + k))
        << "k = " << k;
  }
}

TEST(Truncation, NucleusMatchesFullSortReference) {
  for (uint32_t salt = 0; salt < 4; ++salt) {
    const auto logits = tied_logits(20000, salt);
    const auto order = ranked(logits);
    const float max_logit = logits[order[0]];
    for (float temperature : {0.3f, 1.0f, 2.5f}) {
      std::vector<float> w(logits.size());
      const double mass = exp_weights(logits.data(), 20000, max_logit, 1.0f / temperature, w.data());
      for (float top_p : {1e-6f, 0.1f, 0.5f, 0.9f, 0.999f}) {
        const double target = mass * top_p;
        std::set<int32_t> expected;
        double above = 0.0;
        for (int32_t id : order) {
          if (above >= target) break;
          expected.insert(id);
          above += w[id];
        }
        NucleusSelector selector;
        std::vector<int32_t> ids(20000);
        std::iota(ids.begin(), ids.end(), 0);
        const int32_t kept = selector.select(ids, logits.data(), w.data(), max_logit, 1.0f / temperature, target);
        EXPECT_EQ(std::set<int32_t>(ids.begin(), ids.begin() + kept), expected)
            << "salt " << salt << " T " << temperature << " top_p " << top_p;
      }
    }
  }
}

TEST(Truncation, NucleusOverASubsetOfCandidates) {
  const auto logits = tied_logits(1000, 9);
  std::vector<int32_t> ids;
  for (int32_t i = 0; i < 1000; i += 3) ids.push_back(i);
  std::vector<float> w(1000);
  const float max_logit = *std::max_element(logits.begin(), logits.end());
  exp_weights(logits.data(), 1000, max_logit, 1.0f, w.data());
  double mass = 0.0;
  for (int32_t id : ids) mass += w[id];
  std::vector<int32_t> order = ids;
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  NucleusSelector selector;
  const int32_t kept = selector.select(ids, logits.data(), w.data(), max_logit, 1.0f, mass * 0.25);
  std::set<int32_t> expected;
  double above = 0.0;
  for (int32_t id : order) {
    if (above >= mass * 0.25) break;
    expected.insert(id);
    above += w[id];
  }
  EXPECT_EQ(std::set<int32_t>(ids.begin(), ids.begin() + kept), expected);
}

}  // namespace
}  // namespace db
