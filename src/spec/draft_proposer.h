// A source of speculative draft tokens: guesses of the tokens a sequence will
// produce next, which the target model then verifies in one step (verify.h).
// A proposer only ever speeds decoding up or slows it down; verification makes
// the output independent of what it proposes.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "util/request_id.h"

namespace db {

// One sequence to draft for.
struct DraftQuery {
  RequestId id = 0;
  std::span<const int32_t> tokens;  // prompt followed by the output so far
  int32_t num_prompt_tokens = 0;    // leading prompt tokens in `tokens`
  int32_t max_drafts = 0;           // draft at most this many tokens (>= 1)
};

// One sequence's part in a target step that has run (DraftProposer::observe_step).
struct TargetStepSequence {
  RequestId id = 0;
  int32_t first_position = 0;       // position of the first token the step computed
  int32_t num_tokens = 0;           // tokens it computed, drafts included
  int64_t row = 0;                  // their rows in the step's batch: [row, row + num_tokens)
  std::span<const int32_t> tokens;  // the sequence's tokens after the step: accepted ones only
};

class DraftProposer {
 public:
  virtual ~DraftProposer() = default;
  // drafts[i] receives query i's draft tokens (at most max_drafts; empty = no guess).
  // `drafts` is resized to queries.size().
  virtual void propose(std::span<const DraftQuery> queries, std::vector<std::vector<int32_t>>& drafts) = 0;
  // Proposers that draft from the target's own hidden states (MTP) see every
  // step after it ran, with all the sequences it computed, in batch order.
  virtual bool observes_steps() const { return false; }
  virtual void observe_step(std::span<const TargetStepSequence> /*seqs*/) {}
  // The sequence ended or was preempted: drop what is kept for it.
  virtual void forget(RequestId) {}
  // Recent seconds per draft token, not counting the feeding of tokens a
  // proposer had not seen (a draft model's prompt prefill); 0 when negligible.
  // What drafting costs the step in the governor's reckoning (draft_governor.h).
  virtual double seconds_per_draft_token() const { return 0; }
  // Blocks of the proposer's own KV cache in use (0 without one).
  virtual int64_t kv_blocks_in_use() const { return 0; }
  // "ngram", "draft_model", ... (the metrics' proposer label).
  virtual std::string name() const = 0;
};

}  // namespace db
