// Router statistics of the tiny DeepSeek fixtures (3 layers, the first dense,
// 8 routed experts): after forwards of n tokens every MoE layer counts
// n * n_experts_used routed tokens and the dense layer none; dense models have
// no router; the engine publishes the counts in its stats and /metrics shows them.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <string>

#include "bundle/model_bundle.h"
#include "engine/engine.h"
#include "gguf_copy.h"
#include "model_test_util.h"
#include "scratch_dir.h"
#include "server/server_metrics.h"

namespace db::test {
namespace {

// Every MoE layer routed `tokens` tokens (n_experts_used experts each); dense layers none.
void expect_routed(const RouterStats& s, const ModelConfig& c, int64_t tokens) {
  ASSERT_EQ(s.n_layers, c.n_layers);
  ASSERT_EQ(s.n_experts, c.moe.n_experts);
  for (int layer = 0; layer < c.n_layers; ++layer) {
    const int64_t expected = c.moe.is_moe_layer(layer) ? tokens * c.moe.n_experts_used : 0;
    EXPECT_EQ(s.layer_total(layer), expected) << "layer " << layer;
  }
}

class RouterStatsFixtureTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RouterStatsFixtureTest, MoeLayersCountEveryTokensExperts) {
  const Fixture f = load_fixture(GetParam());
  auto model = load_model(fixture_model_path(f, "f32"));
  const ModelConfig& c = model->config();
  ASSERT_EQ(c.moe.leading_dense_layers, 1);
  const RouterStats* stats = model->router_stats();
  ASSERT_NE(stats, nullptr);
  EXPECT_EQ(stats->steps, 0);
  expect_routed(*stats, c, 0);

  PagedRunner runner(*model, 16, 64, DType::F32, 2, 3);
  const int a = runner.add_sequence(f.sequences[2]);  // 70 tokens
  const int b = runner.add_sequence(f.sequences[1]);  // 9 tokens
  runner.step({{a, 40}, {b, 9}});
  EXPECT_EQ(stats->steps, 1);
  expect_routed(*stats, c, 49);
  EXPECT_EQ(stats->last_imbalance[0], 0.0);
  for (int layer = 1; layer < c.n_layers; ++layer) {
    EXPECT_GE(stats->last_imbalance[static_cast<size_t>(layer)], 1.0);
    EXPECT_LE(stats->last_imbalance[static_cast<size_t>(layer)], c.moe.n_experts);
  }

  runner.step({{a, 30}});
  EXPECT_EQ(stats->steps, 2);
  expect_routed(*stats, c, 79);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, RouterStatsFixtureTest, ::testing::Values("deepseek_v2_tiny", "deepseek_v3_tiny"));

TEST(RouterStatsTest, DenseModelsHaveNoRouter) {
  for (const char* name : {"llama_tiny", "qwen2_tiny"}) {
    auto model = load_model(fixture_model_path(load_fixture(name), "f32"));
    EXPECT_EQ(model->router_stats(), nullptr) << name;
  }
}

// One request through the engine: its prompt and every sampled token but the
// last are forwarded; the engine's stats carry the counts, and /metrics renders them.
TEST(RouterStatsTest, EngineStatsAndMetricsCarryTheCounts) {
  const Fixture f = load_fixture("deepseek_v2_tiny");
  ScratchDir dir("router_stats");
  const std::string path = dir.file("with-tokenizer.gguf");
  write_with_tokenizer(fixture_model_path(f, "f32"), path);
  auto bundle = ModelBundle::open(path, 2);
  const ModelConfig& c = bundle->model().config();
  constexpr int kNew = 5;

  EngineConfig cfg;
  cfg.threads = 2;
  cfg.kv_cache_memory = 256 * 1024;
  cfg.max_num_batched_tokens = 32;  // the 70-token prompt runs in chunks
  Engine engine(*bundle, cfg);
  EXPECT_EQ(engine.stats().router.steps, 0);
  EngineRequest r;
  r.prompt = f.sequences[2];
  r.sampling.temperature = 0;
  r.max_tokens = kNew;
  r.ignore_eos = true;
  engine.submit(r, [](RequestId, const SampleOutput&, const RequestStats&, bool) {});
  engine.wait_idle();

  const EngineStats s = engine.stats();
  const int64_t forwarded = static_cast<int64_t>(f.sequences[2].size()) + kNew - 1;
  expect_routed(s.router, c, forwarded);
  EXPECT_EQ(s.router.steps, s.steps);

  server::ServerMetrics metrics("tiny");
  const std::string text = metrics.render(s);
  const auto count = [&](int layer, int expert) {
    return "deepbatch:moe_routed_tokens_total{model_name=\"tiny\",layer=\"" + std::to_string(layer) +
           "\",expert=\"" + std::to_string(expert) + "\"} " +
           std::to_string(s.router.layer_tokens(layer)[static_cast<size_t>(expert)]) + "\n";
  };
  for (int layer = 1; layer < c.n_layers; ++layer)
    for (int e = 0; e < c.moe.n_experts; ++e) EXPECT_NE(text.find(count(layer, e)), std::string::npos) << text;
  EXPECT_EQ(text.find("layer=\"0\""), std::string::npos) << text;
  EXPECT_NE(text.find("deepbatch:moe_expert_load_imbalance_max{model_name=\"tiny\"} "), std::string::npos);
}

}  // namespace
}  // namespace db::test
