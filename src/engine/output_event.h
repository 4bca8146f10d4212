// Events from the engine's step thread (and submit()) to its output thread.
// Every event of one group is queued in order: Register first, then any of
// Scheduled / Tokens, and Aborted or Failed at most once.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine_types.h"
#include "sched/request.h"
#include "sched/scheduler_output.h"

namespace db {

using EngineClock = std::chrono::steady_clock;

// What the output side keeps about a request for its whole life.
struct GroupInfo {
  RequestId id = 0;                     // the request id (its first sequence's id)
  int32_t n = 1;                        // samples
  int32_t prompt_tokens = 0;            // prompt length
  std::vector<std::string> stop;        // stop strings
  std::vector<int32_t> stop_token_ids;  // stop token ids (reported as stop_reason)
  bool skip_special_tokens = true;      // special tokens produce no text
  OutputCallback callback;              // receives the outputs
  EngineClock::time_point submit_time;  // when submit() accepted it
};

struct OutputEvent {
  enum class Kind {
    Register,   // a new request: `group`
    Scheduled,  // the request ran for the first time: num_cached_tokens
    Tokens,     // one sequence's new tokens: sample_index, tokens, status, stop_token
    PromptLogprobs,  // scored prompt tokens from position first_position on: tokens
    Aborted,    // the caller aborted the request: unfinished samples end with Abort
    Failed,     // the engine ended the request: unfinished samples end with `reason` (Error, Timeout,
                // QueueTimeout) and stop_reason `error`
    Shutdown,   // the last event
  };
  Kind kind = Kind::Tokens;
  RequestId group_id = 0;                   // the request
  EngineClock::time_point time;             // when it happened
  std::shared_ptr<const GroupInfo> group;   // Register
  int32_t sample_index = 0;                 // Tokens
  std::vector<SampledToken> tokens;         // Tokens
  RequestStatus status = RequestStatus::Running;  // Tokens: Running or the sequence's Finished* status
  int32_t stop_token = -1;                  // Tokens: the stop token / EOS that finished it
  int32_t first_position = 0;               // PromptLogprobs: the prompt position of tokens[0]
  int32_t num_cached_tokens = 0;            // Scheduled: prefix-cache hit tokens
  std::string error;                        // Failed: what went wrong
  FinishReason reason = FinishReason::Error;  // Failed: how the unfinished samples end
};

}  // namespace db
