// The CUDA kernels' decoding of weight blocks and KV cache elements
// (kernels/cuda/block_decode.h), compiled for the host and checked against the CPU's
// dequantize_row_data: this part of the kernels is verified without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/cuda/block_decode.h"
#include "kernels/dequantize.h"
#include "kernels/quantize.h"
#include "kernels/quantize_k.h"
#include "tensor/dtype.h"
#include "tensor/kv_row_bytes.h"
#include "util/fp16.h"
#include "util/random.h"

namespace db::kernels::cuda {
namespace {

std::vector<float> normal_floats(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(rng.normal());
  return v;
}

TEST(CudaBlockDecode, HalfAndBf16BitsDecodeAsTheCpuDoes) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float want = fp16_to_f32(static_cast<uint16_t>(h)), got = half_bits_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(want))
      ASSERT_TRUE(std::isnan(got)) << h;
    else
      ASSERT_EQ(f32_bits(got), f32_bits(want)) << h;
    ASSERT_EQ(f32_bits(bf16_bits_to_f32(static_cast<uint16_t>(h))), f32_bits(bf16_to_f32(static_cast<uint16_t>(h))));
  }
}

template <DType T>
void expect_units_match(int64_t n) {
  const std::vector<float> x = normal_floats(n, 21);
  std::vector<uint8_t> stored(row_bytes(T, n));
  if constexpr (T == DType::Q4_K) {
    quantize_row_q4_k(x.data(), reinterpret_cast<BlockQ4_K*>(stored.data()), n);
  } else if constexpr (T == DType::Q6_K) {  // no Q6_K quantizer: random codes and scales, a fixed d
    Rng rng(23);
    for (uint8_t& byte : stored) byte = static_cast<uint8_t>(rng.next());
    for (size_t b = 0; b < stored.size(); b += sizeof(BlockQ6_K)) {
      stored[b + 208] = 0x66;  // d = fp16 0x2E66, about 0.1
      stored[b + 209] = 0x2E;
    }
  } else {
    quantize_row(T, x.data(), stored.data(), n);
  }
  std::vector<float> want(n), got(n);
  dequantize_row_data(T, stored.data(), want.data(), n);
  for (int64_t u = 0; u < n / 32; ++u)
    for (int i = 0; i < 32; ++i) got[32 * u + i] = load_weight<T>(stored.data(), u, i);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], want[i]) << dtype_name(T) << " element " << i;
}

TEST(CudaBlockDecode, WeightsMatchDequantizeRowData) {
  expect_units_match<DType::F16>(512);
  expect_units_match<DType::BF16>(512);
  expect_units_match<DType::Q8_0>(512);
  expect_units_match<DType::Q4_0>(512);
  expect_units_match<DType::Q4_K>(1024);  // four super-blocks: every sub-block's scale packing
  expect_units_match<DType::Q6_K>(1024);  // every quarter of both halves of four super-blocks
}

template <DType T>
void expect_kv_elements_match(int64_t n) {
  const std::vector<float> x = normal_floats(n, 22);
  std::vector<uint8_t> row(kv_row_bytes(T, n));
  const int64_t padded = T == DType::Q8_0 ? (n + 31) / 32 * 32 : n;
  std::vector<float> padded_x(x);
  padded_x.resize(padded, 0.0f);
  quantize_row(T, padded_x.data(), row.data(), padded);
  std::vector<float> want(padded);
  dequantize_row_data(T, row.data(), want.data(), padded);
  for (int64_t e = 0; e < n; ++e) ASSERT_EQ(load_element<T>(row.data(), e), want[e]) << dtype_name(T) << " " << e;
}

TEST(CudaBlockDecode, KvElementsMatchDequantizeRowData) {
  expect_kv_elements_match<DType::F32>(80);
  expect_kv_elements_match<DType::F16>(80);
  expect_kv_elements_match<DType::BF16>(80);
  expect_kv_elements_match<DType::Q8_0>(80);  // a row of 2.5 blocks, the last padded
}

}  // namespace
}  // namespace db::kernels::cuda
