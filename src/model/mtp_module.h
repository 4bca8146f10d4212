// DeepSeek-V3's multi-token-prediction (MTP) module as a drafter: one extra
// transformer block that predicts the token after next from the target's
// hidden state and the next token's embedding.
//
// For a sequence t_0 .. t_L, entry j (position j) combines the target's final
// hidden state h_j (which predicted t_{j+1}) with t_{j+1}:
//   x_j   = eh_proj [enorm(embed(t_{j+1})) | hnorm(h_j)]
//   m_j   = block(x_j)       (MLA over the module's own KV cache of entries <= j, then MoE)
//   logits = shared_head(shared_head_norm(m_j))   -> a guess of t_{j+2}
// h_j is taken after the model's output norm, the rows its head multiplies (as
// vLLM feeds its MTP drafter). Further drafts chain: m_j stands in for the
// target's hidden state of the drafted token at position j + 1.
#pragma once
#include <cstdint>
#include <vector>

#include "model/batch.h"
#include "model/kv_store.h"
#include "util/thread_pool.h"

namespace db {

class MtpModule {
 public:
  virtual ~MtpModule() = default;
  // One layer's latent cache per token; its KV stores are built from it.
  virtual KVCacheShape kv_cache_shape() const = 0;
  virtual int64_t hidden_size() const = 0;
  // Computes entries for every token of `batch`: batch.token_ids[t] is t_{j+1}
  // and batch.positions[t] is j, whose hidden state is row t of `hidden_in`
  // ([num_tokens][hidden]). Writes their K/V to attn.slot_mapping and the block
  // outputs m_j to `hidden_out` (resized). batch.logits_indices is ignored.
  // Shares the model's scratch: not concurrent with forward(); invalidates
  // Model::last_hidden_states().
  virtual void forward(const Batch& batch, const AttentionMetadata& attn, KVStore& kv, const float* hidden_in,
                       ThreadPool& pool, std::vector<float>& hidden_out) = 0;
  // logits [n][vocab] of n block outputs (shared head).
  virtual void project(const float* hidden, int64_t n, ThreadPool& pool, std::vector<float>& logits) = 0;
};

}  // namespace db
