// The fixtures through the CUDA backend (--device cuda): logits within the fixture's
// reference tolerance, and each sequence's logits bit-identical whether it runs alone
// or in a batch of 16 (greedy tokens cannot differ). Skipped, saying why, where this
// build or machine has no CUDA device.
#include <gtest/gtest.h>

#include <tuple>

#include "backend/backend_device.h"
#include "model_test_util.h"

namespace db::test {
namespace {

using CudaParam = std::tuple<std::string, std::string, DType>;  // fixture, format, KV dtype

class CudaModelTest : public ::testing::TestWithParam<CudaParam> {};

TEST_P(CudaModelTest, MatchesTheReferenceAndIsBatchInvariant) {
  const std::string why = device_unavailable_reason(Device::Cuda);
  if (!why.empty()) GTEST_SKIP() << why;
  const auto& [name, format, kv_dtype] = GetParam();
  const Fixture f = load_fixture(name);
  LoadOptions on_device;
  on_device.device = Device::Cuda;
  auto model = load_model(fixture_model_path(f, format), nullptr, on_device);
  ASSERT_NE(model->kv_memory(), nullptr);

  PagedRunner reference_run(*model, 16, 2 * 128 / 16 + 8, kv_dtype, 2, 1);
  const double ref_diff = max_abs_diff(run_all_at_once(reference_run, f.sequences), f.reference);
  const std::vector<std::vector<int32_t>> seqs = patterned_sequences(f.vocab, 16, 5, 3);
  PagedRunner together(*model, 16, 16 * 4 + 8, kv_dtype, 2, 2);
  const SeqLogits a = run_all_at_once(together, seqs);
  PagedRunner alone(*model, 16, 16 * 4 + 8, kv_dtype, 1, 3);
  const SeqLogits b = run_one_by_one(alone, seqs);
  PagedRunner chunked(*model, 16, 16 * 4 + 8, kv_dtype, 2, 4);
  const SeqLogits c = run_chunked_mixed(chunked, seqs);
  std::printf("[ cuda ] %s %s kv=%s: vs reference %.3g, one-by-one %.3g, chunked %.3g\n", name.c_str(),
              format.c_str(), dtype_name(kv_dtype).c_str(), ref_diff, max_abs_diff(a, b), max_abs_diff(a, c));
  EXPECT_LT(ref_diff, reference_tolerance(f, format, kv_dtype));
  EXPECT_TRUE(bit_identical(a, b)) << "one sequence per step differs from 16 in one batch";
  EXPECT_TRUE(bit_identical(a, c)) << "chunked prefill + decode differs from 16 in one batch";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CudaModelTest,
                         ::testing::Values(CudaParam{"llama_tiny", "f32", DType::F32},
                                           CudaParam{"llama_tiny", "f16", DType::F16},
                                           CudaParam{"llama_tiny", "q8_0", DType::Q8_0},
                                           CudaParam{"qwen2_tiny", "f16", DType::F16},
                                           CudaParam{"deepseek_v2_tiny", "f32", DType::F16},
                                           CudaParam{"deepseek_v3_tiny", "f32", DType::F16}),
                         [](const ::testing::TestParamInfo<CudaParam>& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_kv" +
                                  dtype_name(std::get<2>(info.param));
                         });

}  // namespace
}  // namespace db::test
