#include "sched/admission_reservation.h"

#include <algorithm>

namespace db {

int64_t committed_blocks(const Request& r, const SchedulerConfig& cfg) {
  // A sequence holds KV for every token but its newest sampled one, so k more
  // outputs need k - 1 more positions past num_tokens(); it stops at max_model_len tokens.
  const int64_t remaining = std::max(1, r.max_tokens - r.num_output_tokens());
  int64_t kv = r.num_tokens() + std::min<int64_t>(remaining, cfg.decode_headroom_tokens) - 1;
  if (cfg.max_model_len > 0) kv = std::max<int64_t>(r.num_tokens(), std::min<int64_t>(kv, cfg.max_model_len - 1));
  const int64_t bs = cfg.block_size;
  const int64_t blocks = (kv + bs - 1) / bs;
  // An unforked parent of n samples: each fork shares the prompt's full blocks and
  // writes its own tail (the partial prompt block copied on write).
  return blocks + int64_t{r.num_samples - 1} * (blocks - r.num_prompt_tokens / bs);
}

int64_t lacking_blocks(const Request& r, const SchedulerConfig& cfg, const KVCacheManager& kv) {
  return std::max<int64_t>(0, committed_blocks(r, cfg) - static_cast<int64_t>(kv.block_table(r.id).size()));
}

int64_t outstanding_blocks(std::span<Request* const> running, const SchedulerConfig& cfg, const KVCacheManager& kv) {
  int64_t n = 0;
  for (const Request* r : running) n += lacking_blocks(*r, cfg, kv);
  return n;
}

int64_t admission_blocks(const Request& w, const ComputedBlocks& hit, const SchedulerConfig& cfg,
                         const KVCacheManager& kv) {
  int64_t shared = 0;
  for (int32_t b : hit.block_ids) shared += kv.pool().block(b).ref_cnt > 0;
  return committed_blocks(w, cfg) - shared;
}

}  // namespace db
