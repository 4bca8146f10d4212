#include "model/decoder_steps.h"

#include "model/batch_check.h"
#include "util/error.h"

namespace db {

void DecoderScratch::reserve(ComputeBackend& b, int64_t n, int64_t n_logits, int64_t hidden, int64_t ffn_hidden,
                             int64_t rope_pairs) {
  b.grow(x, n * hidden);
  b.grow(xn, n * hidden);
  b.grow(gate, n * ffn_hidden);
  b.grow(up, n * ffn_hidden);
  b.grow(final, n_logits * hidden);
  b.grow(rope_cos, n * rope_pairs);
  b.grow(rope_sin, n * rope_pairs);
}

void grow(std::vector<float>& v, int64_t n) {
  if (v.size() < static_cast<size_t>(n)) v.resize(static_cast<size_t>(n));
}

void prepare_global_weights(ComputeBackend& b, DecoderGlobalWeights& w) {
  w.token_embd = b.prepare_matrix(w.token_embd);
  w.output = b.prepare_matrix(w.output);
  b.prepare_vector(w.output_norm);
}

void check_kv_shape(const KVStore& kv, const KVCacheShape& want) {
  if (kv.shape() != want)
    throw Error("KV store shaped for " + kv.shape().describe() + ", model needs " + want.describe());
}

void add_block_output(ComputeBackend& b, DecoderScratch& s, const std::vector<float>* next_norm, int64_t n_rows,
                      int64_t hidden, float eps) {
  if (next_norm != nullptr)
    b.add_rows_then_norm(s.x.data(), s.xn.data(), next_norm->data(), n_rows, hidden, eps);
  else
    b.add_rows(s.x.data(), s.xn.data(), n_rows, hidden);
}

int64_t check_step(const Batch& batch, const AttentionMetadata& attn, const KVStore& kv, const KVCacheShape& kv_shape,
                   int vocab, std::vector<float>& logits) {
  check_kv_shape(kv, kv_shape);
  check_batch(batch, attn, kv, vocab);
  const int64_t n = batch.num_tokens();
  if (n == 0) logits.clear();
  return n;
}

void dense_feed_forward(ComputeBackend& b, const TensorView& gate, const TensorView& up, const TensorView& down,
                        int64_t n_rows, DecoderScratch& s) {
  b.matmul_swiglu(gate, up, s.xn.data(), n_rows, s.gate.data(), s.up.data());
  b.matmul(down, s.gate.data(), n_rows, s.xn.data());
}

void start_step(ComputeBackend& b, const Batch& batch, const TensorView& token_embd, const std::vector<float>& inv_freq,
                int rope_pairs, float mscale, const std::vector<float>& first_norm, int64_t hidden, float eps,
                DecoderScratch& s) {
  const int64_t n = batch.num_tokens();
  b.embed_rows(token_embd, batch.token_ids.data(), n, s.x.data(), hidden);
  rope_tables(b, batch, inv_freq, rope_pairs, mscale, s);
  b.norm_rows(s.x.data(), hidden, first_norm.data(), n, hidden, eps, s.xn.data(), hidden);
}

void rope_tables(ComputeBackend& b, const Batch& batch, const std::vector<float>& inv_freq, int rope_pairs,
                 float mscale, DecoderScratch& s) {
  b.rope_tables(batch.positions.data(), batch.num_tokens(), inv_freq.data(), rope_pairs, mscale, s.rope_cos.data(),
                s.rope_sin.data());
}

void project_logits(ComputeBackend& b, const Batch& batch, const DecoderGlobalWeights& w, int64_t hidden,
                    int64_t vocab, float eps, DecoderScratch& s, std::vector<float>& logits) {
  const int64_t n_logits = static_cast<int64_t>(batch.logits_indices.size());
  b.gather_rows(s.x.data(), hidden, batch.logits_indices.data(), n_logits, s.final.data());
  b.norm_rows(s.final.data(), hidden, w.output_norm.data(), n_logits, hidden, eps, s.final.data(), hidden);
  logits.resize(static_cast<size_t>(n_logits) * static_cast<size_t>(vocab));
  if (n_logits > 0) b.matmul_to_host(w.output, s.final.data(), n_logits, logits.data());
}

}  // namespace db
