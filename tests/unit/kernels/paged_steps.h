// Test scaffolding shared by the paged-attention tests: block tables for a
// set of sequences, the flat query batch of a step, and its output rows
// regrouped per sequence and position.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace db::kernels::testing {

// steps[i] lists sequence steps[i].first's query positions in the step.
using StepPlan = std::vector<std::pair<int, std::vector<int>>>;

// Gives the sequences of lengths ctx block tables taken from the top of a pool
// of total_blocks blocks downwards (so tables are not in order), and calls
// write(s, slots) with the cache slot of each of sequence s's positions.
inline std::vector<std::vector<int32_t>> assign_blocks(const std::vector<int>& ctx, int block_size, int total_blocks,
                                                       const std::function<void(size_t, const int64_t*)>& write) {
  std::vector<std::vector<int32_t>> tables(ctx.size());
  int next = total_blocks;
  for (size_t s = 0; s < ctx.size(); ++s) {
    for (int b = 0; b * block_size < ctx[s]; ++b) tables[s].push_back(--next);
    std::vector<int64_t> slots;
    for (int pos = 0; pos < ctx[s]; ++pos)
      slots.push_back(int64_t{tables[s][size_t(pos / block_size)]} * block_size + pos % block_size);
    write(s, slots.data());
  }
  return tables;
}

// The flat batch of a step: queries (q_dim floats per position, from each
// sequence's [ctx][q_dim] rows), query starts, positions and block tables.
struct StepBatch {
  std::vector<float> q;
  std::vector<int32_t> query_start{0}, positions;
  std::vector<std::vector<int32_t>> tables;
};

inline StepBatch gather_step(const StepPlan& steps, const std::vector<std::vector<float>>& queries, int64_t q_dim,
                             const std::vector<std::vector<int32_t>>& all_tables) {
  StepBatch b;
  for (const auto& [seq, pos_list] : steps) {
    for (int pos : pos_list) {
      b.positions.push_back(pos);
      const float* src = queries[size_t(seq)].data() + size_t(pos) * q_dim;
      b.q.insert(b.q.end(), src, src + q_dim);
    }
    b.query_start.push_back(b.query_start.back() + int32_t(pos_list.size()));
    b.tables.push_back(all_tables[size_t(seq)]);
  }
  return b;
}

// The step's output rows (out_dim floats each, in step order) as [seq][position].
inline std::vector<std::vector<std::vector<float>>> split_outputs(const StepPlan& steps, size_t n_seqs,
                                                                  const std::vector<int>& ctx,
                                                                  const std::vector<float>& out, int64_t out_dim) {
  std::vector<std::vector<std::vector<float>>> result(n_seqs);
  for (size_t s = 0; s < n_seqs; ++s) result[s].resize(size_t(ctx[s]));
  size_t row = 0;
  for (const auto& [seq, pos_list] : steps)
    for (int pos : pos_list) {
      result[size_t(seq)][size_t(pos)].assign(out.begin() + long(row * out_dim),
                                              out.begin() + long((row + 1) * out_dim));
      ++row;
    }
  return result;
}

}  // namespace db::kernels::testing
