#include "runner/kv_block_copy.h"

#include <string>

#include "util/error.h"

namespace db {

void copy_kv_blocks(KVStore& kv, std::span<const BlockCopy> copies) {
  const int64_t bs = kv.block_size();
  const size_t k_block_bytes = static_cast<size_t>(bs) * kv.k_row_nbytes();
  const size_t v_block_bytes = static_cast<size_t>(bs) * kv.v_row_nbytes();
  for (const BlockCopy& c : copies) {
    if (c.src < 0 || c.dst < 0 || c.src >= kv.num_blocks() || c.dst >= kv.num_blocks())
      throw Error("KV block copy " + std::to_string(c.src) + " -> " + std::to_string(c.dst) +
                  " is outside the store of " + std::to_string(kv.num_blocks()) + " blocks");
    if (c.src == c.dst) continue;
    for (int layer = 0; layer < kv.n_layers(); ++layer) {
      kv.copy_bytes(kv.k_row(layer, c.dst * bs), kv.k_row(layer, c.src * bs), k_block_bytes);
      // Latent: V is part of the K rows just copied.
      if (kv.has_v_arrays())
        kv.copy_bytes(kv.v_row(layer, c.dst * bs), kv.v_row(layer, c.src * bs), v_block_bytes);
    }
  }
}

}  // namespace db
