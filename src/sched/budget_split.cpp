#include "sched/budget_split.h"

#include <algorithm>

namespace db {

int32_t chunk_tokens(int32_t uncomputed, int32_t budget_left, int32_t long_prefill_threshold) {
  int32_t n = std::min(uncomputed, budget_left);
  if (long_prefill_threshold > 0) n = std::min(n, long_prefill_threshold);
  return std::max(n, 0);
}

int32_t auto_long_prefill_threshold(int32_t max_num_batched_tokens, int32_t block_size) {
  const int32_t quarter = std::max(1, max_num_batched_tokens / 4);
  const int32_t bs = std::max(1, block_size);
  return std::min(max_num_batched_tokens, (quarter + bs - 1) / bs * bs);
}

}  // namespace db
