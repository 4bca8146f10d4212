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

class DraftProposer {
 public:
  virtual ~DraftProposer() = default;
  // drafts[i] receives query i's draft tokens (at most max_drafts; empty = no guess).
  // `drafts` is resized to queries.size().
  virtual void propose(std::span<const DraftQuery> queries, std::vector<std::vector<int32_t>>& drafts) = 0;
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
