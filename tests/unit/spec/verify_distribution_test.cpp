// Speculative sampling keeps the target distribution: over many seeded draws,
// the tokens verification emits follow p at every position (chi-square), a
// wrong acceptance rule is caught by the same check, and the emitted tokens
// are exactly those plain sampling draws with the same seed.
#include "spec/verify.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace db {
namespace {

constexpr int32_t kVocab = 8;
// Two rows of logits: after the newest token, and after the first draft.
const std::vector<float> kLogits = {1.0f, 0.5f, 2.0f, -1.0f, 0.3f, 1.5f, 0.0f, -0.5f,
                                    0.2f, 1.8f, -0.3f, 0.9f, 1.1f, -1.2f, 0.4f, 0.6f};
constexpr double kChiSquare999 = 24.32;  // 7 degrees of freedom, p = 0.001

std::vector<double> softmax_row(int row, double temperature) {
  std::vector<double> p(kVocab);
  double sum = 0;
  for (int32_t i = 0; i < kVocab; ++i) sum += p[i] = std::exp(kLogits[static_cast<size_t>(row * kVocab + i)] / temperature);
  for (double& x : p) x /= sum;
  return p;
}

double chi_square(const std::vector<int>& counts, const std::vector<double>& p) {
  int n = 0;
  for (int c : counts) n += c;
  double chi = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double want = p[i] * n;
    chi += (counts[i] - want) * (counts[i] - want) / want;
  }
  return chi;
}

SamplingParams sampling(float temperature) {
  SamplingParams p;
  p.temperature = temperature;
  return p;
}

struct Histograms {
  std::vector<int> first = std::vector<int>(kVocab, 0);   // first emitted token
  std::vector<int> second = std::vector<int>(kVocab, 0);  // second, when the first draft was accepted
};

// `rule`: the emitted tokens for one seed.
template <typename Rule>
Histograms draw(int n, Rule rule) {
  Histograms h;
  for (int s = 0; s < n; ++s) {
    const std::vector<int32_t> out = rule(SamplerState{static_cast<uint64_t>(s) * 7919 + 1, 0});
    ++h.first[static_cast<size_t>(out[0])];
    if (out.size() > 1) ++h.second[static_cast<size_t>(out[1])];
  }
  return h;
}

class VerifyDistribution : public ::testing::TestWithParam<int32_t> {};  // the first draft token

TEST_P(VerifyDistribution, EmittedTokensFollowTheTargetDistribution) {
  const SamplingParams params = sampling(1.0f);
  const std::vector<int32_t> drafts = {GetParam()};  // two rows of logits: one draft
  Sampler sampler;
  std::vector<int32_t> scratch;
  const auto verify = [&](const SamplerState& state) {
    VerifyInput in{kLogits.data(), kVocab, &params, &state, {}, {}, drafts};
    std::vector<int32_t> tokens;
    for (const SampleResult& r : verify_drafts(sampler, in, scratch)) tokens.push_back(r.token);
    return tokens;
  };
  const Histograms h = draw(20000, verify);
  EXPECT_LT(chi_square(h.first, softmax_row(0, 1.0)), kChiSquare999);
  EXPECT_LT(chi_square(h.second, softmax_row(1, 1.0)), kChiSquare999);
  EXPECT_NEAR(h.first[static_cast<size_t>(GetParam())] / 20000.0, softmax_row(0, 1.0)[static_cast<size_t>(GetParam())],
              0.02);

  // A wrong rule: accept the draft with probability p(d), else draw from p (not
  // the residual). It over-emits the draft, and the same check catches it.
  const auto wrong = [&](const SamplerState& state) {
    const double pd = softmax_row(0, 1.0)[static_cast<size_t>(drafts[0])];
    if (state.uniform(0, 1) < pd) return std::vector<int32_t>{drafts[0]};
    return std::vector<int32_t>{sampler.sample(kLogits.data(), kVocab, params, state, {}).token};
  };
  EXPECT_GT(chi_square(draw(20000, wrong).first, softmax_row(0, 1.0)), kChiSquare999);
}

INSTANTIATE_TEST_SUITE_P(Drafts, VerifyDistribution, ::testing::Values(2, 3, 5));

TEST(Verify, EmitsExactlyWhatPlainSamplingDraws) {
  for (float temperature : {0.0f, 0.7f, 1.3f}) {
    const SamplingParams params = sampling(temperature);
    Sampler sampler;
    std::vector<int32_t> scratch;
    for (uint64_t seed = 0; seed < 200; ++seed) {
      const SamplerState state{seed, 3};
      const std::vector<int32_t> prompt = {4, 4};
      const std::vector<int32_t> output = {1, 2, 3};
      // Plain decoding: row 0, then row 1 with the first token in the history.
      const int32_t t0 = sampler.sample(kLogits.data(), kVocab, params, state, {prompt, output}).token;
      std::vector<int32_t> longer = output;
      longer.push_back(t0);
      const int32_t t1 = sampler.sample(kLogits.data() + kVocab, kVocab, params, state, {prompt, longer}).token;
      for (int32_t d0 = 0; d0 < kVocab; ++d0) {
        const std::vector<int32_t> drafts = {d0};
        VerifyInput in{kLogits.data(), kVocab, &params, &state, prompt, output, drafts};
        const std::vector<SampleResult> got = verify_drafts(sampler, in, scratch);
        ASSERT_GE(got.size(), 1u);
        EXPECT_EQ(got[0].token, t0);
        if (d0 == t0) {
          ASSERT_EQ(got.size(), 2u) << "an accepted draft is followed by the next row's token";
          EXPECT_EQ(got[1].token, t1);
        } else {
          EXPECT_EQ(got.size(), 1u) << "a rejected draft ends verification";
        }
      }
    }
  }
}

// A constraint sees every emitted token, and its mask decides each row.
TEST(Verify, DraftsAreCheckedAgainstTheConstraintMask) {
  struct OnlyEven final : VerifyConstraint {
    std::vector<uint32_t> mask = {0x55555555u};
    std::vector<int32_t> seen;
    std::span<const uint32_t> next_mask() override { return mask; }
    void advance(int32_t token) override { seen.push_back(token); }
  } even;
  const SamplingParams greedy = sampling(0.0f);
  Sampler sampler;
  std::vector<int32_t> scratch;
  const SamplerState state{1, 0};
  // Row 0's argmax is 2 (even); draft 2 is accepted, row 1's best even token is 4 (1.1), not draft 1.
  const std::vector<int32_t> drafts = {2, 1, 0};
  VerifyInput in{kLogits.data(), kVocab, &greedy, &state, {}, {}, drafts};
  const std::vector<SampleResult> got = verify_drafts(sampler, in, scratch, &even);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].token, 2);
  EXPECT_EQ(got[1].token, 4);
  EXPECT_EQ(even.seen, (std::vector<int32_t>{2, 4}));
}

}  // namespace
}  // namespace db
