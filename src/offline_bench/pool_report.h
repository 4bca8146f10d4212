// The KV block pool's part of a benchmark report: its shape at the end of a run
// (free blocks, the largest run of consecutive free blocks, blocks still holding
// prefix-cache entries, blocks with resident memory) and the prefix-cache
// evictions during the run, for telling fragmentation and cache churn apart from
// plain lack of memory.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/engine.h"

namespace db::bench {

struct PoolReport {
  int64_t usable_blocks = 0;     // null block excluded
  int64_t free_blocks = 0;       // at the end of the run (cached ones included)
  int64_t largest_free_run = 0;  // longest run of consecutive free block ids at the end
  int64_t cached_blocks = 0;     // blocks registered in the prefix cache at the end
  int64_t resident_blocks = 0;   // blocks whose memory has been touched by the end
  int64_t evicted_blocks = 0;    // prefix-cache blocks evicted during the run
};

// The report from the engine's stats after the run and before it.
PoolReport make_pool_report(const EngineStats& after, const EngineStats& before);

// {"usable_blocks", "free_blocks", "largest_free_run", "cached_blocks", "resident_blocks", "evicted_blocks"}.
nlohmann::json to_json(const PoolReport& r);

// A text table of runs' pools: the header once, then one row per run.
std::string pool_table_header();
std::string pool_table_row(int max_num_seqs, const char* phase, const PoolReport& r);

}  // namespace db::bench
