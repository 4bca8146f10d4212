// What a load test sends: one RequestSpec per request, and the synthetic workload
// generator. Every generator is reproducible from its seed on any platform.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/length_dist.h"

namespace db::loadtest {

struct RequestSpec {
  std::string prompt;                      // text for /v1/completions; empty when `messages` is set
  nlohmann::json messages;                 // OpenAI chat messages (an array) for /v1/chat/completions, or null
  int32_t prompt_tokens = 0;               // intended (synthetic) or estimated (files) prompt length
  int32_t max_tokens = 0;                  // output tokens to ask for
  std::optional<int32_t> shared_prefix_id; // which declared shared prefix the prompt starts with

  bool is_chat() const { return messages.is_array(); }
};

// K prefixes of `prefix_tokens` tokens each; a request starts with one of them with
// probability `fraction`, the prefix chosen uniformly.
struct SharedPrefixSpec {
  int32_t num_prefixes = 0;
  int32_t prefix_tokens = 0;
  double fraction = 0;
};

struct SyntheticWorkloadSpec {
  int32_t num_requests = 100;
  LengthDist input_len;   // prompt tokens, the shared prefix included
  LengthDist output_len;  // max_tokens
  SharedPrefixSpec shared_prefix;
  uint64_t seed = 0;
};

// Throws db::Error on a spec that cannot produce requests: no requests, a fraction
// outside [0, 1], or a fraction > 0 without prefixes of at least one token.
void validate(const SyntheticWorkloadSpec& spec);

// The requests of `spec` (completion style, `prompt` set). A prompt is the shared
// prefix's text (when drawn) followed by the request's own part: number_tag(request
// index) and then random words, so prompts share text only through declared prefixes.
// The own part has max(input length - prefix tokens, kNumberTagWords) words, and
// prompt_tokens counts prefix + own part at one token per word.
// Lengths, prefix choices and words come from separate streams of the seed: the
// lengths of a seed do not change with the prefix settings.
std::vector<RequestSpec> make_synthetic_workload(const SyntheticWorkloadSpec& spec);

// `count` requests drawn from `pool` (non-empty) in a seeded shuffled order: each
// pass over the pool is a fresh Fisher-Yates shuffle, so no request repeats before
// every request has been used once.
std::vector<RequestSpec> sample_requests(const std::vector<RequestSpec>& pool, int32_t count, uint64_t seed);

}  // namespace db::loadtest
