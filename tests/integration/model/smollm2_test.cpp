// The default model (SmolLM2-135M-Instruct, Q4_1): logits against transformers
// on the same weights, a greedy answer, and the same answer whatever else
// shares its batches.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "default_model.h"
#include "model_test_util.h"

namespace db::test {
namespace {

struct SmolReference {
  std::vector<int32_t> prompt, greedy;
  std::vector<int32_t> top_ids;
  std::vector<float> top_logits;
};

SmolReference load_reference() {
  std::ifstream in(std::string(DB_TEST_DATA) + "/model/smollm2_reference.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  SmolReference r;
  r.prompt = j.at("prompt").get<std::vector<int32_t>>();
  r.greedy = j.at("greedy").get<std::vector<int32_t>>();
  r.top_ids = j.at("prompt_top_logits").at("ids").get<std::vector<int32_t>>();
  r.top_logits = j.at("prompt_top_logits").at("logits").get<std::vector<float>>();
  return r;
}

// Opens the default model for DefaultModelSuite.
struct ModelOpener {
  static std::unique_ptr<Model> open(const std::string& path) { return load_model(path); }
};

class SmolLM2Test : public DefaultModelSuite<Model, ModelOpener> {};

TEST_F(SmolLM2Test, ConfigFromGGUF) {
  const ModelConfig& c = model_->config();
  EXPECT_EQ(c.arch, "llama");
  EXPECT_EQ(c.n_layers, 30);
  EXPECT_EQ(c.hidden, 576);
  EXPECT_EQ(c.n_heads, 9);
  EXPECT_EQ(c.n_kv_heads, 3);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_EQ(c.vocab, 49152);
  EXPECT_TRUE(c.tied_embeddings);
  EXPECT_EQ(c.rope_style, kernels::RopeStyle::INTERLEAVED);
}

TEST_F(SmolLM2Test, PromptLogitsCloseToTransformers) {
  const SmolReference ref = load_reference();
  PagedRunner r(*model_, 16, 8, DType::F16, 2, 11);
  const int id = r.add_sequence(ref.prompt);
  r.step({{id, static_cast<int>(ref.prompt.size())}});
  const std::vector<float>& l = r.logits(id);
  for (float v : l) ASSERT_TRUE(std::isfinite(v));
  const float* last = l.data() + (ref.prompt.size() - 1) * static_cast<size_t>(model_->config().vocab);
  double max_diff = 0.0;
  for (size_t i = 0; i < ref.top_ids.size(); ++i)
    max_diff = std::max(max_diff, std::abs(static_cast<double>(last[ref.top_ids[i]]) - ref.top_logits[i]));
  std::printf("[ max diff ] SmolLM2 Q4_1, 32 largest logits after the prompt: %.3g\n", max_diff);
  // Transformers runs the dequantized weights in f32; the Q4_1 kernels also round
  // activations to 8 bits, over 30 layers.
  EXPECT_LT(max_diff, 1.0);
  EXPECT_EQ(std::max_element(last, last + model_->config().vocab) - last, ref.greedy[0]);
}

// Greedy decoding of `prompt` for n tokens, alone in its batches.
std::vector<int32_t> greedy_alone(Model& m, const std::vector<int32_t>& prompt, int n, SeqLogits& logits) {
  PagedRunner r(m, 16, 8, DType::F16, 2, 21);
  int id = 0;
  std::vector<int32_t> out = greedy_decode(r, prompt, n, &id);
  logits = {r.logits(id)};
  return out;
}

TEST_F(SmolLM2Test, GreedyAnswerMatchesTransformers) {
  const SmolReference ref = load_reference();
  SeqLogits logits;
  const std::vector<int32_t> got = greedy_alone(*model_, ref.prompt, 8, logits);
  // "The capital of France is Paris.<|im_end|>": every step has a clear top-1 margin.
  EXPECT_EQ(got, std::vector<int32_t>(ref.greedy.begin(), ref.greedy.begin() + 8));
}

TEST_F(SmolLM2Test, GreedyIsIndependentOfBatchComposition) {
  const SmolReference ref = load_reference();
  constexpr int kSteps = 10;
  SeqLogits alone_logits;
  const std::vector<int32_t> alone = greedy_alone(*model_, ref.prompt, kSteps, alone_logits);

  // Same request, block size 64 and shuffled blocks, sharing every step with
  // other sequences: one prefilling in chunks while it decodes, one decoding.
  PagedRunner r(*model_, 64, 8, DType::F16, 2, 31);
  const int other = r.add_sequence({1, 504, 3575, 282, 4649, 314});
  std::vector<int32_t> long_prompt;
  for (int i = 0; i < 45; ++i) long_prompt.push_back(100 + 37 * i);
  const int late = r.add_sequence(long_prompt);
  const int id = r.add_sequence(ref.prompt);
  r.step({{other, 6}});
  r.append(other, r.greedy_next(other));
  r.step({{id, 5}, {other, 1}});
  r.append(other, r.greedy_next(other));
  r.step({{other, 1}, {id, static_cast<int>(ref.prompt.size()) - 5}, {late, 9}});
  std::vector<int32_t> batched;
  for (int i = 0; i < kSteps; ++i) {
    batched.push_back(r.greedy_next(id));
    if (i + 1 == kSteps) break;
    r.append(id, batched.back());
    r.append(other, r.greedy_next(other));
    std::vector<std::pair<int, int>> chunks = {{id, 1}, {other, 1}};
    const int late_chunk = std::min(12, static_cast<int>(long_prompt.size()) - r.fed(late));
    if (late_chunk > 0) chunks.insert(chunks.begin() + (i % 2), {late, late_chunk});
    r.step(chunks);
  }
  EXPECT_EQ(batched, alone);
  EXPECT_TRUE(bit_identical({r.logits(id)}, alone_logits)) << "max diff " << max_abs_diff({r.logits(id)}, alone_logits);
}

}  // namespace
}  // namespace db::test
