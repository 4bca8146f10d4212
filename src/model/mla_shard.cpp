#include "model/mla_shard.h"

#include <string>

#include "dist/shard_plan.h"
#include "util/error.h"

namespace db {

namespace {

void check_units(int64_t units, const char* what, int size) {
  if (units < size)
    throw Error("--tensor-parallel-size " + std::to_string(size) + " is above the model's " + std::to_string(units) +
                " " + what + ": every rank holds at least one; use at most " + std::to_string(units) + " ranks");
}

}  // namespace

MlaShard make_mla_shard(int n_heads, int64_t ffn_hidden, int64_t shared_ffn, int rank, int size) {
  if (size < 1) throw Error("--tensor-parallel-size must be at least 1, got " + std::to_string(size));
  if (rank < 0 || rank >= size)
    throw Error("rank " + std::to_string(rank) + " is outside a tensor-parallel group of " + std::to_string(size));
  check_units(n_heads, "attention heads", size);
  if (ffn_hidden > 0) check_units(ffn_hidden, "dense feed-forward columns", size);
  if (shared_ffn > 0) check_units(shared_ffn, "shared-expert feed-forward columns", size);
  MlaShard s;
  s.rank = rank;
  s.size = size;
  const dist::EvenSplit heads = dist::even_split(n_heads, rank, size);
  s.head_begin = static_cast<int>(heads.begin);
  s.head_end = static_cast<int>(heads.end);
  const dist::EvenSplit ffn = dist::even_split(ffn_hidden, rank, size);
  s.ffn_begin = ffn.begin;
  s.ffn_end = ffn.end;
  const dist::EvenSplit shared = dist::even_split(shared_ffn, rank, size);
  s.shared_begin = shared.begin;
  s.shared_end = shared.end;
  return s;
}

std::vector<int64_t> even_split_columns(int64_t units, int64_t width, int size) {
  std::vector<int64_t> starts;
  for (int r = 0; r < size; ++r) starts.push_back(dist::even_split(units, r, size).begin * width);
  starts.push_back(units * width);
  return starts;
}

}  // namespace db
