// How a step's token budget is split: each scheduled sequence computes all of
// its missing tokens, cut to what is left of the budget and to the long-prefill
// threshold, so that one long prompt takes at most `threshold` tokens of a step
// and shorter prompts and decodes behind it still run in the same step.
#pragma once
#include <cstdint>

namespace db {

// Tokens a sequence with `uncomputed` missing tokens computes this step, given
// `budget_left` tokens left in the step and the threshold (0 = no cap). >= 1
// when both uncomputed and budget_left are.
int32_t chunk_tokens(int32_t uncomputed, int32_t budget_left, int32_t long_prefill_threshold);

// The threshold used when none is configured: a quarter of the step budget,
// rounded up to whole blocks (a long prompt then leaves three quarters of each
// step to other sequences).
int32_t auto_long_prefill_threshold(int32_t max_num_batched_tokens, int32_t block_size);

}  // namespace db
