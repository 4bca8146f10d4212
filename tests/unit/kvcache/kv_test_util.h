// Helpers shared by the KV cache tests.
#pragma once
#include <cstdint>
#include <numeric>
#include <optional>
#include <vector>

#include "kvcache/kv_cache_manager.h"

namespace db::kvtest {

// n consecutive token ids starting at first.
inline std::vector<int32_t> seq(int32_t first, int32_t n) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), first);
  return v;
}

inline std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Looks up the prefix and allocates slots for the whole prompt in one step.
inline std::optional<AllocResult> admit(KVCacheManager& m, RequestId id, const std::vector<int32_t>& prompt,
                                        const BlockExtraKeys& extra = {}) {
  const ComputedBlocks hit = m.get_computed_blocks(id, prompt, extra);
  SlotRequest r;
  r.tokens = prompt;
  r.num_new_tokens = static_cast<int32_t>(prompt.size()) - hit.num_computed_tokens;
  r.prefix_hit = &hit;
  r.extra_keys = &extra;
  return m.allocate_slots(id, r);
}

// One more step of `num_new` tokens for a request holding blocks.
inline std::optional<AllocResult> step(KVCacheManager& m, RequestId id, const std::vector<int32_t>& tokens,
                                       int32_t computed, int32_t num_new, int32_t lookahead = 0) {
  SlotRequest r;
  r.tokens = tokens;
  r.num_computed_tokens = computed;
  r.num_new_tokens = num_new;
  r.num_lookahead_tokens = lookahead;
  return m.allocate_slots(id, r);
}

using Ids = std::vector<int32_t>;

}  // namespace db::kvtest
