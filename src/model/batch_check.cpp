#include "model/batch_check.h"

#include <string>

#include "util/error.h"

namespace db {

namespace {

[[noreturn]] void fail(const std::string& what) { throw Error("invalid batch: " + what); }

std::string str(int64_t v) { return std::to_string(v); }

void check_offsets(const Batch& b, const AttentionMetadata& a) {
  const int64_t n = b.num_tokens();
  if (static_cast<int64_t>(b.positions.size()) != n)
    fail(str(n) + " tokens but " + str(b.positions.size()) + " positions");
  if (static_cast<int64_t>(a.slot_mapping.size()) != n)
    fail(str(n) + " tokens but " + str(a.slot_mapping.size()) + " slots");
  if (b.query_start.empty()) {
    if (n != 0) fail("query_start is empty but the batch has tokens");
    return;
  }
  if (b.query_start.front() != 0) fail("query_start[0] is " + str(b.query_start.front()) + ", expected 0");
  if (b.query_start.back() != n) fail("query_start ends at " + str(b.query_start.back()) + ", expected " + str(n));
  for (size_t s = 0; s + 1 < b.query_start.size(); ++s)
    if (b.query_start[s + 1] < b.query_start[s]) fail("query_start decreases at sequence " + str(s));
  const size_t n_seqs = static_cast<size_t>(b.num_seqs());
  if (a.context_lens.size() != n_seqs)
    fail(str(n_seqs) + " sequences but " + str(a.context_lens.size()) + " context lengths");
  if (a.block_tables.size() != n_seqs)
    fail(str(n_seqs) + " sequences but " + str(a.block_tables.size()) + " block tables");
}

void check_sequence(const Batch& b, const AttentionMetadata& a, const KVStore& kv, int s) {
  const int64_t bs = a.block_size, ctx = a.context_lens[static_cast<size_t>(s)];
  const std::vector<int32_t>& table = a.block_tables[static_cast<size_t>(s)];
  const std::string seq = "sequence " + str(s);
  if (ctx < b.query_start[s + 1] - b.query_start[s])
    fail(seq + ": context length " + str(ctx) + " is shorter than its " + str(b.query_start[s + 1] - b.query_start[s]) +
         " new tokens");
  if (static_cast<int64_t>(table.size()) * bs < ctx)
    fail(seq + ": " + str(table.size()) + " blocks cannot hold context length " + str(ctx));
  for (size_t i = 0; i < table.size() && static_cast<int64_t>(i) * bs < ctx; ++i)
    if (table[i] < 0 || table[i] >= kv.num_blocks())
      fail(seq + ": block " + str(table[i]) + " outside the store's " + str(kv.num_blocks()) + " blocks");
  for (int32_t t = b.query_start[s]; t < b.query_start[s + 1]; ++t) {
    const int64_t pos = b.positions[static_cast<size_t>(t)];
    if (pos < 0 || pos >= ctx)
      fail(seq + ": token " + str(t) + " at position " + str(pos) + " outside [0, " + str(ctx) + ")");
    const int64_t want = int64_t{table[static_cast<size_t>(pos / bs)]} * bs + pos % bs;
    if (a.slot_mapping[static_cast<size_t>(t)] != want)
      fail(seq + ": token " + str(t) + " maps to slot " + str(a.slot_mapping[static_cast<size_t>(t)]) +
           " but its block table puts position " + str(pos) + " at slot " + str(want));
  }
}

}  // namespace

void check_batch(const Batch& b, const AttentionMetadata& a, const KVStore& kv, int vocab) {
  if (a.block_size != kv.block_size())
    fail("block size " + str(a.block_size) + " differs from the KV store's " + str(kv.block_size()));
  check_offsets(b, a);
  for (size_t i = 0; i < b.token_ids.size(); ++i)
    if (b.token_ids[i] < 0 || b.token_ids[i] >= vocab)
      fail("token " + str(i) + " has id " + str(b.token_ids[i]) + " outside the vocabulary [0, " + str(vocab) + ")");
  for (int s = 0; s < b.num_seqs(); ++s) check_sequence(b, a, kv, s);
  for (size_t i = 0; i < b.logits_indices.size(); ++i)
    if (b.logits_indices[i] < 0 || b.logits_indices[i] >= b.num_tokens())
      fail("logits index " + str(b.logits_indices[i]) + " outside the batch's " + str(b.num_tokens()) + " tokens");
}

}  // namespace db
