// The default batch of MoE models (engine/moe_batch_sizing.h): the knee where an
// expert's product turns compute-bound, the roofline's batch, the KV pool's bound.
#include <gtest/gtest.h>

#include "engine/moe_batch_sizing.h"

namespace db {
namespace {

// DeepSeek-V2-Lite's experts (64 routed, 6 per token) in Q4_0 (18 bytes per 32
// weights) on a machine reading 31.6 GB/s with a 446 GMAC/s int8 peak.
MoeBatchInputs v2_lite() {
  MoeBatchInputs in;
  in.n_experts = 64;
  in.n_experts_used = 6;
  in.expert_bytes_per_weight = 18.0 / 32;
  in.read_bytes_per_s = 31.6e9;
  in.int8_macs_per_s = 446e9;
  in.kv_pool_tokens = 1 << 20;
  in.tokens_per_sequence = 512;
  return in;
}

TEST(MoeBatchSizing, KneeIsBytesPerWeightTimesPeakOverBandwidth) {
  const MoeBatchChoice c = choose_moe_batch(v2_lite());
  ASSERT_TRUE(c.applies);
  EXPECT_NEAR(c.knee_tokens_per_expert, 0.5625 * 446 / 31.6, 1e-9);  // 7.94 tokens per expert
  // 4 x 7.94 tokens per expert x 64 / 6 = 339 sequences: the next power of two.
  EXPECT_EQ(c.roofline_seqs, 512);
  EXPECT_EQ(c.kv_seqs, 2048);  // 2^20 / 512
  EXPECT_EQ(c.max_num_seqs, 512);
  EXPECT_EQ(c.max_num_batched_tokens, 2048);
}

TEST(MoeBatchSizing, MoreExpertsPerTokenOrMoreBandwidthNeedFewerSequences) {
  MoeBatchInputs in = v2_lite();
  in.read_bytes_per_s *= 2;  // knee 3.97: 169 sequences
  EXPECT_EQ(choose_moe_batch(in).max_num_seqs, 256);
  in = v2_lite();
  in.n_experts = 256;  // DeepSeek-V3: 256 experts, 8 per token: 4 x 7.94 x 32 = 1016
  in.n_experts_used = 8;
  EXPECT_EQ(choose_moe_batch(in).roofline_seqs, 1024);
  in.n_experts = 384;  // Kimi-K2: beyond the cap
  EXPECT_EQ(choose_moe_batch(in).roofline_seqs, kMaxSeqs);
  EXPECT_EQ(choose_moe_batch(in).max_num_batched_tokens, 2 * kMaxSeqs);
}

TEST(MoeBatchSizing, TheKvPoolBoundsTheBatchButNeverBelowTheDenseDefault) {
  MoeBatchInputs in = v2_lite();
  in.kv_pool_tokens = 100000;  // 195 sequences of 512 tokens: rounded up to 256
  MoeBatchChoice c = choose_moe_batch(in);
  EXPECT_EQ(c.kv_seqs, 256);
  EXPECT_EQ(c.max_num_seqs, 256);
  in.kv_pool_tokens = 65536;  // exactly 128 sequences: 128
  c = choose_moe_batch(in);
  EXPECT_EQ(c.kv_seqs, 128);
  EXPECT_EQ(c.max_num_seqs, 128);
  in.kv_pool_tokens = 3000;  // 5.9 sequences: the dense default stands (admission keeps the pool safe)
  c = choose_moe_batch(in);
  EXPECT_EQ(c.kv_seqs, 8);
  EXPECT_EQ(c.max_num_seqs, kMinSeqs);
}

TEST(MoeBatchSizing, ADenseModelOrAMissingMeasurementKeepsTheDefaults) {
  MoeBatchInputs in = v2_lite();
  in.n_experts = 0;
  EXPECT_FALSE(choose_moe_batch(in).applies);
  in = v2_lite();
  in.int8_macs_per_s = 0;  // no int8 product on this CPU
  EXPECT_FALSE(choose_moe_batch(in).applies);
  in = v2_lite();
  in.read_bytes_per_s = 0;
  EXPECT_FALSE(choose_moe_batch(in).applies);
}

TEST(MoeBatchSizing, DescribesTheChoice) {
  const MoeBatchInputs in = v2_lite();
  const std::string line = choose_moe_batch(in).describe(in);
  EXPECT_NE(line.find("--max-num-seqs 512"), std::string::npos) << line;
  EXPECT_NE(line.find("48.0 tokens per routed expert"), std::string::npos) << line;
  EXPECT_NE(line.find("compute-bound at 7.9"), std::string::npos) << line;
}

}  // namespace
}  // namespace db
