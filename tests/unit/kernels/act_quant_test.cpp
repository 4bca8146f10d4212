// The activation quantizers: every ISA variant must produce the same bytes as
// the scalar reference, and the reference must reconstruct x within d / 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/matmul_dispatch.h"
#include "util/fp16.h"

namespace db::kernels {
namespace {

std::vector<float> activations(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = normal(rng);
  for (int64_t i = 0; i < std::min<int64_t>(n, 32); ++i) x[static_cast<size_t>(i)] = 0.0f;  // zero block
  if (n > 40) x[40] = 25.0f;                                                                  // outlier
  for (int64_t i = 64; i < std::min<int64_t>(n, 96); ++i) x[static_cast<size_t>(i)] = 0.5f;  // exact ties
  return x;
}

struct Q8 {
  std::vector<int8_t> qs;
  std::vector<float> d, ds;
  std::vector<int32_t> zsum;
  std::vector<int16_t> bsums;
};

Q8 quantize(const GemmKernels& k, int block, const std::vector<float>& x) {
  const int64_t n = static_cast<int64_t>(x.size()), nb = n / block;
  Q8 q;
  q.qs.assign(static_cast<size_t>(n), 0);
  q.d.assign(static_cast<size_t>(nb), 0.0f);
  if (block == 32) {
    q.ds.assign(static_cast<size_t>(nb), 0.0f);
    q.zsum.assign(static_cast<size_t>(nb), 0);
    k.quantize_q8x32(x.data(), n, q.qs.data(), q.d.data(), q.ds.data(), q.zsum.data());
  } else {
    q.bsums.assign(static_cast<size_t>(nb * 16), 0);
    k.quantize_q8x256(x.data(), n, q.qs.data(), q.d.data(), q.bsums.data());
  }
  return q;
}

TEST(ActQuant, ScalarReconstructsWithinHalfAStep) {
  const auto& k = gemm_kernels(IsaLevel::Scalar);
  for (int block : {32, 256}) {
    const auto x = activations(4 * 256, 3);
    const Q8 q = quantize(k, block, x);
    // Q8x32 scales are half-rounded after quantizing: each of up to 127 steps may be off by 2^-11 d.
    const float slack = block == 32 ? 0.5f + 127.0f * 0x1p-11f : 0.5f;
    for (size_t i = 0; i < x.size(); ++i) {
      const float d = q.d[i / static_cast<size_t>(block)];
      EXPECT_LE(std::fabs(x[i] - q.qs[i] * d), d * slack * 1.0001f) << "element " << i << " block " << block;
    }
    for (size_t b = 0; b < q.d.size(); ++b) {
      int sum = 0;
      for (int j = 0; j < block; ++j) sum += q.qs[b * block + j];
      if (block == 32) {
        EXPECT_EQ(q.ds[b], q.d[b] * static_cast<float>(sum));
        EXPECT_EQ(q.zsum[b], -8 * sum);
      } else {
        int bsum_total = 0;
        for (int g = 0; g < 16; ++g) bsum_total += q.bsums[b * 16 + g];
        EXPECT_EQ(bsum_total, sum);
      }
    }
  }
}

// Q8x32 block scales are half-precision values wherever half represents them
// normally (the reference GGUF engines round them so; logits near ties follow),
// and stay exact float scales below and above that range.
TEST(ActQuant, Q8x32ScalesAreHalfRoundedInTheNormalHalfRange) {
  for (int level = 0; level < kIsaLevelCount; ++level) {
    const auto isa = static_cast<IsaLevel>(level);
    if (!isa_supported(isa)) continue;
    for (float scale : {1.0f, 1e-3f, 1e-7f, 1e7f}) {
      auto x = activations(24 * 32, 5);  // 16 blocks quantized together, then 8 one by one
      for (auto& v : x) v *= scale;
      const Q8 q = quantize(gemm_kernels(isa), 32, x);
      for (size_t b = 0; b < q.d.size(); ++b) {
        float amax = 0.0f;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
        const float exact = amax / 127.0f;
        const bool normal_half = exact >= 0x1p-14f && exact <= 65504.0f;
        if (normal_half)
          EXPECT_EQ(q.d[b], fp16_to_f32(f32_to_fp16(exact))) << isa_name(isa) << " scale " << scale << " block " << b;
        else
          EXPECT_EQ(q.d[b], exact) << isa_name(isa) << " scale " << scale << " block " << b;
        int sum = 0;
        for (int j = 0; j < 32; ++j) sum += q.qs[b * 32 + j];
        EXPECT_EQ(q.ds[b], q.d[b] * static_cast<float>(sum)) << isa_name(isa) << " block " << b;
        EXPECT_EQ(q.zsum[b], -8 * sum) << isa_name(isa) << " block " << b;
      }
    }
  }
}

// Blocks quantized 16 at a time (the AVX-512 Q8x32 quantizer) see scales from
// 1e-9 to 1e9 side by side, a zero block among them.
std::vector<float> mixed_scale_activations(int64_t n, uint32_t seed) {
  auto x = activations(n, seed);
  for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] *= std::pow(10.0f, static_cast<float>((i / 32) % 19 - 9));
  return x;
}

TEST(ActQuant, EveryIsaMatchesScalarBitForBit) {
  for (const auto& x : {activations(8 * 256, 11), mixed_scale_activations(9 * 256, 12)})
    for (int level = 1; level < kIsaLevelCount; ++level) {
      const auto isa = static_cast<IsaLevel>(level);
      if (!isa_supported(isa)) continue;
      for (int block : {32, 256}) {
        const Q8 want = quantize(gemm_kernels(IsaLevel::Scalar), block, x);
        const Q8 got = quantize(gemm_kernels(isa), block, x);
        EXPECT_EQ(got.qs, want.qs) << isa_name(isa) << " block " << block;
        EXPECT_EQ(got.d, want.d) << isa_name(isa);
        EXPECT_EQ(got.ds, want.ds) << isa_name(isa);
        EXPECT_EQ(got.zsum, want.zsum) << isa_name(isa);
        EXPECT_EQ(got.bsums, want.bsums) << isa_name(isa);
      }
    }
}

}  // namespace
}  // namespace db::kernels
