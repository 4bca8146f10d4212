// Verification of speculative draft tokens against the target model's logits.
//
// The target scored the newest token and the k drafts after it in one step:
// logits row i is the distribution of the token after draft i - 1 (row 0: after
// the newest token). Verification samples row 0 as a plain decode would; while
// the sampled token equals the draft at that row, the draft is accepted and the
// next row is sampled with the accepted tokens in the history. The first token
// that differs (or the token after the last draft) ends it. Every token it
// emits is exactly the token plain decoding would have sampled at that output
// position: the sampler's uniform depends only on (seed, stream, position), so
// greedy and seeded sampling give the same tokens with or without drafts.
//
// For a proposer whose drafts are a deterministic function of the sequence
// (prompt lookup, a greedy draft model) the draft distribution q is a point mass
// on the draft d, and this is the standard speculative-sampling rule: accept with
// probability min(1, p(d) / q(d)) = p(d), else sample from the normalized
// residual max(0, p - q), which is p without d. Both emit d with probability
// p(d) and any other token x with probability p(x), so the target distribution
// is preserved (tests/unit/spec/verify_distribution_test.cpp checks it).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "sample/sampler.h"

namespace db {

// The constraint side of verification (a sequence's grammar state).
class VerifyConstraint {
 public:
  virtual ~VerifyConstraint() = default;
  // The tokens allowed next (empty: no constraint now).
  virtual std::span<const uint32_t> next_mask() = 0;
  // The token was emitted: advance past it.
  virtual void advance(int32_t token) = 0;
};

// One sequence's verification input. `logits`: drafts.size() + 1 rows of `vocab` floats.
struct VerifyInput {
  const float* logits = nullptr;
  int32_t vocab = 0;
  const SamplingParams* params = nullptr;
  const SamplerState* state = nullptr;
  std::span<const int32_t> prompt;   // the prompt (penalties)
  std::span<const int32_t> output;   // the output before this step; its size is the first emitted position
  std::span<const int32_t> drafts;   // the draft tokens (may be empty: a plain decode)
};

// The emitted tokens: the accepted drafts, then the target's own token (1 to
// drafts.size() + 1 results). `scratch` holds the growing output history once a
// draft is accepted. `constraint` may be null. Throws what Sampler::sample throws.
std::vector<SampleResult> verify_drafts(Sampler& sampler, const VerifyInput& in, std::vector<int32_t>& scratch,
                                        VerifyConstraint* constraint = nullptr);

}  // namespace db
