#include "sample/sampler.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "util/error.h"

namespace db {

namespace {

// A signed integer with the order of the float x (for x not NaN); -0 maps like +0.
inline int32_t ordered_key(float x) {
  const auto bits = std::bit_cast<int32_t>(x + 0.0f);
  return bits ^ ((bits >> 31) & 0x7fffffff);
}

}  // namespace

int32_t argmax(const float* logits, int32_t vocab) {
  if (vocab <= 0) throw Error("cannot sample from an empty vocabulary (vocab = " + std::to_string(vocab) + ")");
  // Branch-free reductions (they vectorize), then a scan for the first maximum.
  int32_t best_key = std::numeric_limits<int32_t>::min();
  uint32_t nan_bits = 0;
  for (int32_t i = 0; i < vocab; ++i) {
    const int32_t key = ordered_key(logits[i]);
    best_key = key > best_key ? key : best_key;
    nan_bits |= static_cast<uint32_t>((std::bit_cast<uint32_t>(logits[i]) & 0x7fffffffu) > 0x7f800000u);
  }
  if (nan_bits) throw Error("logits contain NaN; cannot sample");
  int32_t best = 0;
  while (ordered_key(logits[best]) != best_key) ++best;
  return best;
}

void mask_logits(float* logits, int32_t vocab, std::span<const uint32_t> allowed) {
  DB_CHECK(allowed.size() == static_cast<size_t>(token_mask_words(vocab)),
           "a token mask of " + std::to_string(allowed.size()) + " words for a vocabulary of " + std::to_string(vocab));
  constexpr float kNone = -std::numeric_limits<float>::infinity();
  for (int32_t w = 0; w < token_mask_words(vocab); ++w) {
    const uint32_t word = allowed[static_cast<size_t>(w)];
    if (word == ~0u) continue;
    const int32_t end = std::min(vocab, (w + 1) * 32);
    for (int32_t id = w * 32; id < end; ++id)
      if (!((word >> (id - w * 32)) & 1u)) logits[id] = kNone;
  }
}

SampleResult Sampler::sample(const float* logits, int32_t vocab, const SamplingParams& params,
                             const SamplerState& state, const TokenHistory& history, std::span<const uint32_t> allowed) {
  params.validate();
  if (vocab <= 0) throw Error("cannot sample from an empty vocabulary (vocab = " + std::to_string(vocab) + ")");
  const float* processed = logits;
  if (params.changes_logits() || !allowed.empty()) {
    penalized_.assign(logits, logits + vocab);
    if (params.has_penalties()) penalty_scratch_.apply(penalized_.data(), vocab, params, history);
    for (const auto& [id, bias] : params.logit_bias) {
      if (id >= vocab)
        throw Error("logit_bias names token " + std::to_string(id) + ", outside the vocabulary of " +
                    std::to_string(vocab));
      penalized_[static_cast<size_t>(id)] += bias;
    }
    if (!allowed.empty()) mask_logits(penalized_.data(), vocab, allowed);
    processed = penalized_.data();
  }
  SampleResult result;
  if (params.is_greedy()) {
    result.token = argmax(processed, vocab);
    if (processed[result.token] == -std::numeric_limits<float>::infinity())
      throw Error("every logit is -inf; no token can be sampled");
  } else {
    result.token = draw(processed, vocab, params, state.uniform(history.output.size()));
  }
  if (params.logprobs) {
    const double log_sum = log_sum_exp(logits, vocab);
    result.logprob = static_cast<float>(logits[result.token] - log_sum);
    result.top_logprobs = top_logprobs(logits, vocab, *params.logprobs, log_sum);
  }
  return result;
}

std::vector<SampleResult> Sampler::sample_batch(const float* logits, int32_t vocab, std::span<const SampleRow> rows) {
  std::vector<SampleResult> results;
  results.reserve(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    DB_CHECK(rows[r].params != nullptr && rows[r].state != nullptr, "sample row " + std::to_string(r));
    results.push_back(sample(logits + r * static_cast<size_t>(vocab), vocab, *rows[r].params, *rows[r].state,
                             rows[r].history));
  }
  return results;
}

}  // namespace db
