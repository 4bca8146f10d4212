// Logits of the tiny llama / qwen2 fixtures against transformers' float32
// reference, through every format the fixtures are stored in.
#include <gtest/gtest.h>

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
                                            ::testing::Values(DType::F32, DType::F16, DType::BF16)),
                         param_name);

}  // namespace
}  // namespace db::test
