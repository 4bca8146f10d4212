// The bookkeeping of AdmissionPolicy::Reserve (scheduler.h, "Admission"): how many
// KV blocks a sequence is admitted against, what the running sequences'
// reservations still lack beyond the blocks they hold, and what admitting a
// waiting request takes from the allocatable blocks. Counting only: the
// scheduler decides whom to admit, grow or preempt.
#pragma once
#include <cstdint>
#include <span>

#include "kvcache/kv_cache_manager.h"
#include "sched/request.h"
#include "sched/scheduler_config.h"

namespace db {

// r's reservation in blocks: the blocks it holds once it has computed its tokens
// and min(its remaining outputs, cfg.decode_headroom_tokens) more, within
// cfg.max_model_len; for an unforked parent of n samples, each fork's own tail too.
int64_t committed_blocks(const Request& r, const SchedulerConfig& cfg);

// What r's reservation lacks beyond the blocks r holds in `kv` (never negative).
int64_t lacking_blocks(const Request& r, const SchedulerConfig& cfg, const KVCacheManager& kv);

// The sum of lacking_blocks over the running sequences.
int64_t outstanding_blocks(std::span<Request* const> running, const SchedulerConfig& cfg, const KVCacheManager& kv);

// The blocks admitting waiting request w with prefix hit `hit` takes from the
// allocatable ones, at most: its reservation less the hit blocks other sequences
// hold (adopting those takes nothing from the free ones).
int64_t admission_blocks(const Request& w, const ComputedBlocks& hit, const SchedulerConfig& cfg,
                         const KVCacheManager& kv);

}  // namespace db
