// The steps the decoders (model/llama_decoder.h, model/deepseek_decoder.h) run
// alike: scratch growth, the residual adds and RMSNorms between blocks, the token
// embedding, the step's RoPE tables and the final norm + logits projection; each
// through the decoder's compute backend (backend/compute_backend.h).
#pragma once
#include <cstdint>
#include <vector>

#include "backend/compute_backend.h"
#include "model/batch.h"
#include "model/kv_store.h"
#include "model/weight_loading.h"
#include "tensor/tensor.h"

namespace db {

// The activations of one step every decoder has, in the backend's memory,
// reused across steps (grown, never shrunk); a decoder's own Scratch extends it
// with those of its attention.
struct DecoderScratch {
  DeviceBuffer x;         // [n_tokens][hidden] residual stream
  DeviceBuffer xn;        // [n_tokens][hidden] normed input / block output
  DeviceBuffer gate, up;  // [n_tokens][ffn_hidden] dense FFN
  DeviceBuffer final;     // [n_logits][hidden] normed rows that get logits
  DeviceBuffer rope_cos;  // [n_tokens][rope_pairs] the step's RoPE factors, shared by all layers
  DeviceBuffer rope_sin;  // [n_tokens][rope_pairs]

  void reserve(ComputeBackend& b, int64_t n_tokens, int64_t n_logits, int64_t hidden, int64_t ffn_hidden,
               int64_t rope_pairs);
};

// v.size() >= n afterwards.
void grow(std::vector<float>& v, int64_t n);

// Hands the embedding, output norm and output head to the backend (ComputeBackend::prepare_*).
void prepare_global_weights(ComputeBackend& b, DecoderGlobalWeights& w);

// Throws db::Error unless kv is shaped `want`.
void check_kv_shape(const KVStore& kv, const KVCacheShape& want);

// A block's end: s.x += s.xn, then s.xn = the next block's normed input, RMSNorm
// with next_norm (null after the last block: the add alone).
void add_block_output(ComputeBackend& b, DecoderScratch& s, const std::vector<float>* next_norm, int64_t n_rows,
                      int64_t hidden, float eps);

// A step's checks: throws db::Error unless kv is shaped `kv_shape` and the batch
// fits kv and the vocabulary; returns the batch's token count (0: logits cleared,
// nothing to run).
int64_t check_step(const Batch& batch, const AttentionMetadata& attn, const KVStore& kv, const KVCacheShape& kv_shape,
                   int vocab, std::vector<float>& logits);

// The dense SwiGLU feed-forward of a block: s.xn = down(silu(gate s.xn) * (up s.xn)).
void dense_feed_forward(ComputeBackend& b, const TensorView& gate, const TensorView& up, const TensorView& down,
                        int64_t n_rows, DecoderScratch& s);

// The step's start: s.x = the batch's token embeddings, s.rope_cos / s.rope_sin =
// the RoPE factors of its positions (rope_pairs frequencies inv_freq, times
// mscale), s.xn = RMSNorm(s.x) * first_norm (the first block's input).
void start_step(ComputeBackend& b, const Batch& batch, const TensorView& token_embd, const std::vector<float>& inv_freq,
                int rope_pairs, float mscale, const std::vector<float>& first_norm, int64_t hidden, float eps,
                DecoderScratch& s);

// s.rope_cos / s.rope_sin = the RoPE factors of the batch's positions (start_step's second part).
void rope_tables(ComputeBackend& b, const Batch& batch, const std::vector<float>& inv_freq, int rope_pairs,
                 float mscale, DecoderScratch& s);

// logits [n_logits][vocab] (host memory) = output (RMSNorm(s.x row) * output_norm)
// for the rows batch.logits_indices names, in that order.
void project_logits(ComputeBackend& b, const Batch& batch, const DecoderGlobalWeights& w, int64_t hidden,
                    int64_t vocab, float eps, DecoderScratch& s, std::vector<float>& logits);

}  // namespace db
