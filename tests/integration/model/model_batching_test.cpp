// The same sequences through different batch compositions (all together, one by
// one, chunked prefill mixed with decodes), block sizes, shuffled block ids and
// thread counts: a sequence's logits must not depend on any of it.
#include <gtest/gtest.h>

#include <tuple>

#include "model_test_util.h"

namespace db::test {
namespace {

using BatchingParam = std::tuple<std::string, std::string, int, DType>;  // fixture, format, block size, KV dtype

class ModelBatchingTest : public ::testing::TestWithParam<BatchingParam> {};

TEST_P(ModelBatchingTest, ScheduleDoesNotChangeLogits) {
  const auto& [name, format, block_size, kv_dtype] = GetParam();
  const Fixture f = load_fixture(name);
  auto model = load_model(fixture_model_path(f, format));
  const int64_t blocks = 2 * 128 / block_size + 8;

  PagedRunner together(*model, block_size, blocks, kv_dtype, 2, 1);
  const SeqLogits a = run_all_at_once(together, f.sequences);
  PagedRunner alone(*model, block_size, blocks, kv_dtype, 1, 2);
  const SeqLogits b = run_one_by_one(alone, f.sequences);
  PagedRunner chunked(*model, block_size, blocks, kv_dtype, 2, 3);
  const SeqLogits c = run_chunked_mixed(chunked, f.sequences);

  const double ref_diff = max_abs_diff(a, f.reference);
  std::printf("[ max diff ] %s %s bs=%d kv=%s: vs reference %.3g, one-by-one %.3g, chunked %.3g\n", name.c_str(),
              format.c_str(), block_size, dtype_name(kv_dtype).c_str(), ref_diff, max_abs_diff(a, b),
              max_abs_diff(a, c));
  EXPECT_LT(ref_diff, reference_tolerance(f, format, kv_dtype));
  EXPECT_TRUE(bit_identical(a, b)) << "one sequence per step differs from all in one batch";
  EXPECT_TRUE(bit_identical(a, c)) << "chunked prefill + decode differs from all in one batch";
}

TEST(ModelBatchingTest, BlockSizeDoesNotChangeLogits) {
  const Fixture f = load_fixture("llama_tiny");
  auto model = load_model(fixture_model_path(f, "f32"));
  PagedRunner small(*model, 16, 24, DType::F32, 2, 4);
  PagedRunner large(*model, 64, 8, DType::F32, 2, 5);
  PagedRunner odd(*model, 24, 16, DType::F32, 2, 6);  // not a multiple of 16: whole blocks per softmax step
  const SeqLogits a = run_chunked_mixed(small, f.sequences);
  EXPECT_TRUE(bit_identical(a, run_all_at_once(large, f.sequences)));
  EXPECT_LT(max_abs_diff(a, run_all_at_once(odd, f.sequences)), 1e-5);
}

std::string batching_param_name(const ::testing::TestParamInfo<BatchingParam>& info) {
  return std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_bs" + std::to_string(std::get<2>(info.param)) +
         "_kv" + dtype_name(std::get<3>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ModelBatchingTest,
                         ::testing::Combine(::testing::Values("llama_tiny", "qwen2_tiny"),
                                            ::testing::Values("safetensors", "f32", "f16", "q8_0"),
                                            ::testing::Values(16, 64), ::testing::Values(DType::F32, DType::F16)),
                         batching_param_name);

// An int8 KV cache: each row is quantized from its own values, so the schedule
// still cannot change a bit.
INSTANTIATE_TEST_SUITE_P(KvQ8_0, ModelBatchingTest,
                         ::testing::Combine(::testing::Values("llama_tiny", "qwen2_tiny"),
                                            ::testing::Values("f32", "q8_0"), ::testing::Values(16, 64),
                                            ::testing::Values(DType::Q8_0)),
                         batching_param_name);

}  // namespace
}  // namespace db::test
