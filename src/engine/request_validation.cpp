#include "engine/request_validation.h"

#include <algorithm>
#include <string>

#include "util/error.h"

namespace db {

namespace {

void check_token(int32_t t, int32_t vocab, const char* what) {
  if (t < 0 || t >= vocab)
    throw Error(std::string(what) + ": token id " + std::to_string(t) + " is outside the vocabulary [0, " +
                std::to_string(vocab) + ")");
}

}  // namespace

void validate_request(const EngineRequest& r, const RequestLimits& limits) {
  if (r.prompt.empty()) throw Error("prompt: the prompt is empty; at least one token is needed");
  for (int32_t t : r.prompt) check_token(t, limits.vocab, "prompt");
  const int64_t prompt_len = static_cast<int64_t>(r.prompt.size());
  if (prompt_len + 1 > limits.max_context)
    throw Error("prompt: " + std::to_string(prompt_len) + " tokens leave no room to generate in the model's context of " +
                std::to_string(limits.max_context) + " tokens; shorten the prompt to at most " +
                std::to_string(limits.max_context - 1));
  if (r.max_tokens < 1) throw Error("max_tokens: must be at least 1, got " + std::to_string(r.max_tokens));
  const int32_t max_n = std::min(kMaxSamplesPerPrompt, limits.max_num_seqs);
  if (r.n < 1 || r.n > max_n)
    throw Error("n: must be in [1, " + std::to_string(max_n) + "] (" +
                (max_n == kMaxSamplesPerPrompt ? "the most samples a request may ask for" : "max_num_seqs") +
                "), got " + std::to_string(r.n));
  r.sampling.validate();
  for (const std::string& s : r.stop)
    if (s.empty()) throw Error("stop: stop strings must not be empty");
  for (int32_t t : r.stop_token_ids) check_token(t, limits.vocab, "stop_token_ids");
  if (!(r.timeout_seconds >= 0 && r.timeout_seconds <= 1e9))
    throw Error("timeout: must be a non-negative number of seconds, got " + std::to_string(r.timeout_seconds));
  if (r.priority < 0 || r.priority > 2)
    throw Error("priority: must be 0 (interactive), 1 (normal) or 2 (background), got " + std::to_string(r.priority));
  const int64_t seq_len = std::min<int64_t>(prompt_len + r.max_tokens, limits.max_context);
  const int64_t blocks = (seq_len + limits.block_size - 1) / limits.block_size;
  if (blocks > limits.num_usable_blocks)
    throw Error("max_tokens: a sequence of " + std::to_string(seq_len) + " tokens (prompt " + std::to_string(prompt_len) +
                " + max_tokens " + std::to_string(r.max_tokens) + ") needs " + std::to_string(blocks) +
                " KV blocks of " + std::to_string(limits.block_size) + " tokens; the cache holds " +
                std::to_string(limits.num_usable_blocks) + ": lower max_tokens or raise the KV cache memory");
}

}  // namespace db
