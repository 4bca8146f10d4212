// Counters of speculative decoding since the engine started (for /metrics, the
// bench and the batch summary). A "draft" is one sequence's verification of
// one or more draft tokens in one step.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace db {

struct SpecDecodeStats {
  std::string proposer;                       // "" when speculation is off
  int64_t num_drafts = 0;                     // verifications
  int64_t num_draft_tokens = 0;               // draft tokens verified
  int64_t num_accepted_tokens = 0;            // ... of which accepted
  int64_t num_emitted_tokens = 0;             // tokens the verifying steps emitted (accepted + one each)
  std::vector<int64_t> accepted_per_position; // [i]: drafts whose token i was accepted
  int64_t paused = 0;                         // decode steps that drafted nothing because drafts did not pay
  double cost_ratio = 0;                      // the latest step: marginal seconds of one more token / seconds
                                              // per token (near 0: drafts nearly free; near 1: compute-bound)
  double proposer_seconds = 0;                // spent drafting (a draft model's forwards; ~0 for prompt lookup)
  int64_t proposer_kv_blocks = 0;             // blocks the proposer's own KV cache holds (a draft model's)

  double acceptance_rate() const {
    return num_draft_tokens > 0 ? static_cast<double>(num_accepted_tokens) / static_cast<double>(num_draft_tokens) : 0;
  }
  // Tokens emitted per verification (1 + accepted drafts on average).
  double mean_accepted_length() const {
    return num_drafts > 0 ? static_cast<double>(num_emitted_tokens) / static_cast<double>(num_drafts) : 0;
  }
};

}  // namespace db
