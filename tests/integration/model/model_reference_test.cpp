// Logits of the tiny llama / qwen2 fixtures against transformers' float32
// reference, through every format the fixtures are stored in; and what an
// int8 (Q8_0) KV cache costs against an F16 one on every tiny fixture.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "model_test_util.h"

namespace db::test {
namespace {

using Param = std::tuple<std::string, std::string, DType>;  // fixture, format, KV dtype

class ModelReferenceTest : public ::testing::TestWithParam<Param> {};

TEST_P(ModelReferenceTest, AllSequencesInOneBatchMatchReference) {
  const auto& [name, format, kv_dtype] = GetParam();
  const Fixture f = load_fixture(name);
  auto model = load_model(fixture_model_path(f, format));
  ASSERT_EQ(model->config().arch, f.arch);
  ASSERT_EQ(model->config().vocab, f.vocab);
  PagedRunner runner(*model, 16, 64, kv_dtype, 2, 7);
  const SeqLogits got = run_all_at_once(runner, f.sequences);
  const double diff = max_abs_diff(got, f.reference);
  const double tol = reference_tolerance(f, format, kv_dtype);
  std::printf("[ max diff ] %s %s kv=%s: %.3g (tolerance %.3g)\n", name.c_str(), format.c_str(),
              dtype_name(kv_dtype).c_str(), diff, tol);
  EXPECT_LT(diff, tol);
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  return std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_kv" + dtype_name(std::get<2>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ModelReferenceTest,
                         ::testing::Combine(::testing::Values("llama_tiny", "qwen2_tiny"),
                                            ::testing::Values("safetensors", "f32", "f16", "q8_0"),
                                            ::testing::Values(DType::F32, DType::F16, DType::BF16, DType::Q8_0)),
                         param_name);

// Greedy continuation of `prompt` by n tokens through a KV cache of kv_dtype.
std::vector<int32_t> greedy_tokens(Model& model, DType kv_dtype, const std::vector<int32_t>& prompt, int n) {
  PagedRunner r(model, 16, 16, kv_dtype, 2, 7);
  return greedy_decode(r, prompt, n);
}

// Top-1 agreement of two runs' logits over every position.
double top1_agreement(const SeqLogits& a, const SeqLogits& b, int vocab) {
  size_t same = 0, total = 0;
  for (size_t s = 0; s < a.size(); ++s)
    for (size_t p = 0; p + size_t(vocab) <= a[s].size(); p += size_t(vocab), ++total) {
      const auto ia = std::max_element(a[s].begin() + std::ptrdiff_t(p), a[s].begin() + std::ptrdiff_t(p) + vocab);
      const auto ib = std::max_element(b[s].begin() + std::ptrdiff_t(p), b[s].begin() + std::ptrdiff_t(p) + vocab);
      same += (ia - a[s].begin()) == (ib - b[s].begin());
    }
  return total ? double(same) / double(total) : 0.0;
}

// The accuracy cost of a Q8_0 KV cache against F16 (the README's figures): on
// the fixtures' sequences, the largest logit difference (against the largest
// |logit|) and the top-1 agreement per position; and greedy continuations of
// 48 tokens from the 9-token sequence's prompt, compared token by token.
TEST(KvQ8_0Accuracy, AgainstF16Kv) {
  constexpr int kGenerated = 48;
  for (const char* name : {"llama_tiny", "qwen2_tiny", "deepseek_v2_tiny", "deepseek_v3_tiny"}) {
    const Fixture f = load_fixture(name);
    auto model = load_model(fixture_model_path(f, "f32"));
    PagedRunner half(*model, 16, 64, DType::F16, 2, 7), int8(*model, 16, 64, DType::Q8_0, 2, 7);
    const SeqLogits a = run_all_at_once(half, f.sequences), b = run_all_at_once(int8, f.sequences);
    double scale = 0.0;
    for (const auto& rows : a)
      for (float v : rows) scale = std::max(scale, double(std::abs(v)));
    const double diff = max_abs_diff(a, b), agree = top1_agreement(a, b, f.vocab);
    const std::vector<int32_t>& prompt = f.sequences[1];
    const std::vector<int32_t> ga = greedy_tokens(*model, DType::F16, prompt, kGenerated);
    const std::vector<int32_t> gb = greedy_tokens(*model, DType::Q8_0, prompt, kGenerated);
    // For scale: how soon a BF16 cache (8 significant bits, as Q8_0's codes) departs from F16.
    const std::vector<int32_t> gc = greedy_tokens(*model, DType::BF16, prompt, kGenerated);
    const auto first_diff = std::mismatch(ga.begin(), ga.end(), gb.begin()).first - ga.begin();
    const auto first_diff_bf16 = std::mismatch(ga.begin(), ga.end(), gc.begin()).first - ga.begin();
    std::printf("[ q8_0 kv ] %s: max |logit diff| %.3g (%.2f%% of max |logit| %.3g), top-1 agreement %.1f%%, "
                "greedy: first %td of %d tokens equal (bf16 kv: %td)\n",
                name, diff, 100 * diff / scale, scale, 100 * agree, first_diff, kGenerated, first_diff_bf16);
    EXPECT_LT(diff, 1e-2 * scale) << name;
    EXPECT_GE(agree, 0.95) << name;
  }
}

}  // namespace
}  // namespace db::test
