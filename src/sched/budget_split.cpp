#include "sched/budget_split.h"

#include <algorithm>

namespace db {

namespace {

int32_t round_up_to_blocks(int32_t tokens, int32_t block_size) {
  const int32_t bs = std::max(1, block_size);
  return (tokens + bs - 1) / bs * bs;
}

}  // namespace

int32_t chunk_tokens(int32_t uncomputed, int32_t budget_left, int32_t long_prefill_threshold) {
  int32_t n = std::min(uncomputed, budget_left);
  if (long_prefill_threshold > 0) n = std::min(n, long_prefill_threshold);
  return std::max(n, 0);
}

int32_t auto_long_prefill_threshold(int32_t max_num_batched_tokens, int32_t block_size) {
  const int32_t quarter = std::max(1, max_num_batched_tokens / 4);
  return std::min(max_num_batched_tokens, round_up_to_blocks(quarter, block_size));
}

int32_t auto_shared_prefill_threshold(int32_t long_prefill_threshold, int32_t block_size) {
  if (long_prefill_threshold <= 0) return 0;
  const int32_t eighth = std::max(1, long_prefill_threshold / 8);
  return std::min(long_prefill_threshold, round_up_to_blocks(eighth, block_size));
}

ChunkLimits resolve_chunk_limits(int32_t long_threshold, int32_t shared_threshold, int32_t block_size) {
  ChunkLimits l;
  l.long_threshold = long_threshold;
  l.shared_threshold = shared_threshold > 0 ? shared_threshold : auto_shared_prefill_threshold(long_threshold, block_size);
  if (l.long_threshold > 0) l.shared_threshold = std::min(l.shared_threshold, l.long_threshold);
  return l;
}

StepBudget::StepBudget(int32_t tokens, ChunkLimits limits, int32_t short_reserved, bool shared, PrefillCost cost)
    : limits_(limits),
      cost_(cost),
      left_(std::max(tokens, 0)),
      short_reserved_(std::max(short_reserved, 0)),
      shared_(shared) {}

bool StepBudget::is_short(int32_t uncomputed, int64_t position, ChunkLimits limits, const PrefillCost& cost) {
  if (limits.shared_threshold <= 0 || uncomputed > limits.shared_threshold) return false;
  return uncomputed == 1 || cost.cost(position, uncomputed) <= cost.cost(0, limits.shared_threshold);
}

int32_t StepBudget::offer(int32_t uncomputed, int64_t position) const {
  if (is_short(uncomputed, position)) return chunk_tokens(uncomputed, left_, 0);
  const int32_t n = chunk_tokens(uncomputed, left_ - short_reserved_, cap());
  if (n == 0 || cap() == 0) return n;
  return cost_.chunk(position, cost_.cost(0, cap()), n);
}

void StepBudget::take(int32_t uncomputed, int64_t position, int32_t n) {
  left_ -= n;
  if (is_short(uncomputed, position)) short_reserved_ = std::max(0, short_reserved_ - n);
}

}  // namespace db
