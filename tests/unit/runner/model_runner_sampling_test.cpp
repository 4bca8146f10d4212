// ModelRunner: how it samples the rows of a step. Every row uses its own
// sequence's sampling parameters, sampler state and token history; the
// expectations come from a Sampler called directly on the fake model's logits.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <vector>

#include "fake_model.h"
#include "sample/sampler.h"
#include "util/error.h"

namespace db::runner_test {
namespace {

using Ints = std::vector<int32_t>;

// Several pool threads, so that the rows are split between samplers.
class RunnerSamplingTest : public RunnerTest {
 protected:
  RunnerSamplingTest() : RunnerTest(3) {}
};

// What a Sampler draws from the fake's logits for `last` at `pos`.
SampleResult reference(int32_t last, int32_t pos, const SamplingParams& p, SamplerState state, const Ints& prompt,
                       const Ints& output) {
  float logits[kVocab];
  fake_logits(last, pos, logits);
  Sampler sampler;
  return sampler.sample(logits, kVocab, p, state, TokenHistory{prompt, output});
}

SamplingParams random_params() {
  SamplingParams p;
  p.temperature = 1.0f;
  return p;
}

// The first seed in [1, 10000) for which ok(seed) holds.
template <class Pred>
uint64_t find_seed(Pred ok) {
  for (uint64_t s = 1; s < 10000; ++s)
    if (ok(s)) return s;
  ADD_FAILURE() << "no seed satisfies the test's condition";
  return 0;
}

TEST_F(RunnerSamplingTest, EachRowUsesItsOwnParamsAndSeed) {
  const Ints prompt{5, 2};
  const int32_t peak = fake_peak(2, 1);
  const SamplingParams rnd = random_params();
  // Two seeds whose draws differ from each other and from the greedy choice.
  const uint64_t seed_a = find_seed([&](uint64_t s) { return reference(2, 1, rnd, {s, 0}, prompt, {}).token != peak; });
  const int32_t tok_a = reference(2, 1, rnd, {seed_a, 0}, prompt, {}).token;
  const uint64_t seed_b = find_seed([&](uint64_t s) {
    const int32_t t = reference(2, 1, rnd, {s, 0}, prompt, {}).token;
    return t != peak && t != tok_a;
  });
  const int32_t tok_b = reference(2, 1, rnd, {seed_b, 0}, prompt, {}).token;
  SamplingParams with_logprobs = greedy();
  with_logprobs.logprobs = 2;

  // Identical logits in every row: only the rows' own parameters tell them apart.
  ModelRunnerOutput out = runner.execute(make_step(
      {}, {new_seq(1, prompt, 0, 2, 1, {0}, rnd, {seed_a, 0}), new_seq(2, prompt, 0, 2, 1, {1}, greedy()),
           new_seq(3, prompt, 0, 2, 1, {2}, rnd, {seed_b, 0}), new_seq(4, prompt, 0, 2, 1, {3}, with_logprobs),
           new_seq(5, prompt, 0, 2, 1, {4}, rnd, {seed_a, 0})}));
  ASSERT_EQ(out.requests.size(), 5u);
  for (const auto& r : out.requests) ASSERT_EQ(r.samples.size(), 1u);
  EXPECT_EQ(out.requests[0].samples[0].token, tok_a);
  EXPECT_EQ(out.requests[1].samples[0].token, peak);
  EXPECT_EQ(out.requests[2].samples[0].token, tok_b);
  EXPECT_EQ(out.requests[3].samples[0].token, peak);
  EXPECT_EQ(out.requests[4].samples[0].token, tok_a);  // same seed, same draw, whichever thread samples it

  // Logprobs only where asked: the raw log_softmax of the peak, then the runner-up.
  EXPECT_FALSE(out.requests[1].samples[0].logprob.has_value());
  EXPECT_TRUE(out.requests[1].samples[0].top_logprobs.empty());
  const SampledToken& lp = out.requests[3].samples[0];
  double sum = 0;
  for (int k = 0; k < kVocab; ++k) sum += std::exp(-0.25 * k);
  ASSERT_TRUE(lp.logprob.has_value());
  EXPECT_NEAR(*lp.logprob, -std::log(sum), 1e-5);
  ASSERT_EQ(lp.top_logprobs.size(), 2u);
  EXPECT_EQ(lp.top_logprobs[0].token, peak);
  EXPECT_EQ(lp.top_logprobs[1].token, (peak + 1) % kVocab);
  EXPECT_NEAR(lp.top_logprobs[1].logprob, -0.25 - std::log(sum), 1e-5);

  EXPECT_EQ(*runner.tokens_of(1), (Ints{5, 2, tok_a}));
  EXPECT_EQ(*runner.tokens_of(3), (Ints{5, 2, tok_b}));
}

// The penalties see the sequence's prompt and output as the runner was told:
// a presence penalty applies to output tokens only.
TEST_F(RunnerSamplingTest, PenaltiesSeeTheSequencesOwnOutput) {
  const Ints tokens{5, 2, 10, 0};
  const int32_t peak = fake_peak(0, 3);
  ASSERT_EQ(peak, 10);  // the peak is one of the output tokens
  SamplingParams presence = greedy();
  presence.presence_penalty = 1.0f;
  ModelRunnerOutput out = runner.execute(make_step(
      {}, {new_seq(1, tokens, 0, 4, 1, {0}, presence, {}, /*num_prompt=*/2),
           new_seq(2, tokens, 0, 4, 1, {1}, presence, {}, /*num_prompt=*/4),
           new_seq(3, tokens, 0, 4, 1, {2}, greedy(), {}, /*num_prompt=*/2)}));
  ASSERT_EQ(out.requests.size(), 3u);
  EXPECT_EQ(out.requests[0].samples.at(0).token, peak + 1);  // the peak is penalized below the runner-up
  EXPECT_EQ(out.requests[1].samples.at(0).token, peak);      // all prompt: nothing to penalize
  EXPECT_EQ(out.requests[2].samples.at(0).token, peak);      // no penalty
}

// A seeded draw depends on how many tokens the sequence has generated: that
// count comes from the runner's prompt/output split and grows with each
// token it appends.
TEST_F(RunnerSamplingTest, SeededDrawsFollowTheSequencesOutputLength) {
  const Ints prompt{5, 2}, output{10, 0}, all{5, 2, 10, 0};
  const SamplingParams rnd = random_params();
  const uint64_t seed = find_seed([&](uint64_t s) {
    const int32_t right = reference(0, 3, rnd, {s, 0}, prompt, output).token;
    return right != reference(0, 3, rnd, {s, 0}, all, {}).token && right != reference(0, 3, rnd, {s, 0}, {}, all).token;
  });
  ModelRunnerOutput out =
      runner.execute(make_step({}, {new_seq(1, all, 0, 4, 1, {0}, rnd, {seed, 0}, /*num_prompt=*/2)}));
  const int32_t t4 = reference(0, 3, rnd, {seed, 0}, prompt, output).token;
  ASSERT_EQ(out.requests.size(), 1u);
  EXPECT_EQ(out.requests[0].samples.at(0).token, t4);

  out = runner.execute(make_step({running_seq(1, 4, 1, 1, {0, 1})}));
  ASSERT_EQ(out.requests.size(), 1u);
  EXPECT_EQ(out.requests[0].samples.at(0).token, reference(t4, 4, rnd, {seed, 0}, prompt, {10, 0, t4}).token);
}

// A parent about to fork samples n tokens from one row, sample k with stream
// (stream + k); only the first becomes the parent's own next token.
TEST_F(RunnerSamplingTest, SeveralSamplesOfOneRowUseConsecutiveStreams) {
  const Ints prompt{7, 7, 3};
  const SamplingParams rnd = random_params();
  auto ref = [&](uint64_t seed, uint32_t stream) { return reference(3, 2, rnd, {seed, stream}, prompt, {}).token; };
  const uint64_t seed = find_seed([&](uint64_t s) {
    const Ints from5{ref(s, 5), ref(s, 6), ref(s, 7)}, from0{ref(s, 0), ref(s, 1), ref(s, 2)};
    return from5[0] != from5[1] && from5[1] != from5[2] && from5[0] != from5[2] && from5 != from0;
  });
  ModelRunnerOutput out = runner.execute(make_step({}, {new_seq(1, prompt, 0, 3, 3, {0}, rnd, {seed, 5})}));
  ASSERT_EQ(out.requests.size(), 1u);
  ASSERT_EQ(out.requests[0].samples.size(), 3u);
  for (uint32_t k = 0; k < 3; ++k) EXPECT_EQ(out.requests[0].samples[k].token, ref(seed, 5 + k)) << "sample " << k;
  EXPECT_EQ(*runner.tokens_of(1), (Ints{7, 7, 3, ref(seed, 5)}));
}

// Sampling fails as a whole: no sequence gets a token when one row throws.
TEST_F(RunnerSamplingTest, ARowThatThrowsLeavesEverySequenceAsItWas) {
  SamplingParams bad = greedy();
  bad.temperature = -1.0f;
  const Ints p1{1, 2}, p2{3, 4};
  EXPECT_THROW(
      runner.execute(make_step({}, {new_seq(1, p1, 0, 2, 1, {0}), new_seq(2, p2, 0, 2, 1, {1}, bad)})), Error);
  EXPECT_EQ(*runner.tokens_of(1), p1);
  EXPECT_EQ(*runner.tokens_of(2), p2);
}

}  // namespace
}  // namespace db::runner_test
