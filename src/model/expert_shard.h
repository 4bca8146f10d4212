// Expert parallelism for DeepSeekMoE (model/moe_feed_forward.h): the routed experts
// of every MoE layer are split across the ranks of a group, rank r of E holding the
// contiguous experts [r * n / E, (r + 1) * n / E). Everything else (attention, dense
// layers, shared experts, norms, router, head) is replicated, and every rank runs the
// whole batch through it, so every rank routes every token alike.
//
// The combine: each rank runs its experts over the tokens routed to them and the
// ranks exchange those unweighted expert output rows (all_to_all_v, every rank's
// rows to every rank), ordered by expert then token, exactly the order one process
// produces them in; every rank then adds each token's weighted rows in ascending
// expert index as one process does, so its output is bitwise one process's.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace db {

namespace dist {
class Communicator;
}

// One rank's part of the routed experts: experts [begin, end) of a layer's n_experts.
// group == nullptr: one process holding every expert.
struct ExpertShard {
  dist::Communicator* group = nullptr;
  int begin = 0, end = 0;

  bool split() const { return group != nullptr; }
  bool holds(int e) const { return group == nullptr || (e >= begin && e < end); }
};

// The experts [rank * n / size, (rank + 1) * n / size) of rank `rank` of `size`.
// Throws db::Error naming --expert-parallel-size when size < 1, rank is outside
// [0, size), or size exceeds n_experts (a rank would hold no expert).
ExpertShard make_expert_shard(int n_experts, int rank, int size);
// The shard of `group`'s rank (group null or of one rank: every expert).
ExpertShard make_expert_shard(int n_experts, dist::Communicator* group);

// The combine's exchange: `rows_before[e]` is the number of rows of experts < e (in
// the order one process computes them: by expert, then token), for e <= n_experts;
// `mine` holds this rank's rows (experts [shard.begin, shard.end)), `width` floats
// each. On return `all` holds every expert's rows in that order (rows_before[n]
// rows). Every rank knows every count, since they all route every token alike; it
// sends its rows to each other rank: (size - 1) x its rows x width x 4 bytes.
// `send` is scratch.
void exchange_expert_rows(const ExpertShard& shard, std::span<const int64_t> rows_before, const float* mine,
                          int64_t width, std::vector<std::byte>& send, float* all);

}  // namespace db
