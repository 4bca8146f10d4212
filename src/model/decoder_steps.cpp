#include "model/decoder_steps.h"

#include <algorithm>

#include "kernels/cpu/rms_norm.h"
#include "kernels/cpu/rope.h"
#include "kernels/matmul.h"
#include "model/batch_check.h"
#include "util/error.h"

namespace db {

void DecoderScratch::reserve(int64_t n, int64_t n_logits, int64_t hidden, int64_t ffn_hidden, int64_t rope_pairs) {
  grow(x, n * hidden);
  grow(xn, n * hidden);
  grow(gate, n * ffn_hidden);
  grow(up, n * ffn_hidden);
  grow(final, n_logits * hidden);
  grow(rope_cos, n * rope_pairs);
  grow(rope_sin, n * rope_pairs);
}

void grow(std::vector<float>& v, int64_t n) {
  if (v.size() < static_cast<size_t>(n)) v.resize(static_cast<size_t>(n));
}

void check_kv_shape(const KVStore& kv, const KVCacheShape& want) {
  if (kv.shape() != want)
    throw Error("KV store shaped for " + kv.shape().describe() + ", model needs " + want.describe());
}

void add_rows(float* x, const float* delta, int64_t n_rows, int64_t dim, ThreadPool& pool) {
  pool.parallel_for(n_rows, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin * dim; i < end * dim; ++i) x[i] += delta[i];
  });
}

void norm_rows(const float* x, const std::vector<float>& w, int64_t n_rows, int64_t dim, float eps, float* y,
               ThreadPool& pool) {
  pool.parallel_for(n_rows, [&](int64_t begin, int64_t end) {
    kernels::rms_norm_rows(x + begin * dim, w.data(), end - begin, dim, eps, y + begin * dim);
  });
}

void add_rows_then_norm(float* x, float* delta, const std::vector<float>& w, int64_t n_rows, int64_t dim, float eps,
                        ThreadPool& pool) {
  constexpr int64_t kRowsPerPass = 4;
  pool.parallel_for(n_rows, [&](int64_t begin, int64_t end) {
    for (int64_t r0 = begin; r0 < end; r0 += kRowsPerPass) {
      const int64_t rows = std::min(kRowsPerPass, end - r0);
      float* xr = x + r0 * dim;
      float* dr = delta + r0 * dim;
      for (int64_t i = 0; i < rows * dim; ++i) xr[i] += dr[i];
      kernels::rms_norm_rows(xr, w.data(), rows, dim, eps, dr);
    }
  });
}

void add_block_output(DecoderScratch& s, const std::vector<float>* next_norm, int64_t n_rows, int64_t hidden,
                      float eps, ThreadPool& pool) {
  if (next_norm != nullptr)
    add_rows_then_norm(s.x.data(), s.xn.data(), *next_norm, n_rows, hidden, eps, pool);
  else
    add_rows(s.x.data(), s.xn.data(), n_rows, hidden, pool);
}

int64_t check_step(const Batch& batch, const AttentionMetadata& attn, const KVStore& kv, const KVCacheShape& kv_shape,
                   int vocab, std::vector<float>& logits) {
  check_kv_shape(kv, kv_shape);
  check_batch(batch, attn, kv, vocab);
  const int64_t n = batch.num_tokens();
  if (n == 0) logits.clear();
  return n;
}

void dense_feed_forward(const TensorView& gate, const TensorView& up, const TensorView& down, int64_t n_rows,
                        DecoderScratch& s, ThreadPool& pool) {
  kernels::matmul_swiglu(gate, up, s.xn.data(), n_rows, s.gate.data(), s.up.data(), pool);
  kernels::matmul(down, s.gate.data(), n_rows, s.xn.data(), pool);
}

void start_step(const Batch& batch, const TensorView& token_embd, const std::vector<float>& inv_freq, int rope_pairs,
                float mscale, const std::vector<float>& first_norm, int64_t hidden, float eps, DecoderScratch& s,
                ThreadPool& pool) {
  const int64_t n = batch.num_tokens();
  pool.parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t)
      kernels::dequantize_row(token_embd, batch.token_ids[static_cast<size_t>(t)], s.x.data() + t * hidden);
  });
  rope_tables(batch, inv_freq, rope_pairs, mscale, s, pool);
  norm_rows(s.x.data(), first_norm, n, hidden, eps, s.xn.data(), pool);
}

void rope_tables(const Batch& batch, const std::vector<float>& inv_freq, int rope_pairs, float mscale,
                 DecoderScratch& s, ThreadPool& pool) {
  pool.parallel_for(batch.num_tokens(), [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t)
      kernels::rope_angles(batch.positions[static_cast<size_t>(t)], inv_freq.data(), rope_pairs, mscale,
                           s.rope_cos.data() + t * rope_pairs, s.rope_sin.data() + t * rope_pairs);
  });
}

void project_logits(const Batch& batch, const DecoderGlobalWeights& w, int64_t hidden, int64_t vocab, float eps,
                    DecoderScratch& s, std::vector<float>& logits, ThreadPool& pool) {
  const int64_t n_logits = static_cast<int64_t>(batch.logits_indices.size());
  pool.parallel_for(n_logits, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t row = batch.logits_indices[static_cast<size_t>(i)];
      kernels::rms_norm(s.x.data() + row * hidden, w.output_norm.data(), hidden, eps, s.final.data() + i * hidden);
    }
  });
  logits.resize(static_cast<size_t>(n_logits) * static_cast<size_t>(vocab));
  if (n_logits > 0) kernels::matmul(w.output, s.final.data(), n_logits, logits.data(), pool);
}

}  // namespace db
