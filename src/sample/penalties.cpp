#include "sample/penalties.h"

#include <string>

#include "util/error.h"

namespace db {
namespace {

void check_token(int32_t token, int32_t vocab) {
  if (token < 0 || token >= vocab)
    throw Error("token id " + std::to_string(token) + " in the request's history is outside the vocabulary [0, " +
                std::to_string(vocab) + ")");
}

}  // namespace

void PenaltyScratch::count_output(std::span<const int32_t> output, int32_t vocab) {
  for (int32_t token : output) {
    check_token(token, vocab);
    if (counts_[token]++ == 0) counted_.push_back(token);
  }
}

void PenaltyScratch::mark_seen(std::span<const int32_t> tokens, int32_t vocab) {
  for (int32_t token : tokens) {
    check_token(token, vocab);
    if (!seen_[token]) {
      seen_[token] = 1;
      marked_.push_back(token);
    }
  }
}

void PenaltyScratch::reset() {
  for (int32_t token : counted_) counts_[token] = 0;
  for (int32_t token : marked_) seen_[token] = 0;
  counted_.clear();
  marked_.clear();
}

void PenaltyScratch::apply(float* logits, int32_t vocab, const SamplingParams& params,
                           const TokenHistory& history) {
  if (counts_.size() < static_cast<size_t>(vocab)) {
    counts_.resize(vocab, 0);
    seen_.resize(vocab, 0);
  }
  try {
    if (params.repetition_penalty != 1.0f) {
      mark_seen(history.prompt, vocab);
      mark_seen(history.output, vocab);
      const float r = params.repetition_penalty;
      for (int32_t token : marked_) logits[token] = logits[token] > 0.0f ? logits[token] / r : logits[token] * r;
    }
    if (params.frequency_penalty != 0.0f || params.presence_penalty != 0.0f) {
      count_output(history.output, vocab);
      for (int32_t token : counted_) {
        logits[token] -= params.frequency_penalty * static_cast<float>(counts_[token]);
        logits[token] -= params.presence_penalty;
      }
    }
  } catch (...) {
    reset();
    throw;
  }
  reset();
}

}  // namespace db

