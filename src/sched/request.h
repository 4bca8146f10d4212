// One sequence as the scheduler sees it: its tokens, how far its KV cache has
// caught up with them, and what ends it.
//
//   tokens:  [ p0 p1 ... p(P-1) | o0 o1 ... o(k-1) ]      P prompt, k output tokens
//             \______ KV present ______/ \__ to compute __/
//                num_computed_tokens      num_tokens() - num_computed_tokens
//
// There is no prefill or decode mode: every step computes some of the tokens
// whose KV is missing (a prompt chunk, a whole prompt, or the one newest output
// token), and a step whose chunk reaches the last token samples the next one.
// A request with n > 1 samples runs as one sequence until its prompt is
// computed; the step that samples its first tokens forks it into n sequences
// (ids id, id+1, ..., id+n-1) that share the prompt's KV blocks copy-on-write.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sample/sampler_state.h"
#include "sample/sampling_params.h"
#include "util/request_id.h"

namespace db {

enum class RequestStatus {
  Waiting,          // queued, holds no blocks, never ran
  Running,          // holds blocks; scheduled when the budget allows
  Preempted,        // queued again after its blocks were freed; resumes by recomputing its tokens
  FinishedStopped,  // ended by EOS, a stop token, or the output side (stop string)
  FinishedLength,   // reached max_tokens or the context length
  FinishedAborted,  // aborted by the caller
  FinishedError,    // ended by an engine error
  FinishedTimeout,  // its deadline passed
  FinishedQueueTimeout,  // it waited for admission past its class's limit (and such requests are rejected)
};
bool is_finished(RequestStatus s);

// What a caller supplies to create a request (the parent sequence of a group).
struct RequestParams {
  RequestId id = 0;                    // sequence id; a group of n samples owns ids [id, id + n)
  std::vector<int32_t> prompt;         // prompt token ids (non-empty)
  SamplingParams sampling;             // per-token sampling
  SamplerState sampler_state;          // seed; stream = sample index (0 for the parent)
  int32_t max_tokens = 16;             // output tokens at most
  int32_t num_samples = 1;             // n: sequences the request forks into after its prompt
  std::vector<int32_t> stop_token_ids; // tokens that end the sequence (kept in the output)
  bool ignore_eos = false;             // do not stop at end-of-generation tokens
  int priority = 1;                    // lower runs first
  std::string tenant;                  // within a class, tenants are admitted in turn
  double arrival_time = 0;             // steady-clock seconds when it was submitted
  double deadline = 0;                 // steady-clock seconds past which it ends (0 = none)
};

struct Request {
  RequestId id = 0;                      // sequence id (unique among live requests)
  RequestId group_id = 0;                // id of the group's first sequence (the engine's request id)
  int32_t sample_index = 0;              // index among the group's samples; sampler stream offset
  int32_t num_samples = 1;               // > 1 only for a parent that has not forked yet
  std::vector<int32_t> tokens;           // prompt followed by output
  int32_t num_prompt_tokens = 0;         // leading prompt tokens in `tokens`
  int32_t num_computed_tokens = 0;       // leading tokens whose KV the request's blocks hold
  int32_t num_cached_tokens = -1;        // prefix-cache hit at first admission; -1 before it
  RequestStatus status = RequestStatus::Waiting;
  SamplingParams sampling;               // per-token sampling
  SamplerState sampler_state;            // seed and stream (stream = sample index for forks)
  int32_t max_tokens = 16;               // output tokens at most
  std::vector<int32_t> stop_token_ids;   // tokens that end the sequence
  bool ignore_eos = false;               // do not stop at end-of-generation tokens
  int priority = 1;                      // lower runs first; the class it is served in (promotions lower it)
  int requested_priority = 1;            // the class it asked for
  std::string tenant;                    // within a class, tenants are admitted in turn
  double arrival_time = 0;               // steady-clock seconds when it was submitted
  double class_entry_time = 0;           // ... when it entered its current class (promotion resets it)
  double deadline = 0;                   // steady-clock seconds past which it ends (0 = none)
  uint64_t arrival_seq = 0;              // FIFO order within a priority (forks inherit the parent's)
  int32_t num_preemptions = 0;           // times preempted by recompute
  int64_t last_step = -1;                // the scheduler step that last computed tokens of it
  bool runner_knows = false;             // the model runner holds this sequence's state
  int32_t stop_token = -1;               // the token that stopped it (FinishedStopped by token), else -1
  std::vector<int32_t> draft_tokens;     // speculative guesses of the tokens after the newest one, for the
                                         // next step to verify (Scheduler::set_draft_tokens); consumed by it

  int32_t num_tokens() const { return static_cast<int32_t>(tokens.size()); }
  int32_t num_output_tokens() const { return num_tokens() - num_prompt_tokens; }
  std::span<const int32_t> prompt() const { return {tokens.data(), static_cast<size_t>(num_prompt_tokens)}; }
  std::span<const int32_t> output() const {
    return {tokens.data() + num_prompt_tokens, static_cast<size_t>(num_output_tokens())};
  }
  // Tokens whose KV is still missing.
  int32_t num_uncomputed_tokens() const { return num_tokens() - num_computed_tokens; }
};

// A new waiting request from its parameters (status Waiting).
Request make_request(const RequestParams& p, uint64_t arrival_seq);

}  // namespace db
