// The DeepSeekMoE feed-forward block (DeepSeek-V2 / V3): a router picks
// MoeConfig::n_experts_used of n_experts routed experts per token and weighs
// them; the shared experts (one fused SwiGLU FFN) run on every token:
//
//   out[t] = sum_{e chosen for t} w[t, e] * expert_e(x[t])  +  shared(x[t])
//   expert(x) = down(silu(gate x) * (up x))
//
// Routing rules (those of Hugging Face transformers / DeepSeek's code, confirmed
// on the tests/data/model/deepseek_v{2,3}_tiny fixtures):
//   Softmax (V2): s = softmax(logits) over all experts; selection score c = s;
//                 a group's score is the largest c in it.
//   Sigmoid (V3): s = sigmoid(logits); selection score c = s; a group's score is
//                 the sum of its two largest c.
//   A score-correction bias (V3's e_score_correction_bias), when given, is added
//   to c (for either gating, as llama.cpp does; V2 checkpoints have none).
//   Experts form n_groups groups of n_experts / n_groups consecutive experts; only
//   the n_groups_used best groups stay eligible (no limit when n_groups_used ==
//   n_groups); the top n_experts_used eligible experts by c are chosen.
//   Weight = s (never the bias), divided by (sum of the chosen s + 1e-20) when
//   norm_weights, then multiplied by weights_scale (for either gating: as in
//   transformers and llama.cpp; DeepSeek's own V2 code skips the scale when it
//   renormalizes, which a loader can express with weights_scale = 1).
// Ties: on equal scores the lower index wins, for groups and for experts alike,
// so routing is deterministic. A NaN score counts as -infinity.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "backend/compute_backend.h"
#include "model/expert_shard.h"
#include "model/layer_profile.h"
#include "model/moe_config.h"
#include "tensor/tensor.h"
#include "util/thread_pool.h"

namespace db {

// One SwiGLU FFN: gate, up {ffn, hidden}, down {hidden, ffn}; any dtype / layout matmul takes.
struct ExpertWeights {
  TensorView gate, up, down;
};

struct MoeLayerWeights {
  std::vector<float> router;      // [n_experts][hidden] f32 (GGUF ffn_gate_inp)
  TensorView router_matrix;       // `router` as the backend's F32 matrix (prepare_moe_layer_weights)
  std::vector<float> score_bias;  // [n_experts] (GGUF exp_probs_b); empty = none
  std::vector<ExpertWeights> experts;  // n_experts routed experts: {expert_ffn, hidden} / {hidden, expert_ffn}
  // The shared experts fused into one FFN n_shared_experts * expert_ffn wide;
  // gate.data == nullptr when there are none (MoeConfig::n_shared_experts == 0).
  ExpertWeights shared;
};

// Expert e's 2-D {rows, cols} view of a stacked 3-D {n_experts, rows, cols}
// tensor (GGUF's ffn_{gate,up,down}_exps), in the stack's layout: byte offset
// e * the matrix's nbytes (Panels16: each expert's matrix packed on its own,
// tensor/panel_layout.h). Throws db::Error for another rank or a bad e.
TensorView expert_slice(const TensorView& stacked, int64_t e);

// Hands the router and every expert's matrices to the backend once
// (ComputeBackend::prepare_*), setting w.router_matrix; forward needs it.
void prepare_moe_layer_weights(ComputeBackend& b, MoeLayerWeights& w);

// Throws db::Error unless c describes a routable MoE layer: n_experts > 0,
// 0 < n_experts_used, n_groups divides n_experts, 0 < n_groups_used <= n_groups,
// n_experts_used <= the experts of n_groups_used groups, weights_scale finite.
void check_moe_config(const MoeConfig& c);

// Routes n tokens (pure; see the rules above; c must pass check_moe_config).
// router_logits: n rows of n_experts floats; score_bias: n_experts floats or
// nullptr (none). Writes each token's k = n_experts_used chosen experts to
// experts[t * k ...] in descending selection score (ties: lower index first),
// and their weights to weights[t * k ...] in the same order. A token's result
// depends only on its own logits.
void route_tokens(const MoeConfig& c, const float* router_logits, int64_t n, const float* score_bias,
                  int32_t* experts, float* weights);

// Throws db::Error unless w fits c and hidden: router and bias sizes, n_experts
// routed experts with the shapes above (their data may be null: an expert no
// token is routed to is never read), and a shared FFN exactly when
// n_shared_experts > 0, whose gate / up hold `shared_cols` of its columns (tensor
// parallel; -1: all of them) and whose down is whole.
void check_moe_layer_weights(const MoeConfig& c, int64_t hidden, const MoeLayerWeights& w, int64_t shared_cols = -1);

// Runs the block for a step's token rows; owns the scratch (grown on demand).
//
// Dispatch: the router logits (one f32 matmul, copied to the host), the routing
// (on the host pool), then per expert in
// ascending index order, for the experts at least one token chose: its tokens'
// rows are gathered contiguously, its gate/up run once over them
// (matmul_swiglu) and its down once (matmul), and weight * result is added to
// those tokens' rows of a routed sum (which starts at 0). An expert no token
// chose costs nothing. Then the shared FFN over all rows, and out = shared +
// routed sum (out = routed sum without shared experts).
//
// Deterministic and batch-invariant: a token's routed sum adds its experts'
// terms in ascending expert index, whatever else the batch holds, and the
// matmul kernels give each row the same bits at any batch size, split and
// thread count; so a token's output is bitwise the same alone or in any batch.
//
// Expert parallel (a split `shard`, model/expert_shard.h): every rank of the group
// calls forward with the same rows; each runs only its experts, the ranks exchange
// the experts' output rows, and every rank adds them as above: every rank's output
// is bitwise one process's. Experts outside the shard may have null data. The
// exchange reads and writes the backend's buffers in place (host memory on the
// CPU backend).
//
// The products, gathers and sums run through the backend passed to forward, whose
// buffers this block keeps: the same backend every call, outliving the block.
class MoeFeedForward {
 public:
  // Throws db::Error via check_moe_config. `shard`: the experts this rank runs
  // (default: one process, every expert).
  MoeFeedForward(const MoeConfig& c, int64_t hidden, ExpertShard shard = {});

