// Limits and switches of the scheduler.
#pragma once
#include <cstdint>
#include <vector>

namespace db {

struct SchedulerConfig {
  int32_t max_num_seqs = 64;              // running sequences at most (an unforked n-sample request counts n)
  int32_t max_num_batched_tokens = 2048;  // tokens computed per step at most
  int32_t long_prefill_threshold = 0;     // a prompt chunk longer than this is cut to it (0 = no cap)
  int32_t shared_prefill_threshold = 0;   // ... and to this in a step that also serves short work (budget_split.h);
                                          // 0 = auto: an eighth of long_prefill_threshold in whole blocks
  int32_t block_size = 16;                // tokens per KV block
  int32_t num_blocks = 0;                 // KV pool size, the null block included (>= 2)
  bool enable_prefix_caching = true;      // reuse cached full blocks of identical prefixes
  bool priority_preemption = true;        // a waiting request may preempt running ones of less urgent classes
  int64_t max_model_len = 0;              // context length: a sequence stops when it holds this many tokens
  std::vector<int32_t> eos_token_ids;     // end-of-generation tokens (unless a request ignores EOS)
};

}  // namespace db
