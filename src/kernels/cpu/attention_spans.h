// Split-K for paged attention: a query's keys are cut into spans of
// kPositionsPerSpan positions starting at position 0; a tile kernel folds one
// span into a partial softmax record per query, and the records of a query's
// spans are merged in span order.
//
// Contract: the merge and the final normalisation live here, in one place, so
// a query's output has the same bits whether its spans were folded by one
// thread in turn or by several threads at once. With one span the output is
// acc * (1 / l), exactly what a single online-softmax pass gives.
#pragma once
#include <cstdint>

#include "kernels/cpu/attention.h"

namespace db::kernels {

constexpr int32_t kPositionsPerSpan = 256;  // a multiple of the 16-key chunk

// Floats of one query's record: [m, l, acc[0..head_dim)] (head_dim: the
// layer's v_head_dim), where m is the span's reference maximum, l = sum of
// exp(score - m) and acc = sum of exp(score - m) * value (unnormalised). Records of an item are ordered (row, kv head, head in group).
inline int64_t span_record_floats(int head_dim) { return int64_t{head_dim} + 2; }

// Queries of one record set: rows [item.row_begin, item.row_end) times the
// query heads of kv heads [item.kv_begin, item.kv_end).
inline int64_t item_queries(const AttentionWorkspace::Item& item, int group) {
  return int64_t{item.row_end - item.row_begin} * (item.kv_end - item.kv_begin) * group;
}

// Folds `span` (the records of the span starting at position span_begin > 0)
// into `run` (the merged records of all earlier spans), for the queries of
// `item` whose position reaches span_begin.
void merge_span(const AttentionQueries& qs, const AttentionWorkspace::Item& item, int group, int head_dim,
                int32_t span_begin, const float* span, float* run);

// out rows of the item's queries = acc / l of their merged records.
void finish_spans(const AttentionQueries& qs, const AttentionWorkspace::Item& item, int group, int head_dim,
                  const float* run, float* out);

}  // namespace db::kernels
