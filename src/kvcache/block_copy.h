// A copy-on-write block copy the KV cache manager asks for and the runner performs.
#pragma once
#include <cstdint>

namespace db {

// Copy block src to block dst (all layers, all rows) in the KV store.
struct BlockCopy {
  int32_t src = 0;
  int32_t dst = 0;
  friend bool operator==(const BlockCopy&, const BlockCopy&) = default;
};

}  // namespace db
