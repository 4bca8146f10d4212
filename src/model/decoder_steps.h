// The steps the decoders (model/llama_decoder.h, model/deepseek_decoder.h) run
// alike: scratch growth, the residual adds and RMSNorms between blocks, the token
// embedding, the step's RoPE tables and the final norm + logits projection; each
// parallel over rows on a ThreadPool.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/cpu/attention.h"
#include "model/batch.h"
#include "model/kv_store.h"
#include "model/weight_loading.h"
#include "tensor/tensor.h"
#include "util/thread_pool.h"

namespace db {

// The activations of one step every decoder has, reused across steps (grown, never
// shrunk); a decoder's own Scratch extends it with those of its attention.
struct DecoderScratch {
  std::vector<float> x;         // [n_tokens][hidden] residual stream
  std::vector<float> xn;        // [n_tokens][hidden] normed input / block output
  std::vector<float> gate, up;  // [n_tokens][ffn_hidden] dense FFN
  std::vector<float> final;     // [n_logits][hidden] normed rows that get logits
  std::vector<float> rope_cos;  // [n_tokens][rope_pairs] the step's RoPE factors, shared by all layers
  std::vector<float> rope_sin;  // [n_tokens][rope_pairs]
  kernels::AttentionWorkspace attention;

  void reserve(int64_t n_tokens, int64_t n_logits, int64_t hidden, int64_t ffn_hidden, int64_t rope_pairs);
};

// v.size() >= n afterwards.
void grow(std::vector<float>& v, int64_t n);

// Throws db::Error unless kv is shaped `want`.
void check_kv_shape(const KVStore& kv, const KVCacheShape& want);

// x += delta over n_rows rows of dim.
void add_rows(float* x, const float* delta, int64_t n_rows, int64_t dim, ThreadPool& pool);
// y = RMSNorm(x) * w, row by row (y may alias x).
void norm_rows(const float* x, const std::vector<float>& w, int64_t n_rows, int64_t dim, float eps, float* y,
               ThreadPool& pool);
// x += delta, then delta = the RMSNorm of x with weights w (the next block's
// input): one pass over the rows instead of two, a few rows at a time (the
// norm sums several rows at once). The same bytes as add_rows then norm_rows.
void add_rows_then_norm(float* x, float* delta, const std::vector<float>& w, int64_t n_rows, int64_t dim, float eps,
                        ThreadPool& pool);
// A block's end: s.x += s.xn, then s.xn = the next block's normed input, RMSNorm
// with next_norm (null after the last block: the add alone).
void add_block_output(DecoderScratch& s, const std::vector<float>* next_norm, int64_t n_rows, int64_t hidden,
                      float eps, ThreadPool& pool);

// A step's checks: throws db::Error unless kv is shaped `kv_shape` and the batch
// fits kv and the vocabulary; returns the batch's token count (0: logits cleared,
// nothing to run).
int64_t check_step(const Batch& batch, const AttentionMetadata& attn, const KVStore& kv, const KVCacheShape& kv_shape,
                   int vocab, std::vector<float>& logits);

// The dense SwiGLU feed-forward of a block: s.xn = down(silu(gate s.xn) * (up s.xn)).
void dense_feed_forward(const TensorView& gate, const TensorView& up, const TensorView& down, int64_t n_rows,
                        DecoderScratch& s, ThreadPool& pool);

// The step's start: s.x = the batch's token embeddings, s.rope_cos / s.rope_sin =
// the RoPE factors of its positions (rope_pairs frequencies inv_freq, times
// mscale), s.xn = RMSNorm(s.x) * first_norm (the first block's input).
void start_step(const Batch& batch, const TensorView& token_embd, const std::vector<float>& inv_freq, int rope_pairs,
                float mscale, const std::vector<float>& first_norm, int64_t hidden, float eps, DecoderScratch& s,
                ThreadPool& pool);

// s.rope_cos / s.rope_sin = the RoPE factors of the batch's positions (start_step's second part).
void rope_tables(const Batch& batch, const std::vector<float>& inv_freq, int rope_pairs, float mscale,
                 DecoderScratch& s, ThreadPool& pool);

// logits [n_logits][vocab] = output (RMSNorm(s.x row) * output_norm) for the
// rows batch.logits_indices names, in that order.
void project_logits(const Batch& batch, const DecoderGlobalWeights& w, int64_t hidden, int64_t vocab, float eps,
                    DecoderScratch& s, std::vector<float>& logits, ThreadPool& pool);

}  // namespace db
