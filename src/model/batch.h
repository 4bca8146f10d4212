// The plain data a model step consumes: one flat, padding-free, variable-length
// batch and the attention metadata that says where each sequence's K/V live.
//
//   tokens:      [ s0 t0 t1 t2 | s1 t0 | s2 t0 t1 ]   (prefill chunks and decode
//   query_start:  0            3       4         6     tokens are the same thing)
//
// Sequence s owns tokens [query_start[s], query_start[s+1]). Its K/V for
// positions [0, context_lens[s]) live in the paged KV store, in the blocks
// block_tables[s][0..]: position p is at block block_tables[s][p / block_size],
// row p % block_size. The step writes the new tokens' K/V to slot_mapping[i]
// (= block_id * block_size + row) before attending, so a sequence attends over
// its cached prefix plus its own new tokens (causally).
#pragma once
#include <cstdint>
#include <vector>

namespace db {

struct Batch {
  std::vector<int32_t> token_ids;    // all new tokens of all sequences, concatenated
  std::vector<int32_t> positions;    // position of each token within its sequence
  std::vector<int32_t> query_start;  // n_seqs + 1 offsets into token_ids
  std::vector<int32_t> logits_indices;  // rows of token_ids whose logits the step returns, in this order

  int32_t num_tokens() const { return static_cast<int32_t>(token_ids.size()); }
  int32_t num_seqs() const { return query_start.empty() ? 0 : static_cast<int32_t>(query_start.size()) - 1; }
};

struct AttentionMetadata {
  int32_t block_size = 16;                         // tokens per KV block
  std::vector<int32_t> context_lens;               // per sequence: KV length after this step (cached + new)
  std::vector<std::vector<int32_t>> block_tables;  // per sequence: block ids covering [0, context_lens[s])
  std::vector<int64_t> slot_mapping;               // per token: where its K/V are written
};

// Empties a step's batch and metadata for reuse (keeping their capacity): no
// tokens, no sequences, KV blocks of block_size tokens.
inline void clear_step(Batch& batch, AttentionMetadata& attn, int32_t block_size) {
  batch.token_ids.clear();
  batch.positions.clear();
  batch.query_start.assign(1, 0);
  batch.logits_indices.clear();
  attn.block_size = block_size;
  attn.context_lens.clear();
  attn.block_tables.clear();
  attn.slot_mapping.clear();
}

}  // namespace db
