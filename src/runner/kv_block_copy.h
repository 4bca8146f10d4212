// Copy-on-write block copies on the paged KV store.
#pragma once
#include <span>

#include "kvcache/block_copy.h"
#include "model/kv_store.h"

namespace db {

// Copies every row of block c.src to block c.dst, K and V of every layer (for
// Latent, the latent rows, which hold V), for each copy in order. Throws db::Error for a block id outside the store.
void copy_kv_blocks(KVStore& kv, std::span<const BlockCopy> copies);

}  // namespace db
