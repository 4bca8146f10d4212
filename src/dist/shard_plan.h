// Which attention heads and feed-forward columns one rank of a tensor-parallel
// group holds (Megatron-LM's split of a llama-family block): KV heads are split as
// evenly as possible, lower ranks taking one more, and each rank takes the query
// heads that share its KV heads (grouped-query attention); the feed-forward inner
// width is split in whole units of `ffn_granule` columns (a quantization block of
// ffn_down), again lower ranks taking one more.
#pragma once
#include <cstdint>
#include <string>

namespace db::dist {

// How the ranks' parts of a block meet.
enum class ShardJoin : uint8_t {
  // Every rank all-gathers the heads' attention outputs and the feed-forward
  // activations, and runs attn_output and ffn_down whole: each product sums its
  // inputs in the same order as one process, so the results are bitwise one
  // process's (the default: greedy tokens never depend on the split). attn_output
  // and ffn_down are held whole by every rank.
  Gather = 1,
  // Megatron-LM: attn_output and ffn_down split by input columns and the partial
  // outputs all-reduced: less memory and compute per rank, but the sums are added in
  // another order, and a quantized model's next activations may round differently.
  Reduce = 2,
};

struct ShardPlan {
  int rank = 0, size = 1;             // this rank of `size` ranks
  int kv_head_begin = 0, kv_head_end = 0;  // KV heads [begin, end)
  int head_begin = 0, head_end = 0;        // query heads [begin, end)
  int64_t ffn_begin = 0, ffn_end = 0;      // feed-forward columns [begin, end)
  ShardJoin join = ShardJoin::Gather;

  int n_kv_heads() const { return kv_head_end - kv_head_begin; }
  int n_heads() const { return head_end - head_begin; }
  int64_t ffn_cols() const { return ffn_end - ffn_begin; }
  bool whole() const { return size == 1; }
};

// The plan of rank `rank` of `size`. Throws db::Error saying why when size < 1,
// rank is outside [0, size), the KV heads do not divide the query heads, there are
// fewer KV heads than ranks (every rank needs at least one: replicating KV heads is
// not supported), or ffn_hidden is not a multiple of ffn_granule or has fewer
// granules than ranks.
ShardPlan make_shard_plan(int n_heads, int n_kv_heads, int64_t ffn_hidden, int64_t ffn_granule, int rank, int size);

// "gather" / "reduce"; the value of such a name (throws db::Error listing them otherwise).
const char* shard_join_name(ShardJoin j);
ShardJoin shard_join_from_name(const std::string& name);

// [begin, end) of part `rank` when `units` are split into `size` parts as evenly as
// possible, the first units % size parts one longer.
struct EvenSplit {
  int64_t begin, end;
};
EvenSplit even_split(int64_t units, int rank, int size);

}  // namespace db::dist
