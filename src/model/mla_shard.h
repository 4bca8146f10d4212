// Which attention heads and feed-forward columns one rank of a tensor-parallel
// group holds in a deepseek2 (MLA) model. The compressed latent (attn_kv_a, its
// norm and the latent KV cache) is shared by every head, so it stays whole on every
// rank; each rank holds its heads' rows of attn_q / attn_q_b and their absorbed
// W_UK^T / W_UV, and the rows of the dense FFN's and the shared experts' gate / up
// for its columns. The ranks meet by the gather join (dist::ShardJoin::Gather): head
// outputs and FFN activations are all-gathered and attn_output / ffn_down run whole,
// so every product sums in one process's order. Heads and columns are split as
// evenly as possible, lower ranks taking one more (dist::even_split); uneven splits
// are fine, since nothing is summed across them.
#pragma once
#include <cstdint>
#include <vector>

namespace db {

struct MlaShard {
  int rank = 0, size = 1;                     // this rank of `size` ranks
  int head_begin = 0, head_end = 0;           // attention heads [begin, end)
  int64_t ffn_begin = 0, ffn_end = 0;         // dense FFN columns [begin, end)
  int64_t shared_begin = 0, shared_end = 0;   // shared-experts FFN columns [begin, end) (empty without)

  int n_heads() const { return head_end - head_begin; }
  bool whole() const { return size == 1; }
};

// The shard of rank `rank` of `size` for a model of n_heads heads, a dense FFN
// ffn_hidden wide and shared experts shared_ffn wide (0: none). Throws db::Error
// naming --tensor-parallel-size when size < 1, rank is outside [0, size), or a rank
// would get no head or no column of a feed-forward that exists.
MlaShard make_mla_shard(int n_heads, int64_t ffn_hidden, int64_t shared_ffn, int rank, int size);

// Every rank's first column and then the total, for dist::all_gather_columns, when
// `units` of `width` columns each are split as make_mla_shard splits them.
std::vector<int64_t> even_split_columns(int64_t units, int64_t width, int size);

}  // namespace db
