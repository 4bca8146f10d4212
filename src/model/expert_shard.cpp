#include "model/expert_shard.h"

#include <cstring>
#include <string>

#include "dist/communicator.h"
#include "util/error.h"

namespace db {

ExpertShard make_expert_shard(int n_experts, int rank, int size) {
  const std::string opt = "--expert-parallel-size " + std::to_string(size);
  if (size < 1) throw Error(opt + ": must be at least 1");
  if (rank < 0 || rank >= size) throw Error(opt + ": rank " + std::to_string(rank) + " is outside the group");
  if (n_experts < 1) throw Error(opt + ": the model has no routed experts to split");
  if (size > n_experts)
    throw Error(opt + " is above the model's " + std::to_string(n_experts) +
                " routed experts per layer (every rank must hold at least one)");
  ExpertShard s;
  s.begin = static_cast<int>(int64_t{rank} * n_experts / size);
  s.end = static_cast<int>(int64_t{rank + 1} * n_experts / size);
  return s;
}

ExpertShard make_expert_shard(int n_experts, dist::Communicator* group) {
  if (group == nullptr || group->size() == 1) return ExpertShard{nullptr, 0, n_experts};
  ExpertShard s = make_expert_shard(n_experts, group->rank(), group->size());
  s.group = group;
  return s;
}

void exchange_expert_rows(const ExpertShard& shard, std::span<const int64_t> rows_before, const float* mine,
                          int64_t width, std::vector<std::byte>& send, float* all) {
  DB_CHECK(shard.split(), "exchange_expert_rows needs a split shard");
  dist::Communicator& group = *shard.group;
  const int n_experts = static_cast<int>(rows_before.size()) - 1;
  const size_t row_bytes = static_cast<size_t>(width) * sizeof(float);
  std::vector<size_t> send_counts(static_cast<size_t>(group.size())), recv_counts(send_counts.size());
  const size_t my_bytes = static_cast<size_t>(rows_before[shard.end] - rows_before[shard.begin]) * row_bytes;
  for (int r = 0; r < group.size(); ++r) {
    const ExpertShard theirs = make_expert_shard(n_experts, r, group.size());
    send_counts[static_cast<size_t>(r)] = my_bytes;
    recv_counts[static_cast<size_t>(r)] =
        static_cast<size_t>(rows_before[theirs.end] - rows_before[theirs.begin]) * row_bytes;
  }
  // all_to_all_v takes one part per destination: this rank's rows, once for each.
  send.resize(my_bytes * send_counts.size());
  for (size_t r = 0; r < send_counts.size(); ++r)
    if (my_bytes > 0) std::memcpy(send.data() + r * my_bytes, mine, my_bytes);
  const size_t all_bytes = static_cast<size_t>(rows_before[n_experts]) * row_bytes;
  group.all_to_all_v(send, send_counts, std::span<std::byte>(reinterpret_cast<std::byte*>(all), all_bytes),
                     recv_counts);
}

}  // namespace db
