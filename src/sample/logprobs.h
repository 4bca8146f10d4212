// Log-probabilities of the raw model distribution, log_softmax(logits).
#pragma once
#include <cstdint>
#include <vector>

namespace db {

struct TokenLogprob {
  int32_t token = 0;     // token id
  float logprob = 0.0f;  // log_softmax of the raw logits at this token
};

// log(sum_i exp(logits[i])), computed stably in double. logits must hold no NaN.
double log_sum_exp(const float* logits, int32_t vocab);

// The n tokens with the highest logits, highest first, ties to the lower id.
// One pass over the vocabulary; `out` is overwritten.
void top_tokens(const float* logits, int32_t vocab, int32_t n, std::vector<int32_t>& out);

// The n highest raw logprobs, highest first (n <= vocab is not required).
std::vector<TokenLogprob> top_logprobs(const float* logits, int32_t vocab, int32_t n, double log_sum);

}  // namespace db
