// What goes into the engine and what comes out of it, as plain data.
// Text in, text out: the engine tokenizes prompts and detokenizes outputs off
// its step thread; callers never see the scheduler or the model.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sample/sampling_params.h"
#include "util/request_id.h"

namespace db {


// Priority classes: lower is more urgent.
enum class Priority : int { Interactive = 0, Normal = 1, Background = 2 };

struct EngineRequest {
  std::vector<int32_t> prompt;           // prompt token ids (the caller tokenized / rendered the chat)
  SamplingParams sampling;               // per-token sampling
  int32_t max_tokens = 16;               // generated tokens at most (also capped by the context)
  int32_t n = 1;                         // independent samples; they share the prompt's KV blocks
  std::vector<std::string> stop;         // stop strings (matched on detokenized text; not included in output)
  std::vector<int32_t> stop_token_ids;   // extra token ids that end generation (included in tokens, not text)
  bool ignore_eos = false;               // do not stop at the model's end-of-generation tokens
  bool skip_special_tokens = true;       // special tokens produce no text
  int priority = 1;                      // 0 interactive, 1 normal, 2 background (lower runs first)
  std::string tenant;                    // who asked ("" = nobody in particular): within a priority class,
                                         // tenants are admitted in turn, so none can starve another
  double timeout_seconds = 0;            // deadline, counted from submit(): past it the request ends with
                                         // FinishReason::Timeout at the next step (0 = none)
};

// Timeout: the request's deadline passed (EngineRequest::timeout_seconds).
// QueueTimeout: it waited in the queue past its class's limit and the engine is
// set to reject such requests (EngineConfig::max_queue_wait). Both end every
// sample with stop_reason saying what happened; outputs so far are kept.
enum class FinishReason { None, Stop, Length, Abort, Error, Timeout, QueueTimeout };
// "stop", "length", "abort", "error", "timeout", "queue_timeout"; "" for None
const char* finish_reason_name(FinishReason r);

// One sample's state delivered to the caller. Outputs of one request arrive in
// order; the last one for a sample has finish != None.
struct SampleOutput {
  int32_t index = 0;                      // sample index in [0, n)
  std::vector<int32_t> new_token_ids;     // tokens generated since the previous output of this sample
  std::vector<float> new_logprobs;        // logprob of each new token (when requested)
  std::vector<std::vector<std::pair<int32_t, float>>> new_top_logprobs;  // per new token (when requested)
  std::string new_text;                   // text completed since the previous output (UTF-8 safe)
  FinishReason finish = FinishReason::None;
  std::string stop_reason;                // the stop string that ended it, or a stop_token_ids id in decimal
                                          // (EOS: empty); for FinishReason::Error, what went wrong
  // With SamplingParams::prompt_logprobs, sample 0's outputs carry the prompt, scored
  // (the first token has no logprob), in order and once, before its first token.
  std::vector<int32_t> prompt_token_ids;
  std::vector<std::optional<float>> prompt_logprobs;
  std::vector<std::vector<std::pair<int32_t, float>>> prompt_top_logprobs;
};

struct RequestStats {
  int32_t prompt_tokens = 0;        // prompt length
  int32_t cached_prompt_tokens = 0; // prompt tokens served from the prefix cache
  int32_t generated_tokens = 0;     // over all samples
  double queue_seconds = 0;         // submit -> first scheduled
  double ttft_seconds = 0;          // submit -> first token
  double e2e_seconds = 0;           // submit -> finished
};

// One model step, for metrics.
struct StepRecord {
  double seconds = 0;      // schedule -> execute -> update
  int32_t tokens = 0;      // tokens computed (prompt chunks and decodes)
  int32_t sequences = 0;   // sequences that computed tokens
  int32_t prompt_tokens = 0;  // ... of the tokens, those at prompt positions
  double bytes_read = 0;   // weights and KV the step reads (model/weight_read_bytes.h + every
                           // sequence's context), an estimate for the roofline gauge
};
// Called on the engine's step thread after each step that computed tokens; must be
// quick and must not call into the engine.
using StepObserver = std::function<void(const StepRecord&)>;

// Called on an engine-owned thread (never the step thread is required to wait on it
// for long); must not block. `final` is true exactly once, after the last sample finished.
using OutputCallback = std::function<void(RequestId, const SampleOutput&, const RequestStats&, bool final)>;

}  // namespace db
