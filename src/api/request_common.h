// The fields /v1/completions and /v1/chat/completions share: model, sampling,
// stop conditions, n, priority, timeout. Parsed from a request body into plain values.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/json_fields.h"
#include "engine/request_validation.h"
#include "api/guided_fields.h"
#include "sample/sampling_params.h"

namespace db::api {

// Largest `n` (samples per prompt) a request may ask for: the engine's limit.
using db::kMaxSamplesPerPrompt;

struct CommonFields {
  std::string model;                     // "model" as given ("" when absent)
  SamplingParams sampling;               // temperature, top_p/top_k/min_p, penalties, seed (logprobs set per endpoint)
  int32_t n = 1;                         // samples per prompt, in [1, kMaxSamplesPerPrompt]
  std::vector<std::string> stop;         // stop strings ("stop": string or list of strings), none empty
  std::vector<int32_t> stop_token_ids;   // extra ids that end generation ("stop_token_ids")
  bool ignore_eos = false;               // keep generating past end-of-generation tokens
  bool skip_special_tokens = true;       // special tokens produce no text
  int priority = 1;                      // 0 interactive, 1 normal, 2 background
  bool priority_given = false;           // the body named "priority" (else `priority` is the default)
  bool stream = false;                   // "stream": answer as server-sent events
  bool stream_include_usage = false;     // "stream_options": {"include_usage": true}
  std::string user;                      // "user" (opaque end-user id; not used for generation)
  double timeout = 0;                    // "timeout": seconds from submission until the request is ended
                                         // (HTTP 408), in (0, kMaxRequestTimeoutSeconds]; 0 when not given
  std::optional<GuidedOutput> guided;    // what the output must follow, and the field that said so; none when unset
};

// Largest "timeout" a request may ask for (about 11.5 days): beyond it a value is
// far more likely a unit mistake (milliseconds) than a real deadline.
inline constexpr double kMaxRequestTimeoutSeconds = 1e6;

// Reads the shared fields of `body` (an object); a field of the wrong type or out of
// range, or stream_options without stream, throws ApiError naming it. Which fields a
// body may hold at all is request_fields.h's business.
CommonFields parse_common_fields(const Json& body);

// `max_tokens`-style field: an integer >= 1, or unset.
std::optional<int32_t> parse_max_tokens(const Json& body, const char* key);

// Throws ApiError unless `body` is a JSON object.
void require_object(const Json& body);

}  // namespace db::api
