// The plain data that flows between the scheduler and the model runner each step.
//
//   Scheduler::schedule() --SchedulerOutput--> ModelRunner::execute()
//   ModelRunner::execute() --ModelRunnerOutput--> Scheduler::update()
//
// The runner keeps a copy of each sequence's tokens, sampling parameters and
// sampler state from the moment it is first scheduled (new_data) until it is
// preempted or finished (preempted_ids, finished_ids); it appends the tokens it
// samples itself. Block tables travel in full every step (copy-on-write may
// replace a block in the middle of a table).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "kvcache/block_copy.h"
#include "util/request_id.h"
#include "sample/logprobs.h"
#include "sample/sampler_state.h"
#include "sample/sampling_params.h"

namespace db {

// What the runner must know about a sequence it has not seen yet.
struct NewRequestData {
  std::vector<int32_t> tokens;     // prompt followed by the output so far
  int32_t num_prompt_tokens = 0;   // leading prompt tokens in `tokens`
  SamplingParams sampling;         // per-token sampling
  SamplerState sampler_state;      // seed and stream of this sequence
  RequestId group_id = 0;          // the group's first sequence (the engine's request id)
  bool first_admission = false;    // the request runs for the first time (not resumed, not a fork)
  int32_t num_cached_tokens = 0;   // tokens adopted from the prefix cache at this admission
};

// One sequence's share of a step.
struct ScheduledRequest {
  RequestId id = 0;                      // sequence id
  int32_t num_computed_tokens = 0;       // tokens whose KV is present before the step (prefix hit included)
  int32_t num_scheduled_tokens = 0;      // tokens computed by the step, from position num_computed_tokens on
  int32_t num_samples = 0;               // tokens to sample from the chunk's last row (0: the chunk ends before the last known token; n > 1: a parent about to fork)
  std::vector<int32_t> block_ids;        // the block table after this step's allocation
  std::vector<int32_t> new_block_ids;    // blocks taken from the pool for this step
  // Speculative tokens after the newest known one (a decode only): the step
  // computes them too (num_scheduled_tokens = 1 + draft_tokens.size()) and the
  // runner returns the tokens the model accepts, 1 to draft_tokens.size() + 1 of them.
  std::vector<int32_t> draft_tokens;
  std::optional<NewRequestData> new_data;  // set iff the runner does not hold the sequence's state
};

struct SchedulerOutput {
  std::vector<ScheduledRequest> scheduled_running;  // sequences the runner holds, in running order
  std::vector<ScheduledRequest> scheduled_new;      // sequences new to the runner (admitted, resumed or forked)
  std::vector<BlockCopy> block_copies;              // copy-on-write block copies to apply before the step
  std::vector<RequestId> preempted_ids;             // preempted by this step (blocks freed, back in the queue)
  std::vector<RequestId> finished_ids;              // finished since the previous step (blocks freed)
  int32_t total_num_scheduled_tokens = 0;           // sum of num_scheduled_tokens

  bool has_work() const { return total_num_scheduled_tokens > 0; }
};

// One sampled token and its logprobs.
struct SampledToken {
  int32_t token = -1;                      // token id
  std::optional<float> logprob;            // raw logprob of `token` (when the request asks for logprobs)
  std::vector<TokenLogprob> top_logprobs;  // highest raw logprobs (when asked), highest first
  friend bool operator==(const SampledToken&, const SampledToken&) = default;
};

// The samples drawn for one scheduled sequence whose chunk reached its last token.
struct RequestSamples {
  RequestId id = 0;                   // sequence id
  // num_samples entries, sample i from sampler stream (stream + i); or, for a
  // sequence with draft tokens, the tokens verification emitted, in order: the
  // accepted drafts and then the model's own next token.
  std::vector<SampledToken> samples;
};

// Prompt logprobs (SamplingParams::prompt_logprobs) of the prompt positions a step
// computed for a group's first sequence: tokens[i] is the prompt token at position
// first_position + i with its raw logprob given the tokens before it (none at 0).
struct PromptLogprobs {
  RequestId group_id = 0;
  int32_t first_position = 0;
  std::vector<SampledToken> tokens;
};

struct ModelRunnerOutput {
  std::vector<RequestSamples> requests;  // one per scheduled sequence with num_samples > 0
  std::vector<PromptLogprobs> prompt_logprobs;  // one per sequence whose step computed prompt positions that want them
};

}  // namespace db
