// Consistency checks of one step's batch against the KV store, run before a
// forward touches any state.
#pragma once
#include "model/batch.h"
#include "model/kv_store.h"

namespace db {

// Throws db::Error describing the first inconsistency: offsets that do not
// partition the tokens, token ids outside [0, vocab), positions outside
// [0, context_len), block tables that do not cover context_len or name blocks
// outside the store, a slot that is not where the block table puts the token's
// position, logits indices outside the batch, or a block size unlike the store's.
void check_batch(const Batch& batch, const AttentionMetadata& attn, const KVStore& kv, int vocab);

}  // namespace db
