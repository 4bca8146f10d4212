#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "error_of.h"
#include "kernels/cpu/matmul_dispatch.h"
#include "kernels/matmul.h"
#include "test_weights.h"
#include "util/error.h"

namespace db::kernels {
namespace {

std::string error_of(const TensorView& w, const float* x, int64_t n, float* y) {
  ThreadPool pool(1);
  return test::error_of([&] { matmul(w, x, n, y, pool); });
}

TEST(MatmulErrors, RejectsUnsupportedDtype) {
  std::vector<uint8_t> bytes(4 * row_bytes(DType::Q2_K, 256));
  std::vector<float> x(256), y(4);
  TensorView w{DType::Q2_K, {4, 256}, bytes.data()};
  const std::string msg = error_of(w, x.data(), 1, y.data());
  EXPECT_NE(msg.find("Q2_K"), std::string::npos) << msg;
}

TEST(MatmulErrors, RejectsBadShapes) {
  std::vector<uint8_t> bytes(1024);
  std::vector<float> x(64), y(64);
  EXPECT_NE(error_of(TensorView{DType::Q4_0, {48}, bytes.data()}, x.data(), 1, y.data()).find("matrix"),
            std::string::npos);
  EXPECT_NE(error_of(TensorView{DType::Q4_0, {2, 48}, bytes.data()}, x.data(), 1, y.data()).find("block size"),
            std::string::npos);
  EXPECT_NE(error_of(TensorView{DType::Q4_0, {2, 32}, nullptr}, x.data(), 1, y.data()).find("null"),
            std::string::npos);
  EXPECT_NE(error_of(TensorView{DType::F32, {2, 8}, bytes.data()}, x.data(), -1, y.data()).find("negative"),
            std::string::npos);
}

TEST(MatmulErrors, ZeroTokensTouchesNothing) {
  const auto w = testing::make_weights(DType::Q4_1, 4, 64, 1);
  std::vector<float> y(4, 7.0f);
  ThreadPool pool(2);
  matmul(w.view(), nullptr, 0, y.data(), pool);
  for (float v : y) EXPECT_EQ(v, 7.0f);
}

TEST(Matmul, DefaultLevelIsTheSelectedIsa) {
  const auto w = testing::make_weights(DType::Q4_1, 37, 576, 5);
  const auto x = testing::make_activations(3, 576, 6);
  std::vector<float> y(3 * 37), y_isa(3 * 37);
  ThreadPool pool(2);
  matmul(w.view(), x.data(), 3, y.data(), pool);
  matmul_isa(cpu_features().level, w.view(), x.data(), 3, y_isa.data(), pool);
  EXPECT_EQ(y, y_isa);
}

TEST(Matmul, HigherRankWeightsAreFlattenedToRows) {
  const auto w = testing::make_weights(DType::Q8_0, 6, 64, 9);
  TensorView v = w.view();
  v.shape = {2, 3, 64};
  const auto x = testing::make_activations(1, 64, 2);
  std::vector<float> y(6), y2(6);
  ThreadPool pool(1);
  matmul(v, x.data(), 1, y.data(), pool);
  matmul(w.view(), x.data(), 1, y2.data(), pool);
  EXPECT_EQ(y, y2);
}

}  // namespace
}  // namespace db::kernels
