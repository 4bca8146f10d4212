#include "kernels/cpu/attention.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <string>

#include "kernels/cpu/attention_ops.h"
#include "kernels/cpu/softmax.h"
#include "util/error.h"

namespace db::kernels {

namespace {

constexpr int32_t kRowsPerTile = 16;  // query rows (tokens) of one sequence per work item
constexpr int kKeysPerChunk = 16;     // keys folded into the online softmax at a time

// Keys per softmax step: a fixed 16 whenever the block size allows it, so that
// results do not depend on the block size (chunks never straddle blocks).
int key_chunk(int block_size) { return block_size % kKeysPerChunk == 0 ? kKeysPerChunk : block_size; }

// Attention for query rows [it.row_begin, it.row_end) of one sequence and the
// query heads of one kv head.
void run_item(const AttentionOps& ops, const AttentionQueries& qs, const PagedKVLayer& kv,
              const AttentionWorkspace::Item& it, AttentionWorkspace::Thread& tb, float* out) {
  const int d = kv.head_dim;
  const int group = qs.n_heads / kv.n_kv_heads;
  const int bs = qs.block_size;
  const int n_rows_q = it.row_end - it.row_begin;
  const int n_q = n_rows_q * group;
  const std::vector<int32_t>& table = qs.block_tables[it.seq];

  int32_t max_pos = 0;
  for (int32_t t = it.row_begin; t < it.row_end; ++t) max_pos = std::max(max_pos, qs.positions[t]);
  for (int i = 0; i < n_q; ++i) tb.state[i] = {-std::numeric_limits<float>::infinity(), 0.0f};
  std::fill(tb.acc.begin(), tb.acc.begin() + static_cast<int64_t>(n_q) * d, 0.0f);

  const int chunk = key_chunk(bs);
  for (int32_t first_pos = 0; first_pos <= max_pos; first_pos += chunk) {
    const int n_keys = std::min(chunk, max_pos + 1 - first_pos);
    const int64_t slot0 = static_cast<int64_t>(table[first_pos / bs]) * bs + first_pos % bs;
    ops.load_rows(kv.k, kv.dtype, slot0, n_keys, kv.n_kv_heads, it.kv_head, d, tb.k.data());
    ops.load_rows(kv.v, kv.dtype, slot0, n_keys, kv.n_kv_heads, it.kv_head, d, tb.v.data());
    for (int32_t t = it.row_begin; t < it.row_end; ++t) {
      const int valid = std::min(n_keys, qs.positions[t] + 1 - first_pos);
      if (valid <= 0) continue;
      for (int g = 0; g < group; ++g) {
        const int h = it.kv_head * group + g;
        const float* q = qs.q + (static_cast<int64_t>(t) * qs.n_heads + h) * d;
        const int qi = (t - it.row_begin) * group + g;
        ops.scores(q, tb.k.data(), valid, d, qs.scale, tb.scores.data());
        const float correction = ops.softmax_update(tb.state[qi], tb.scores.data(), valid);
        ops.accumulate(tb.acc.data() + static_cast<int64_t>(qi) * d, correction, tb.scores.data(), tb.v.data(), valid,
                       d);
      }
    }
  }
  for (int32_t t = it.row_begin; t < it.row_end; ++t) {
    for (int g = 0; g < group; ++g) {
      const int h = it.kv_head * group + g;
      const int qi = (t - it.row_begin) * group + g;
      const float inv_l = 1.0f / tb.state[qi].l;
      const float* acc = tb.acc.data() + static_cast<int64_t>(qi) * d;
      float* o = out + (static_cast<int64_t>(t) * qs.n_heads + h) * d;
      for (int i = 0; i < d; ++i) o[i] = acc[i] * inv_l;
    }
  }
}

// Checks every position each sequence's queries can reach against its block table.
void validate(const AttentionQueries& qs, const PagedKVLayer& kv) {
  if (qs.n_heads <= 0 || kv.n_kv_heads <= 0 || qs.n_heads % kv.n_kv_heads != 0)
    throw Error("attention: " + std::to_string(qs.n_heads) + " query heads cannot share " +
                std::to_string(kv.n_kv_heads) + " kv heads");
  if (qs.block_size <= 0) throw Error("attention: block size must be positive");
  const int64_t num_blocks = kv.num_slots / qs.block_size;
  for (int s = 0; s < qs.n_seqs; ++s) {
    int32_t max_pos = -1;
    for (int32_t t = qs.query_start[s]; t < qs.query_start[s + 1]; ++t) {
      if (qs.positions[t] < 0) throw Error("attention: negative position in sequence " + std::to_string(s));
      max_pos = std::max(max_pos, qs.positions[t]);
    }
    const size_t needed = static_cast<size_t>(max_pos) / qs.block_size + 1;
    const std::vector<int32_t>& table = qs.block_tables[s];
    if (max_pos >= 0 && table.size() < needed)
      throw Error("attention: sequence " + std::to_string(s) + " reaches position " + std::to_string(max_pos) +
                  " but its block table has " + std::to_string(table.size()) + " blocks");
    for (size_t b = 0; max_pos >= 0 && b < needed; ++b)
      if (table[b] < 0 || table[b] >= num_blocks)
        throw Error("attention: sequence " + std::to_string(s) + " names block " + std::to_string(table[b]) +
                    " outside the cache of " + std::to_string(num_blocks) + " blocks");
  }
}

}  // namespace

void paged_attention(const AttentionQueries& qs, const PagedKVLayer& kv, float* out, AttentionWorkspace& ws,
                     ThreadPool& pool) {
  paged_attention_isa(cpu_features().level, qs, kv, out, ws, pool);
}

void paged_attention_isa(IsaLevel level, const AttentionQueries& qs, const PagedKVLayer& kv, float* out,
                         AttentionWorkspace& ws, ThreadPool& pool) {
  validate(qs, kv);
  const AttentionOps& ops = attention_ops(level);
  ws.items.clear();
  for (int32_t s = 0; s < qs.n_seqs; ++s)
    for (int32_t b = qs.query_start[s]; b < qs.query_start[s + 1]; b += kRowsPerTile)
      for (int32_t g = 0; g < kv.n_kv_heads; ++g)
        ws.items.push_back({s, g, b, std::min(b + kRowsPerTile, qs.query_start[s + 1])});
  if (ws.items.empty()) return;

  const size_t n_q = static_cast<size_t>(kRowsPerTile) * static_cast<size_t>(qs.n_heads / kv.n_kv_heads);
  const size_t chunk = static_cast<size_t>(key_chunk(qs.block_size));
  const size_t block_floats = chunk * static_cast<size_t>(kv.head_dim);
  ws.threads.resize(static_cast<size_t>(pool.size()));
  for (auto& t : ws.threads) {  // grow only: no allocation once warmed up
    if (t.k.size() < block_floats) t.k.resize(block_floats), t.v.resize(block_floats);
    if (t.scores.size() < chunk) t.scores.resize(chunk);
    if (t.state.size() < n_q) t.state.resize(n_q);
    if (t.acc.size() < n_q * static_cast<size_t>(kv.head_dim)) t.acc.resize(n_q * static_cast<size_t>(kv.head_dim));
  }

  std::atomic<size_t> next{0};
  pool.run([&](int tid, int) {
    AttentionWorkspace::Thread& tb = ws.threads[static_cast<size_t>(tid)];
    for (size_t i = next.fetch_add(1); i < ws.items.size(); i = next.fetch_add(1))
      run_item(ops, qs, kv, ws.items[i], tb, out);
  });
}

}  // namespace db::kernels
