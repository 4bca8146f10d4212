#include "dist/shard_plan.h"

#include <algorithm>
#include <string>

#include "util/error.h"

namespace db::dist {

const char* shard_join_name(ShardJoin j) { return j == ShardJoin::Reduce ? "reduce" : "gather"; }

ShardJoin shard_join_from_name(const std::string& name) {
  if (name == "gather") return ShardJoin::Gather;
  if (name == "reduce") return ShardJoin::Reduce;
  throw Error("--tensor-parallel-join must be gather or reduce, got '" + name + "'");
}

EvenSplit even_split(int64_t units, int rank, int size) {
  const int64_t base = units / size, extra = units % size;
  const int64_t begin = rank * base + std::min<int64_t>(rank, extra);
  return {begin, begin + base + (rank < extra ? 1 : 0)};
}

ShardPlan make_shard_plan(int n_heads, int n_kv_heads, int64_t ffn_hidden, int64_t ffn_granule, int rank, int size) {
  if (size < 1) throw Error("tensor parallel size must be at least 1, got " + std::to_string(size));
  if (rank < 0 || rank >= size)
    throw Error("rank " + std::to_string(rank) + " is outside a tensor-parallel group of " + std::to_string(size));
  if (n_kv_heads < 1 || n_heads % n_kv_heads != 0)
    throw Error("tensor parallelism: " + std::to_string(n_heads) + " query heads are not a multiple of " +
                std::to_string(n_kv_heads) + " KV heads");
  if (size > n_kv_heads)
    throw Error("--tensor-parallel-size " + std::to_string(size) + " is above the model's " +
                std::to_string(n_kv_heads) +
                " KV heads: each rank holds at least one KV head (replicated KV heads are not supported); use at most " +
                std::to_string(n_kv_heads) + " ranks");
  if (ffn_granule < 1 || ffn_hidden % ffn_granule != 0 || ffn_hidden / ffn_granule < size)
    throw Error("--tensor-parallel-size " + std::to_string(size) + ": the feed-forward width " +
                std::to_string(ffn_hidden) + " does not split into " + std::to_string(size) +
                " parts of whole quantization blocks of " + std::to_string(ffn_granule) + " columns");
  ShardPlan p;
  p.rank = rank;
  p.size = size;
  const EvenSplit kv = even_split(n_kv_heads, rank, size);
  const int group = n_heads / n_kv_heads;
  p.kv_head_begin = static_cast<int>(kv.begin);
  p.kv_head_end = static_cast<int>(kv.end);
  p.head_begin = p.kv_head_begin * group;
  p.head_end = p.kv_head_end * group;
  const EvenSplit ffn = even_split(ffn_hidden / ffn_granule, rank, size);
  p.ffn_begin = ffn.begin * ffn_granule;
  p.ffn_end = ffn.end * ffn_granule;
  return p;
}

}  // namespace db::dist
