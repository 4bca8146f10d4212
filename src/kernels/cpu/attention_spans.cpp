#include "kernels/cpu/attention_spans.h"

#include <algorithm>
#include <cmath>

namespace db::kernels {

void merge_span(const AttentionQueries& qs, const AttentionWorkspace::Item& item, int group, int head_dim,
                int32_t span_begin, const float* span, float* run) {
  const int64_t rec = span_record_floats(head_dim);
  const int per_row = (item.kv_end - item.kv_begin) * group;
  for (int32_t row = item.row_begin; row < item.row_end; ++row) {
    if (qs.positions[row] < span_begin) continue;  // its records of this span hold no keys
    for (int h = 0; h < per_row; ++h) {
      const int64_t i = int64_t{row - item.row_begin} * per_row + h;
      float* r = run + i * rec;
      const float* s = span + i * rec;
      const float m = std::max(r[0], s[0]);
      const float a = std::exp(r[0] - m), b = std::exp(s[0] - m);
      r[0] = m;
      r[1] = r[1] * a + s[1] * b;
      for (int c = 0; c < head_dim; ++c) r[2 + c] = r[2 + c] * a + s[2 + c] * b;
    }
  }
}

void finish_spans(const AttentionQueries& qs, const AttentionWorkspace::Item& item, int group, int head_dim,
                  const float* run, float* out) {
  const int64_t rec = span_record_floats(head_dim);
  const int per_row = (item.kv_end - item.kv_begin) * group;
  for (int32_t row = item.row_begin; row < item.row_end; ++row)
    for (int h = 0; h < per_row; ++h) {
      const float* r = run + (int64_t{row - item.row_begin} * per_row + h) * rec;
      const float inv_l = 1.0f / r[1];
      float* o = out + (int64_t{row} * qs.n_heads + item.kv_begin * group + h) * head_dim;
      for (int c = 0; c < head_dim; ++c) o[c] = r[2 + c] * inv_l;
    }
}

}  // namespace db::kernels
