// Repetition, frequency and presence penalties, applied in place to one row of
// logits in vLLM's order and with its semantics:
//   1. repetition (tokens in prompt or output): logit > 0 ? logit / r : logit * r
//   2. frequency  (tokens in output):           logit -= frequency_penalty * count
//   3. presence   (tokens in output):           logit -= presence_penalty
#pragma once
#include <cstdint>
#include <vector>

#include "sample/sampling_params.h"
#include "sample/token_history.h"

namespace db {

// Reusable buffers for apply_penalties; zeroed between calls, so the work per
// call is proportional to the history length, not to the vocabulary.
class PenaltyScratch {
 public:
  // Applies the penalties of `params` to logits[0, vocab). Throws db::Error if a
  // history token is outside [0, vocab).
  void apply(float* logits, int32_t vocab, const SamplingParams& params, const TokenHistory& history);

 private:
  void count_output(std::span<const int32_t> output, int32_t vocab);
  void mark_seen(std::span<const int32_t> tokens, int32_t vocab);
  void reset();

  std::vector<int32_t> counts_;   // per token: occurrences in the output (all zero between calls)
  std::vector<uint8_t> seen_;     // per token: 1 if in prompt or output (all zero between calls)
  std::vector<int32_t> counted_;  // tokens with counts_ > 0
  std::vector<int32_t> marked_;   // tokens with seen_ set
};

}  // namespace db
