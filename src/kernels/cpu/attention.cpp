#include "kernels/cpu/attention.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>

#include "kernels/cpu/attention_ops.h"
#include "kernels/cpu/attention_spans.h"
#include "kernels/cpu/softmax.h"
#include "util/error.h"

namespace db::kernels {

void prefetch_kv_chunk(const AttentionQueries& qs, const PagedKVLayer& kv, const std::vector<int32_t>& table, int h0,
                       int n_heads, int32_t first, int n) {
  int64_t slots[kKeysPerChunk];
  chunk_slots(table, qs.block_size, first, n, slots);
  const bool values_in_keys = kv.values_in_keys();  // their lines are the keys' lines
  // The heads' bytes, rounded up to whole Q8_0 blocks (at most one more than they span).
  const auto k_bytes = static_cast<int64_t>(kv_row_bytes(kv.dtype, int64_t{n_heads} * kv.k_head_dim));
  const auto v_bytes = static_cast<int64_t>(kv_row_bytes(kv.dtype, int64_t{n_heads} * kv.v_head_dim));
  const KvHeadBytes k_at(kv.dtype, kv.k_row_stride, h0, kv.k_head_dim);
  const KvHeadBytes v_at(kv.dtype, kv.v_row_stride, h0, kv.v_head_dim);
  for (int r = 0; r < n; ++r) {
    const char* k = static_cast<const char*>(kv.k) + k_at.at(slots[r]);
    for (int64_t b = 0; b < k_bytes; b += 64) __builtin_prefetch(k + b, 0, 3);
    if (values_in_keys) continue;
    const char* v = static_cast<const char*>(kv.v) + v_at.at(slots[r]);
    for (int64_t b = 0; b < v_bytes; b += 64) __builtin_prefetch(v + b, 0, 3);
  }
}

// Per kv head of the item, per query: scores of the chunk, online softmax
// update, weighted values; then the query's span record.
void attention_tile_by_query(const AttentionOps& ops, const AttentionTile& tile) {
  const AttentionQueries& qs = *tile.qs;
  const PagedKVLayer& kv = *tile.kv;
  const AttentionWorkspace::Item& it = tile.item;
  const int dk = kv.k_head_dim, d = kv.v_head_dim;
  const int group = qs.n_heads / kv.n_kv_heads;
  const int n_q = (it.row_end - it.row_begin) * group;  // per kv head
  const int per_row = (it.kv_end - it.kv_begin) * group;
  const std::vector<int32_t>& table = qs.block_tables[it.seq];
  // Scratch: keys [16][dk] and values [16][d] of one chunk, its scores, per query acc [d] and softmax state.
  float* keys = tile.scratch;
  float* values = keys + kKeysPerChunk * dk;
  float* scores = values + kKeysPerChunk * d;
  float* acc = scores + kKeysPerChunk;
  float* max = acc + static_cast<int64_t>(n_q) * d;  // OnlineSoftmax::m per query
  float* sum = max + n_q;                            // OnlineSoftmax::l per query

  const int32_t last = it.span_end - 1;  // the last position of the span the rows reach
  int64_t slots[kKeysPerChunk];
  for (int kv_head = it.kv_begin; kv_head < it.kv_end; ++kv_head) {
    std::fill(max, max + n_q, -std::numeric_limits<float>::infinity());
    std::fill(sum, sum + n_q, 0.0f);
    std::fill(acc, acc + static_cast<int64_t>(n_q) * d, 0.0f);
    for (int32_t first_pos = it.span_begin; first_pos <= last; first_pos += kKeysPerChunk) {
      const int n_keys = std::min(kKeysPerChunk, last + 1 - first_pos);
      chunk_slots(table, qs.block_size, first_pos, n_keys, slots);
      ops.load_rows(kv.k, kv.dtype, slots, n_keys, kv.k_row_stride, kv_head, dk, keys);
      ops.load_rows(kv.v, kv.dtype, slots, n_keys, kv.v_row_stride, kv_head, d, values);
      for (int32_t t = it.row_begin; t < it.row_end; ++t) {
        const int valid = std::min(n_keys, qs.positions[t] + 1 - first_pos);
        if (valid <= 0) continue;
        for (int g = 0; g < group; ++g) {
          const int h = kv_head * group + g;
          const float* q = qs.q + (static_cast<int64_t>(t) * qs.n_heads + h) * dk;
          const int qi = (t - it.row_begin) * group + g;
          ops.scores(q, keys, valid, dk, qs.scale, scores);
          OnlineSoftmax state{max[qi], sum[qi]};
          const float correction = ops.softmax_update(state, scores, valid);
          max[qi] = state.m, sum[qi] = state.l;
          ops.accumulate(acc + static_cast<int64_t>(qi) * d, correction, scores, values, valid, d);
        }
      }
    }
    for (int32_t t = it.row_begin; t < it.row_end; ++t)
      for (int g = 0; g < group; ++g) {
        const int qi = (t - it.row_begin) * group + g;
        float* r = tile.records +
                   (int64_t{t - it.row_begin} * per_row + (kv_head - it.kv_begin) * group + g) * span_record_floats(d);
        r[0] = max[qi], r[1] = sum[qi];
        std::copy(acc + static_cast<int64_t>(qi) * d, acc + static_cast<int64_t>(qi + 1) * d, r + 2);
      }
  }
}

namespace {

constexpr int32_t kRowsPerTile = 16;            // query rows (tokens) of one sequence per work item, at most
constexpr int32_t kQueriesPerTile = 256;        // rows x query heads of one kv head per item, at most
constexpr int kTilesPerThreadForWholeRows = 4;  // row tiles per thread from which an item takes all kv heads

// Checks every position each sequence's queries can reach against its block table.
void validate(const AttentionQueries& qs, const PagedKVLayer& kv) {
  if (qs.n_heads <= 0 || kv.n_kv_heads <= 0 || qs.n_heads % kv.n_kv_heads != 0)
    throw Error("attention: " + std::to_string(qs.n_heads) + " query heads cannot share " +
                std::to_string(kv.n_kv_heads) + " kv heads");
  if (kv.k_head_dim <= 0 || kv.v_head_dim <= 0 ||
      kv.k_row_stride < int64_t{kv.n_kv_heads} * kv.k_head_dim ||
      kv.v_row_stride < int64_t{kv.n_kv_heads} * kv.v_head_dim)
    throw Error("attention: kv head widths " + std::to_string(kv.k_head_dim) + " / " +
                std::to_string(kv.v_head_dim) + " do not fit rows of " + std::to_string(kv.k_row_stride) + " / " +
                std::to_string(kv.v_row_stride) + " elements for " + std::to_string(kv.n_kv_heads) + " kv heads");
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

namespace {

constexpr int kItemsPerThreadWithoutSplit = 4;         // from this many items per thread, spans stay together
constexpr size_t kMaxSplitFloats = size_t{8} << 20;  // span records of the splits: 32 MB at most

// Heavier items run first: the bit width of (key chunks x rows).
int32_t cost_class(int32_t key_positions, int32_t rows) {
  const auto chunks = static_cast<uint32_t>((key_positions - 1) / kKeysPerChunk + 1);
  return static_cast<int32_t>(std::bit_width(chunks * static_cast<uint32_t>(rows)));
}

// Query rows per item: fewer for wide groups (MLA's latent: 64-128 query heads
// on one kv head), so that a tile's per-query scratch stays within L2 (at 16
// rows x 128 heads it was 9 MB). A query's keys, chunks and spans do not depend
// on its tile, so neither do its results.
int32_t rows_per_tile(int group) { return std::clamp(kQueriesPerTile / group, 1, kRowsPerTile); }

// ws.items: one per (sequence, tile of `rows` rows, kv heads), covering all its spans.
// Returns the kv heads per item.
int build_items(const AttentionQueries& qs, const PagedKVLayer& kv, AttentionWorkspace& ws, int n_threads,
                int32_t rows) {
  ws.items.clear();
  // An item takes all kv heads of its rows (whose cache rows are then read
  // contiguously) when there are enough tiles to keep the threads busy, else one.
  int64_t n_tiles = 0;
  for (int32_t s = 0; s < qs.n_seqs; ++s)
    n_tiles += (qs.query_start[s + 1] - qs.query_start[s] + rows - 1) / rows;
  const int heads_per_item = n_tiles >= int64_t{kTilesPerThreadForWholeRows} * n_threads ? kv.n_kv_heads : 1;
  for (int32_t s = 0; s < qs.n_seqs; ++s)
    for (int32_t b = qs.query_start[s]; b < qs.query_start[s + 1]; b += rows) {
      const int32_t e = std::min(b + rows, qs.query_start[s + 1]);
      int32_t max_pos = 0;
      for (int32_t t = b; t < e; ++t) max_pos = std::max(max_pos, qs.positions[t]);
      for (int32_t h = 0; h < kv.n_kv_heads; h += heads_per_item)
        ws.items.push_back({s, h, h + heads_per_item, b, e, cost_class(max_pos + 1, e - b), 0, max_pos + 1, -1});
    }
  return heads_per_item;
}

int32_t span_count(const AttentionWorkspace::Item& item) { return (item.span_end - 1) / kPositionsPerSpan + 1; }

// With too few items to keep the threads busy, turns each item of several
// spans into one item per span (split-K); records go to ws.partials.
void split_spans(AttentionWorkspace& ws, int n_threads, int group, int head_dim) {
  ws.splits.clear();
  if (n_threads < 2 || ws.items.size() >= size_t{kItemsPerThreadWithoutSplit} * static_cast<size_t>(n_threads)) return;
  int64_t floats = 0;
  for (const auto& item : ws.items)
    if (span_count(item) > 1) floats += span_count(item) * item_queries(item, group) * span_record_floats(head_dim);
  if (floats == 0 || static_cast<size_t>(floats) > kMaxSplitFloats) return;
  if (ws.partials.size() < static_cast<size_t>(floats)) ws.partials.resize(static_cast<size_t>(floats));
  const size_t n_whole = ws.items.size();
  int64_t offset = 0;
  for (size_t i = 0; i < n_whole; ++i) {
    AttentionWorkspace::Item item = ws.items[i];
    const int32_t n_spans = span_count(item);
    if (n_spans == 1) continue;
    item.split = static_cast<int32_t>(ws.splits.size());
    ws.splits.push_back({offset, n_spans});
    offset += n_spans * item_queries(item, group) * span_record_floats(head_dim);
    const int32_t end = item.span_end;
    for (int32_t k = 0; k < n_spans; ++k) {
      item.span_begin = k * kPositionsPerSpan;
      item.span_end = std::min(end, item.span_begin + kPositionsPerSpan);
      item.cost_class = cost_class(item.span_end - item.span_begin, item.row_end - item.row_begin);
      if (k == 0)
        ws.items[i] = item;
      else
        ws.items.push_back(item);
    }
  }
  if (ws.pending_size < ws.splits.size()) {
    ws.pending = std::make_unique<std::atomic<int32_t>[]>(ws.splits.size());
    ws.pending_size = ws.splits.size();
  }
  for (size_t i = 0; i < ws.splits.size(); ++i) ws.pending[i].store(ws.splits[i].n_spans, std::memory_order_relaxed);
}

struct Run {
  const AttentionOps& ops;
  const AttentionQueries& qs;
  const PagedKVLayer& kv;
  AttentionWorkspace& ws;
  int group;
  float* out;
};

// One item: all its spans in turn (merged in the thread's records), or one span
// of a split, the split's last span to finish merging them all.
void run_item(const Run& r, const AttentionWorkspace::Item& item, float* scratch, AttentionWorkspace::Thread& buf) {
  const int d = r.kv.v_head_dim;
  const int64_t set = item_queries(item, r.group) * span_record_floats(d);
  if (item.split < 0) {
    float* run = buf.partials.data();
    float* span_records = run + set;
    for (int32_t b = item.span_begin; b < item.span_end; b += kPositionsPerSpan) {
      AttentionWorkspace::Item span = item;
      span.span_begin = b, span.span_end = std::min(item.span_end, b + kPositionsPerSpan);
      r.ops.tile(r.ops, {&r.qs, &r.kv, span, scratch, buf.index.data(), b == 0 ? run : span_records});
      if (b > 0) merge_span(r.qs, span, r.group, d, b, span_records, run);
    }
    finish_spans(r.qs, item, r.group, d, run, r.out);
    return;
  }
  const AttentionWorkspace::Split& split = r.ws.splits[static_cast<size_t>(item.split)];
  float* records = r.ws.partials.data() + split.offset;
  r.ops.tile(r.ops, {&r.qs, &r.kv, item, scratch, buf.index.data(),
                     records + (item.span_begin / kPositionsPerSpan) * set});
  if (r.ws.pending[static_cast<size_t>(item.split)].fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  for (int32_t k = 1; k < split.n_spans; ++k)
    merge_span(r.qs, item, r.group, d, k * kPositionsPerSpan, records + k * set, records);
  finish_spans(r.qs, item, r.group, d, records, r.out);
}

}  // namespace

void paged_attention_isa(IsaLevel level, const AttentionQueries& qs, const PagedKVLayer& kv, float* out,
                         AttentionWorkspace& ws, ThreadPool& pool) {
  validate(qs, kv);
  const int group = qs.n_heads / kv.n_kv_heads;
  const int32_t rows = rows_per_tile(group);
  const int heads_per_item = build_items(qs, kv, ws, pool.size(), rows);
  if (ws.items.empty()) return;
  split_spans(ws, pool.size(), group, kv.v_head_dim);
  // Heaviest first, by powers of two so that items of similar cost (such as a
  // batch of decode rows) keep their order, which follows the cache.
  std::sort(ws.items.begin(), ws.items.end(), [](const auto& x, const auto& y) {
    return std::tie(y.cost_class, x.seq, x.row_begin, x.kv_begin, x.span_begin) <
           std::tie(x.cost_class, y.seq, y.row_begin, y.kv_begin, y.span_begin);
  });

  const size_t scratch =
      tile_scratch_floats(rows, heads_per_item, group, kv.k_head_dim, kv.v_head_dim) +
      16;  // + room to align to 64 bytes
  const size_t index = 2 * static_cast<size_t>(rows) * static_cast<size_t>(heads_per_item * group);
  const size_t records = index * static_cast<size_t>(span_record_floats(kv.v_head_dim));  // two record sets
  ws.threads.resize(static_cast<size_t>(pool.size()));
  for (auto& t : ws.threads) {  // grow only: no allocation once warmed up
    if (t.scratch.size() < scratch) t.scratch.resize(scratch);
    if (t.index.size() < index) t.index.resize(index);
    if (t.partials.size() < records) t.partials.resize(records);
  }

  const Run run{attention_ops(level), qs, kv, ws, group, out};
  std::atomic<size_t> next{0};
  pool.run([&](int tid, int) {
    AttentionWorkspace::Thread& buf = ws.threads[static_cast<size_t>(tid)];
    const auto addr = reinterpret_cast<uintptr_t>(buf.scratch.data());
    float* aligned = buf.scratch.data() + ((64 - addr % 64) % 64) / sizeof(float);
    for (size_t i = next.fetch_add(1); i < ws.items.size(); i = next.fetch_add(1))
      run_item(run, ws.items[i], aligned, buf);
  });
}

}  // namespace db::kernels
