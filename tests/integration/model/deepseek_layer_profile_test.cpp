// DB_PROFILE_LAYERS on the tiny DeepSeek-V3 fixture (layer 0 dense, layers 1-2
// MoE with a shared expert): off unless asked for, and when on every block of
// every layer is timed where it belongs, the blocks cover the step, and the
// logits are those of an unprofiled run.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "model/deepseek_decoder.h"
#include "model/layer_profile.h"
#include "model_test_util.h"

namespace db::test {
namespace {

// Sets (value != nullptr) or unsets an environment variable for a scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value) ::setenv(name, value, 1); else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_) ::setenv(name_, old_.c_str(), 1); else ::unsetenv(name_);
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

constexpr int kNewTokens = 24;  // greedy steps: 1 prompt step, then kNewTokens - 1 decode steps of 1 token

TEST(DeepseekLayerProfileTest, OffByDefault) {
  ScopedEnv env("DB_PROFILE_LAYERS", nullptr);
  const Fixture f = load_fixture("deepseek_v3_tiny");
  auto model = load_model(fixture_model_path(f, "f32"));
  auto* decoder = dynamic_cast<DeepseekDecoder*>(model.get());
  ASSERT_NE(decoder, nullptr);
  EXPECT_EQ(decoder->layer_profile(), nullptr);
}

TEST(DeepseekLayerProfileTest, TimesEveryBlockWhereItBelongs) {
  const Fixture f = load_fixture("deepseek_v3_tiny");
  const std::vector<int32_t>& prompt = f.sequences.back();  // 70 tokens: a prompt step unlike the decode steps
  ASSERT_GT(prompt.size(), 1u);
  std::vector<float> plain_logits;
  {
    ScopedEnv env("DB_PROFILE_LAYERS", nullptr);
    auto model = load_model(fixture_model_path(f, "f32"));
    PagedRunner r(*model, 16, 64, DType::F32, 2, 7);
    int seq = 0;
    greedy_decode(r, prompt, kNewTokens, &seq);
    plain_logits = r.logits(seq);
  }
  ScopedEnv env("DB_PROFILE_LAYERS", "1");
  auto model = load_model(fixture_model_path(f, "f32"));
  auto* decoder = dynamic_cast<DeepseekDecoder*>(model.get());
  ASSERT_NE(decoder, nullptr);
  ASSERT_NE(decoder->layer_profile(), nullptr);
  PagedRunner r(*model, 16, 64, DType::F32, 2, 7);
  int seq = 0;
  greedy_decode(r, prompt, kNewTokens, &seq);
  EXPECT_EQ(r.logits(seq), plain_logits);  // timing changes no bit

  const LayerProfile& p = *decoder->layer_profile();
  ASSERT_EQ(p.n_layers(), 3);
  ASSERT_EQ(p.groups().size(), 2u);
  const LayerProfile::Group& pre = p.groups()[0];
  EXPECT_EQ(pre.tokens, static_cast<int64_t>(prompt.size()));
  EXPECT_EQ(pre.seqs, 1);
  EXPECT_EQ(pre.steps, 1);
  const LayerProfile::Group& dec = p.groups()[1];
  EXPECT_EQ(dec.tokens, 1);
  EXPECT_EQ(dec.seqs, 1);
  EXPECT_EQ(dec.steps, kNewTokens - 1);

  for (const LayerProfile::Group* g : {&pre, &dec}) {
    for (int layer = 0; layer < 3; ++layer) {
      const bool moe = layer > 0;
      SCOPED_TRACE("tokens " + std::to_string(g->tokens) + " layer " + std::to_string(layer));
      for (LayerBlock b : {LayerBlock::AttnQkv, LayerBlock::AttnAbsorb, LayerBlock::AttnCore, LayerBlock::AttnOut})
        EXPECT_GT(g->at(layer, b), 0.0) << layer_block_name(b);
      for (LayerBlock b : {LayerBlock::Router, LayerBlock::Experts, LayerBlock::Shared})
        EXPECT_EQ(g->at(layer, b) > 0.0, moe) << layer_block_name(b);
      EXPECT_EQ(g->at(layer, LayerBlock::DenseFfn) > 0.0, !moe);
      EXPECT_EQ(g->at(layer, LayerBlock::Embed), 0.0);
      EXPECT_EQ(g->at(layer, LayerBlock::Head), 0.0);
    }
    EXPECT_GT(g->at(p.step_row(), LayerBlock::Embed), 0.0);
    EXPECT_GT(g->at(p.step_row(), LayerBlock::Head), 0.0);
    EXPECT_EQ(g->at(p.step_row(), LayerBlock::AttnCore), 0.0);
  }
  // The blocks lie inside the step and cover most of it (what is left is the
  // step's checks and scratch sizing). Decode steps: the prompt step also grows
  // the scratch buffers, outside any block.
  EXPECT_LE(dec.total(), dec.step_seconds);
  EXPECT_GE(dec.total(), 0.5 * dec.step_seconds) << p.table();
  EXPECT_NE(p.table().find(std::to_string(kNewTokens - 1) + " steps of 1 tokens in 1 sequences"), std::string::npos);
}

}  // namespace
}  // namespace db::test
