#include "engine/moe_batch_sizing.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace db {

namespace {

int32_t pow2_ceil(double x) {
  int32_t p = 1;
  while (p < x && p < (1 << 30)) p *= 2;
  return p;
}

}  // namespace

MoeBatchChoice choose_moe_batch(const MoeBatchInputs& in) {
  MoeBatchChoice c;
  if (in.n_experts <= 0 || in.n_experts_used <= 0 || !(in.expert_bytes_per_weight > 0) ||
      !(in.read_bytes_per_s > 0) || !(in.int8_macs_per_s > 0) || in.tokens_per_sequence <= 0)
    return c;
  c.applies = true;
  c.knee_tokens_per_expert = in.expert_bytes_per_weight * in.int8_macs_per_s / in.read_bytes_per_s;
  const double seqs = kComputeMargin * c.knee_tokens_per_expert * in.n_experts / in.n_experts_used;
  c.roofline_seqs = std::clamp(pow2_ceil(seqs), kMinSeqs, kMaxSeqs);
  c.kv_seqs = pow2_ceil(std::max<double>(1, static_cast<double>(in.kv_pool_tokens) / in.tokens_per_sequence));
  c.max_num_seqs = std::max(kMinSeqs, std::min(c.roofline_seqs, c.kv_seqs));
  c.max_num_batched_tokens = std::max(kMinStepTokens, 2 * c.max_num_seqs);
  return c;
}

std::string MoeBatchChoice::describe(const MoeBatchInputs& in) const {
  char line[512];
  std::snprintf(line, sizeof line,
                "MoE batch: --max-num-seqs %d, --max-num-batched-tokens %d (%.1f tokens per routed expert at %d "
                "sequences; an expert's product turns compute-bound at %.1f: %.2f bytes/weight x %.0f GMAC/s int8 "
                "peak / %.1f GB/s read; the roofline asks %d sequences, the KV pool holds %d (rounded up) of %d tokens)",
                max_num_seqs, max_num_batched_tokens,
                static_cast<double>(max_num_seqs) * in.n_experts_used / in.n_experts, max_num_seqs,
                knee_tokens_per_expert, in.expert_bytes_per_weight, in.int8_macs_per_s / 1e9,
                in.read_bytes_per_s / 1e9, roofline_seqs, kv_seqs, in.tokens_per_sequence);
  return line;
}

}  // namespace db
