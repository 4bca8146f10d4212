// How a step's token budget is split between sequences.
//
// Short work is a sequence whose missing tokens all fit one shared chunk: a
// decode, the tail of a prompt, a short prompt. It computes all of them and
// samples in the step. Long work is a prompt with more missing tokens; it
// computes a chunk:
//
//   the step holds no short work:  chunk <= long_threshold    (few, large steps)
//   the step holds short work:     chunk <= shared_threshold  (the step stays short)
//
// Short work is served first: a long chunk only gets the budget that the
// step's reserved short work leaves, so every running decode gets its token
// and a short prompt arriving behind a long prompt gets its whole prompt in the
// next step. The scheduler reserves for waiting short prompts only what leaves
// each running long prompt one shared chunk, so a stream of short arrivals
// does not stall a long prompt either.
//
// Caps count cost, not only tokens (prefill_cost.h): a capped chunk from
// position p holds the most tokens whose cost is at most that of a cap-sized
// chunk at position 0 (at least one token), so a chunk deep in a long prompt,
// whose tokens attend to all the context before them, is shorter and the step
// lasts about as long as at the prompt's start. Short work is also judged by
// cost: a prompt tail deep in its context that costs more than a shared chunk
// at position 0 is long work, chunked. A decode (one missing token) is always
// short work, whatever its position, so decodes are never starved.
#pragma once
#include <algorithm>
#include <cstdint>

#include "sched/prefill_cost.h"

namespace db {

// Tokens a sequence with `uncomputed` missing tokens computes this step, given
// `budget_left` tokens left in the step and a cap (0 = no cap). >= 1 when both
// uncomputed and budget_left are.
int32_t chunk_tokens(int32_t uncomputed, int32_t budget_left, int32_t long_prefill_threshold);

// The long-prefill threshold used when none is configured: a quarter of the
// step budget, rounded up to whole blocks.
int32_t auto_long_prefill_threshold(int32_t max_num_batched_tokens, int32_t block_size);

// The shared-prefill threshold used when none is configured: an eighth of the
// long-prefill threshold rounded up to whole blocks, at most the threshold; 0
// (no cap) when the long-prefill threshold is 0.
int32_t auto_shared_prefill_threshold(int32_t long_prefill_threshold, int32_t block_size);

// Chunk caps of a step (0 = no cap).
struct ChunkLimits {
  int32_t long_threshold = 0;    // cap of a chunk in a step without short work
  int32_t shared_threshold = 0;  // cap of a long chunk in a step with short work; <= long_threshold when both > 0
};

// The limits a step uses: `long_threshold` as given (0 = no cap) and the shared
// one as given or, when 0, auto_shared_prefill_threshold of it; the shared one at
// most the long one when both are set.
ChunkLimits resolve_chunk_limits(int32_t long_threshold, int32_t shared_threshold, int32_t block_size);

// One step's budget as it is handed out, short work before long chunks.
class StepBudget {
 public:
  // `short_reserved`: missing tokens of the short work to be served in this
  // step, held back from long chunks; `shared`: the step holds short work.
  // `cost`: how chunks are priced (the default prices a token as one unit, so
  // caps count tokens).
  StepBudget(int32_t tokens, ChunkLimits limits, int32_t short_reserved, bool shared, PrefillCost cost = {});

  // Whether a sequence with `uncomputed` missing tokens after its first
  // `position` (computed) ones is short work: one token, or at most the shared
  // threshold whose cost is at most a shared chunk's at position 0.
  static bool is_short(int32_t uncomputed, int64_t position, ChunkLimits limits, const PrefillCost& cost);
  bool is_short(int32_t uncomputed, int64_t position) const { return is_short(uncomputed, position, limits_, cost_); }

  // Tokens a sequence with `uncomputed` missing tokens after `position` may
  // compute now: all of them for short work (within what is left), else a chunk
  // of what the unserved short work leaves, cut to the cap's cost (see above).
  // 0 = none this step.
  int32_t offer(int32_t uncomputed, int64_t position) const;
  // Records that that sequence computes `n` now.
  void take(int32_t uncomputed, int64_t position, int32_t n);
  // Stops holding tokens back for short work not served yet (for the
  // admission phase, which serves the waiting queue in order anyway).
  void drop_reservation() { short_reserved_ = 0; }

  int32_t left() const { return left_; }
  // Tokens no short work is waiting for: what optional extras (speculative
  // draft tokens) may take without pushing a sequence out of the step.
  int32_t spare() const { return std::max(0, left_ - short_reserved_); }
  // Records that extras took n <= spare() tokens.
  void take_spare(int32_t n) { left_ -= n; }
  // The cap of a long chunk in this step (0 = none).
  int32_t cap() const { return shared_ ? limits_.shared_threshold : limits_.long_threshold; }

 private:
  ChunkLimits limits_;
  PrefillCost cost_;
  int32_t left_ = 0;           // tokens not handed out yet
  int32_t short_reserved_ = 0; // short work expected but not served yet
  bool shared_ = false;        // the step holds short work
};

}  // namespace db
