#include "offline_bench/pool_report.h"

#include <algorithm>
#include <cstdio>

namespace db::bench {

PoolReport make_pool_report(const EngineStats& after, const EngineStats& before) {
  PoolReport r;
  r.usable_blocks = after.pool.num_usable_blocks;
  r.free_blocks = after.pool.num_free_blocks;
  r.largest_free_run = after.pool.largest_free_run;
  r.cached_blocks = after.pool.num_cached_blocks;
  r.resident_blocks = after.resident_blocks;
  r.evicted_blocks = std::max<int64_t>(0, after.evicted_blocks - before.evicted_blocks);
  return r;
}

nlohmann::json to_json(const PoolReport& r) {
  return {{"usable_blocks", r.usable_blocks},     {"free_blocks", r.free_blocks},
          {"largest_free_run", r.largest_free_run}, {"cached_blocks", r.cached_blocks},
          {"resident_blocks", r.resident_blocks}, {"evicted_blocks", r.evicted_blocks}};
}

std::string pool_table_header() {
  char line[256];
  std::snprintf(line, sizeof line, "%6s %-7s %10s %10s %12s %10s %10s %10s\n", "seqs", "phase", "KV blocks", "free",
                "largest run", "cached", "resident", "evicted");
  return line;
}

std::string pool_table_row(int max_num_seqs, const char* phase, const PoolReport& r) {
  char line[256];
  std::snprintf(line, sizeof line, "%6d %-7s %10lld %10lld %12lld %10lld %10lld %10lld\n", max_num_seqs, phase,
                static_cast<long long>(r.usable_blocks), static_cast<long long>(r.free_blocks),
                static_cast<long long>(r.largest_free_run), static_cast<long long>(r.cached_blocks),
                static_cast<long long>(r.resident_blocks), static_cast<long long>(r.evicted_blocks));
  return line;
}

}  // namespace db::bench
