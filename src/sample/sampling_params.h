// Per-request sampling parameters, with OpenAI / vLLM names, defaults and meaning.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "sample/token_constraint.h"

namespace db {

// Temperatures below this are treated as 0, i.e. greedy decoding (as in vLLM).
inline constexpr float kGreedyTemperature = 1e-5f;
// Largest number of top logprobs a request may ask for (OpenAI's limit).
inline constexpr int32_t kMaxLogprobs = 20;
// Most tokens a logit_bias may name, and the largest bias (OpenAI's range is [-100, 100]).
inline constexpr size_t kMaxLogitBiasTokens = 1024;
inline constexpr float kMaxLogitBias = 100.0f;

struct SamplingParams {
  float temperature = 1.0f;         // softmax temperature, any finite value >= 0 (as in vLLM); 0 = greedy argmax
  int32_t top_k = 0;                // keep only the k highest logits; 0 or -1 = off; k >= vocab = off
  float top_p = 1.0f;               // nucleus: keep the smallest top set whose probability is >= top_p; in (0, 1]
  float min_p = 0.0f;               // drop tokens whose probability is < min_p * (highest probability); in [0, 1]
  float repetition_penalty = 1.0f;  // over prompt + output tokens: logit > 0 ? logit / p : logit * p; > 0, 1 = off
  float presence_penalty = 0.0f;    // subtracted once from the logit of every token present in the output; [-2, 2]
  float frequency_penalty = 0.0f;   // subtracted from a token's logit per occurrence in the output; [-2, 2]
  std::optional<uint64_t> seed;     // fixes the random draws; unset = a seed drawn from std::random_device
  std::optional<int32_t> logprobs;  // set: return the chosen token's logprob and this many top logprobs; [0, 20]
  // Set: also the raw logprob of every prompt token given the ones before it (the
  // first has none) and this many top logprobs; [0, 20]. Such a request takes no
  // prefix-cache hit, since only computed positions have logits.
  std::optional<int32_t> prompt_logprobs;
  // Added to the logits of these token ids after the penalties (OpenAI's logit_bias):
  // distinct ids >= 0 (the sampler checks them against the vocabulary), biases in [-100, 100].
  std::vector<std::pair<int32_t, float>> logit_bias;
  // Set: every sampled token must follow it (a JSON schema, a grammar, ...); shared, immutable.
  std::shared_ptr<const TokenConstraint> constraint;
  // >= 0: the constraint applies only after this token is sampled (a reasoning model's
  // "</think>": it thinks freely, then answers in the constrained form).
  int32_t constraint_after_token = -1;

  // Throws db::Error naming the offending parameter, its allowed range and the value given.
  void validate() const;
  // True when decoding is a deterministic argmax (temperature below kGreedyTemperature).
  bool is_greedy() const { return temperature < kGreedyTemperature; }
  // True when the logits are changed before the draw: penalties or a logit bias.
  bool changes_logits() const { return has_penalties() || !logit_bias.empty(); }
  // True when any of the three penalties changes the logits.
  bool has_penalties() const {
    return repetition_penalty != 1.0f || presence_penalty != 0.0f || frequency_penalty != 0.0f;
  }
  // top_k as a count of kept tokens for a vocabulary of `vocab` entries (vocab when off).
  int32_t effective_top_k(int32_t vocab) const { return top_k > 0 && top_k < vocab ? top_k : vocab; }
};

}  // namespace db
