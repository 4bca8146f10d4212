// Checks a request before it is queued, so that nothing invalid reaches the
// step thread. Every failure is a db::Error naming the field, what is allowed
// and what was given.
#pragma once
#include <cstdint>

#include "engine/engine_types.h"

namespace db {

// Samples per prompt (`n`) one request may ask for, wherever it comes from (the
// OpenAI API refuses more at parse time). The engine also refuses n above its
// max_num_seqs, since the n samples of a request run side by side.
inline constexpr int32_t kMaxSamplesPerPrompt = 64;

// What a request is checked against.
struct RequestLimits {
  int32_t vocab = 0;             // token ids must be in [0, vocab)
  int64_t max_context = 0;       // prompt + 1 must fit
  int32_t max_num_seqs = 0;      // n must not exceed it (nor kMaxSamplesPerPrompt)
  int32_t block_size = 16;       // KV block size
  int64_t num_usable_blocks = 0; // KV blocks a single sequence may fill at most
};

// Throws db::Error for an empty prompt, a token id outside the vocabulary, a
// prompt with no room for one generated token, max_tokens < 1, n outside
// [1, min(kMaxSamplesPerPrompt, max_num_seqs)], invalid sampling parameters, an empty stop string, a stop
// token id outside the vocabulary, a priority outside [0, 2], or a sequence
// (prompt + max_tokens, capped by the context) larger than the whole KV cache.
void validate_request(const EngineRequest& r, const RequestLimits& limits);

}  // namespace db
