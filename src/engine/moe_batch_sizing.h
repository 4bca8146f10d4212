// Default batch limits for mixture-of-experts models.
//
// A decode step of B sequences sends B x n_experts_used / n_experts tokens to each
// routed expert, on average. An expert's matrices are read once per step whatever
// its tokens, so at t tokens per expert the product does t multiply-adds per weight
// read: it is bound by memory below the knee
//
//   t* = (bytes per weight) x (int8 multiply-adds per second) / (bytes read per second)
//
// and by compute above it. A dense model's default of 64 sequences leaves an MoE
// model far below it (DeepSeek-V2-Lite: 6 tokens per expert; V3: 2), where the
// quantized products run at a fraction of their rate. The rule:
//
//   roofline_seqs = B at which each expert sees kComputeMargin x t* tokens (reads
//                   are then at most 1 / kComputeMargin of the products' time, and
//                   the panel kernels' rate has levelled off), rounded up to a power
//                   of two, within [kMinSeqs, kMaxSeqs];
//   kv_seqs       = the sequences the KV pool holds at tokens_per_sequence each (the
//                   admission headroom), rounded up to a power of two: admission
//                   reserves each sequence's blocks and holds back what does not fit,
//                   so a cap above what the pool holds at full reservations costs
//                   nothing when requests are long and lets short ones fill the pool
//                   (rounding down halved the batch for a pool of 1.6 x 128 sequences);
//   max_num_seqs  = max(kMinSeqs, min(roofline_seqs, kv_seqs));
//   max_num_batched_tokens = max(kMinStepTokens, 2 x max_num_seqs): a step carries
//                   every running decode and as many prompt tokens.
//
// Dense models, and an MoE model without a measured bandwidth or peak, keep the
// configured defaults.
#pragma once
#include <cstdint>
#include <string>

namespace db {

struct MoeBatchInputs {
  int32_t n_experts = 0;            // routed experts per MoE layer (0: a dense model)
  int32_t n_experts_used = 0;       // routed experts per token
  double expert_bytes_per_weight = 0;  // bytes of a routed expert's matrices per weight, as stored
  double read_bytes_per_s = 0;      // the machine's read bandwidth (the roofline gauge's reference)
  double int8_macs_per_s = 0;       // the machine's int8 dot-product peak, all threads
  int64_t kv_pool_tokens = 0;       // tokens the KV pool holds
  int32_t tokens_per_sequence = 0;  // KV tokens a running sequence is sized for (> 0)
};

struct MoeBatchChoice {
  bool applies = false;               // an MoE model with its inputs measured: the fields below hold
  double knee_tokens_per_expert = 0;  // t* above
  int32_t roofline_seqs = 0, kv_seqs = 0;
  int32_t max_num_seqs = 0, max_num_batched_tokens = 0;
  // One line for the start-up log: the choice and where it came from.
  std::string describe(const MoeBatchInputs& in) const;
};

inline constexpr double kComputeMargin = 4;
inline constexpr int32_t kMinSeqs = 64, kMaxSeqs = 1024, kMinStepTokens = 2048;

MoeBatchChoice choose_moe_batch(const MoeBatchInputs& in);

}  // namespace db
