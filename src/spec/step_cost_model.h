// What a decoding step costs as a function of the tokens it computes, learned
// from the engine's own steps: per token count bucket (1..16 exactly, then
// powers of two), exponentially weighted means of the token count and of the
// seconds of the steps without prompt tokens (decodes and draft verification).
// A size between measured buckets' means is interpolated; one above them all
// extrapolated along the two highest. The first step seen in each bucket is a
// warm-up and not counted: it pays for growing scratch buffers and cold caches,
// and a single slow step would otherwise stand for the size until it is seen
// again, which may be never when it made drafting look unprofitable.
//
// On a CPU a small step reads every weight once for all its tokens, so the
// first tokens are nearly free; a large one is compute-bound and every token
// costs the same. The model does not assume where the turn is: it measures it.
#pragma once
#include <array>
#include <cstdint>
#include <optional>

namespace db {

class StepCostModel {
 public:
  // One step of `tokens` tokens took `seconds`.
  void observe(int32_t tokens, double seconds);
  // The expected seconds of a step of `tokens` tokens, from the measured
  // (mean tokens, mean seconds) points: interpolated between the nearest ones
  // around it, extrapolated (never downward) above the highest two; nullopt when
  // nothing was measured at or below it, or only one point lies below and none above.
  std::optional<double> seconds(int32_t tokens) const;

  static constexpr int kBuckets = 16 + 12;  // 1..16, then [17,32), [32,64), ... up to 2^16
  static int bucket_of(int32_t tokens);

 private:
  std::array<double, kBuckets> mean_seconds_{}, mean_tokens_{};
  std::array<int64_t, kBuckets> count_{};
  std::array<bool, kBuckets> warm_{};  // the bucket's warm-up step was seen
};

}  // namespace db