  // out[t] = the block's output for xn[t] (the FFN-normed hidden state), t < n;
  // xn and out are n rows of hidden floats in b's memory; out may alias xn (xn is
  // read in full before out is written). Checks w with check_moe_layer_weights
  // and throws db::Error unless it was prepared. Routing runs on `pool`, which
  // becomes b's host pool.
  // With a profile, the router, the routed experts and the shared experts are
  // timed into row `row` of it (model/layer_profile.h); null: nothing is timed.
  void forward(const MoeLayerWeights& w, const float* xn, int64_t n, float* out, ComputeBackend& b, ThreadPool& pool,
               LayerProfile* profile = nullptr, int row = 0);

  // Tensor parallel (model/mla_shard.h): the shared experts' gate / up hold `cols`
  // of their columns and down is whole; `join` turns this rank's [n][cols] SwiGLU
  // activations into the whole [n][n_shared_experts * expert_ffn] rows (all-gathered
  // over the group) that down reads. Without one the shared experts are whole.
  using ColumnJoin = std::function<const float*(const float* part, int64_t n)>;
  void set_shared_join(int64_t cols, ColumnJoin join);

  const MoeConfig& config() const { return c_; }
  int64_t hidden() const { return hidden_; }

  const ExpertShard& shard() const { return shard_; }

  // Router statistics of the last forward (all zero / empty before one):
  // tokens routed to each expert ([n_experts], summing to n * n_experts_used;
  // every expert's, split or not: every rank routes every token, so this rank's
  // load is the counts of the experts in shard()),
  // and each token's chosen experts and weights ([n][n_experts_used], as route_tokens).
  const std::vector<int64_t>& tokens_per_expert() const { return tokens_per_expert_; }
  int64_t last_tokens() const { return last_n_; }
  const int32_t* last_experts() const { return experts_.data(); }
  const float* last_weights() const { return weights_.data(); }

 private:
  void reserve(ComputeBackend& b, int64_t n);
  // Expert e's unweighted outputs for its tokens (tokens_per_expert_[e] rows, in
  // assignment order) into y.
  void run_expert(ComputeBackend& b, const ExpertWeights& x, int64_t e, const float* xn, float* y);
  // routed_[t] += weight * y row, for expert e's tokens t (y as run_expert writes it).
  void add_weighted(ComputeBackend& b, int64_t e, const float* y);

  MoeConfig c_;
  int64_t hidden_;
  ExpertShard shard_;
  int64_t last_n_ = 0;
  std::vector<int64_t> tokens_per_expert_;
  std::vector<int64_t> expert_begin_;  // [n_experts + 1] offsets into assignment_
  std::vector<int64_t> assignment_;    // token * k + slot, grouped by expert, tokens ascending
  std::vector<int32_t> rows_;          // assignment_'s tokens
  std::vector<float> row_weights_;     // assignment_'s weights
  std::vector<float> host_logits_;     // [n][n_experts]
  std::vector<int32_t> experts_;       // [n][k]
  std::vector<float> weights_;         // [n][k]
  // In the backend's memory:
  DeviceBuffer logits_;                // [n][n_experts]
  DeviceBuffer routed_;                // [n][hidden] routed sum
  DeviceBuffer xg_, yg_;               // [n][hidden] one expert's gathered inputs / outputs
  DeviceBuffer hg_, ug_;               // [n][max(expert_ffn, shared ffn)] SwiGLU out / up scratch
  DeviceBuffer mine_, all_;            // split: this rank's / every rank's expert rows [rows][hidden]
  std::vector<std::byte> send_;        // split: the exchange's send buffer
  int64_t shared_cols_ = -1;           // set_shared_join's
  ColumnJoin shared_join_;
};

}  // namespace db
