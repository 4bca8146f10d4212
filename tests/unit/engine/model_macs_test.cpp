// The prior of the prefill cost: MACs per token and per context position from a
// model's configuration.
#include <gtest/gtest.h>

#include "engine/model_macs.h"

namespace db {
namespace {

ModelConfig smollm2_135m() {
  ModelConfig mc;
  mc.n_layers = 30;
  mc.hidden = 576;
  mc.n_heads = 9;
  mc.n_kv_heads = 3;
  mc.head_dim = 64;
  mc.ffn_hidden = 1536;
  return mc;
}

TEST(ModelMacs, DenseModelCountsProjectionsFeedForwardAndAttentionPerPosition) {
  const ModelMacs m = model_macs(smollm2_135m());
  // q and o 576 x 576, k and v 576 x 192, gate, up and down 576 x 1536; 30 layers.
  EXPECT_DOUBLE_EQ(m.linear_per_token, 30.0 * (2 * 576 * 576 + 2 * 576 * 192 + 3 * 576 * 1536));
  EXPECT_DOUBLE_EQ(m.attention_per_position, 30.0 * 2 * 9 * 64);  // q.k and p.v over 9 heads
  EXPECT_NEAR(prefill_cost_prior(smollm2_135m()).attention_per_position, 1152.0 / 3538944, 1e-12);
}

TEST(ModelMacs, MlaAndExpertsCountTheAbsorbedLatentAndTheChosenExperts) {
  ModelConfig mc;
  mc.n_layers = 2;
  mc.hidden = 64;
  mc.n_heads = 4;
  mc.ffn_hidden = 96;
  mc.mla.q_lora_rank = 0;
  mc.mla.kv_lora_rank = 32;
  mc.mla.qk_nope_dim = 16;
  mc.mla.qk_rope_dim = 8;
  mc.mla.v_head_dim = 16;
  mc.moe.n_experts = 8;
  mc.moe.n_experts_used = 2;
  mc.moe.n_shared_experts = 1;
  mc.moe.expert_ffn = 24;
  mc.moe.leading_dense_layers = 1;
  const ModelMacs m = model_macs(mc);
  const double attention = 64.0 * 4 * 24 + 64.0 * (32 + 8) + 4.0 * 16 * 32 + 4.0 * 32 * 16 + 4.0 * 16 * 64;
  const double dense_ffn = 3.0 * 64 * 96, moe_ffn = 64.0 * 8 + 3.0 * 64 * 24 * 3;
  EXPECT_DOUBLE_EQ(m.linear_per_token, 2 * attention + dense_ffn + moe_ffn);
  EXPECT_DOUBLE_EQ(m.attention_per_position, 2 * (4.0 * (32 + 8) + 4.0 * 32));
}

TEST(ModelMacs, AnEmptyConfigHasNoPrior) {
  EXPECT_EQ(prefill_cost_prior(ModelConfig{}).attention_per_position, 0);
}

}  // namespace
}  // namespace db
