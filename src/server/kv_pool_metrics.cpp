#include "server/kv_pool_metrics.h"

#include "server/metric_names.h"

namespace db::server {

KvPoolMetrics::KvPoolMetrics(std::string model_name)
    : model_(std::move(model_name)),
      usable_(reg_.gauge("deepbatch:kv_cache_usable_blocks", "KV cache blocks that can hold tokens (null block excluded).",
                         kModelLabel)
                  .labels({model_})),
      largest_free_run_(reg_.gauge("deepbatch:kv_cache_largest_free_run_blocks",
                                   "Longest run of consecutive free KV block ids (free memory's contiguity; "
                                   "deepbatch:kv_cache_free_blocks counts all free blocks).",
                                   kModelLabel)
                            .labels({model_})),
      cached_(reg_.gauge("deepbatch:kv_cache_cached_blocks",
                         "KV blocks registered in the prefix cache, held or free (reusable by matching prompts).",
                         kModelLabel)
                  .labels({model_})),
      resident_(reg_.gauge("deepbatch:kv_cache_resident_blocks",
                           "KV blocks whose memory has been touched and so counts in the process's RSS.", kModelLabel)
                    .labels({model_})),
      evicted_(reg_.counter("deepbatch:kv_cache_evicted_blocks_total",
                            "Prefix-cache blocks evicted to hold other tokens.", kModelLabel)
                   .labels({model_})),
      by_priority_(reg_.gauge("deepbatch:kv_cache_blocks_by_priority",
                              "KV blocks held by running sequences, by priority class (0 interactive, 1 normal, 2 "
                              "background).",
                              {"model_name", "priority"})) {}

std::string KvPoolMetrics::render(const EngineStats& s) {
  usable_.set(static_cast<double>(s.pool.num_usable_blocks));
  largest_free_run_.set(static_cast<double>(s.pool.largest_free_run));
  cached_.set(static_cast<double>(s.pool.num_cached_blocks));
  resident_.set(static_cast<double>(s.resident_blocks));
  evicted_.raise_to(static_cast<double>(s.evicted_blocks));
  for (int p = 0; p < 3; ++p)
    by_priority_.labels({model_, std::to_string(p)}).set(static_cast<double>(s.blocks_by_priority[p]));
  return reg_.render();
}

}  // namespace db::server
