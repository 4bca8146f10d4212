// AWQ / GPTQ layers built here from known codes, zero points and scales, packed
// the way AutoAWQ and AutoGPTQ pack them, then repacked by repack_int4.
#include "model/int4_repack.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/matmul.h"
#include "util/error.h"
#include "util/fp16.h"

namespace db {
namespace {

constexpr int kAwqOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};  // nibble k holds column 8j + kAwqOrder[k]

// A layer's codes q[o][i], zeros z[g][o] and f16 scales s[g][o], with its stored tensors.
struct SyntheticInt4 {
  int64_t in, out, group;
  std::vector<int> q, z, group_of;
  std::vector<uint16_t> s;
  std::vector<int32_t> qweight, qzeros, g_idx;
  Int4Layer layer;

  double value(int64_t o, int64_t i) const {
    const int64_t g = group_of[static_cast<size_t>(i)];
    return (q[static_cast<size_t>(o * in + i)] - z[static_cast<size_t>(g * out + o)]) *
           static_cast<double>(fp16_to_f32(s[static_cast<size_t>(g * out + o)]));
  }
};

int32_t pack8(const int* nibbles) {
  uint32_t w = 0;
  for (int k = 0; k < 8; ++k) w |= static_cast<uint32_t>(nibbles[k] & 0xF) << (4 * k);
  return static_cast<int32_t>(w);
}

SyntheticInt4 make_layer(CheckpointQuantMethod m, int64_t in, int64_t out, int64_t group, bool shuffled,
                         bool zero_plus_one, uint32_t seed) {
  SyntheticInt4 l{in, out, group, {}, {}, {}, {}, {}, {}, {}, {}};
  std::mt19937 rng(seed);
  const int64_t groups = (in + group - 1) / group;
  l.q.resize(static_cast<size_t>(in * out));
  for (int& v : l.q) v = static_cast<int>(rng() % 16);
  l.z.resize(static_cast<size_t>(groups * out));
  for (int& v : l.z) v = 1 + static_cast<int>(rng() % 15);
  l.s.resize(static_cast<size_t>(groups * out));
  for (uint16_t& v : l.s) v = f32_to_fp16(0.001f + 0.01f * static_cast<float>(rng() % 1000) / 1000.0f);
  l.group_of.resize(static_cast<size_t>(in));
  std::vector<int64_t> order(static_cast<size_t>(in));
  for (int64_t i = 0; i < in; ++i) order[static_cast<size_t>(i)] = i;
  if (shuffled) std::shuffle(order.begin(), order.end(), rng);
  for (int64_t k = 0; k < in; ++k) l.group_of[static_cast<size_t>(order[static_cast<size_t>(k)])] = static_cast<int>(k / group);
  const int zstore = zero_plus_one ? 1 : 0;
  int nib[8];
  for (int64_t g = 0; g < groups; ++g)  // qzeros {groups, out / 8}
    for (int64_t j = 0; j < out / 8; ++j) {
      for (int k = 0; k < 8; ++k) {
        const int64_t o = 8 * j + (m == CheckpointQuantMethod::Awq ? kAwqOrder[k] : k);
        nib[k] = l.z[static_cast<size_t>(g * out + o)] - zstore;
      }
      l.qzeros.push_back(pack8(nib));
    }
  if (m == CheckpointQuantMethod::Awq) {  // qweight {in, out / 8}
    for (int64_t i = 0; i < in; ++i)
      for (int64_t j = 0; j < out / 8; ++j) {
        for (int k = 0; k < 8; ++k) nib[k] = l.q[static_cast<size_t>((8 * j + kAwqOrder[k]) * in + i)];
        l.qweight.push_back(pack8(nib));
      }
    l.layer.qweight = TensorView{DType::I32, {in, out / 8}, l.qweight.data()};
  } else {  // qweight {in / 8, out}
    for (int64_t r = 0; r < in / 8; ++r)
      for (int64_t o = 0; o < out; ++o) {
        for (int k = 0; k < 8; ++k) nib[k] = l.q[static_cast<size_t>(o * in + 8 * r + k)];
        l.qweight.push_back(pack8(nib));
      }
    l.layer.qweight = TensorView{DType::I32, {in / 8, out}, l.qweight.data()};
    for (int v : l.group_of) l.g_idx.push_back(v);
    l.layer.g_idx = TensorView{DType::I32, {in}, l.g_idx.data()};
  }
  l.layer.qzeros = TensorView{DType::I32, {groups, out / 8}, l.qzeros.data()};
  l.layer.scales = TensorView{DType::F16, {groups, out}, l.s.data()};
  return l;
}

CheckpointQuant quant_of(CheckpointQuantMethod m, int group, bool zero_plus_one) {
  CheckpointQuant q;
  q.method = m;
  q.bits = 4;
  q.group_size = group;
  q.zero_plus_one = zero_plus_one;
  return q;
}

// Every weight of `r` against the layer's exact values, within `bound(o, i)`.
template <class Bound>
void expect_close(const ConvertedMatrix& r, const SyntheticInt4& l, Bound bound) {
  const TensorView v = r.view();
  std::vector<float> row(static_cast<size_t>(l.in));
  for (int64_t o = 0; o < l.out; ++o) {
    kernels::dequantize_row(v, o, row.data());
    for (int64_t i = 0; i < l.in; ++i)
      ASSERT_LE(std::fabs(row[static_cast<size_t>(i)] - l.value(o, i)), bound(o, i)) << o << "," << i;
  }
}

TEST(Int4Repack, AwqAndGptqAtEveryGroupSizeToF32AreExact) {
  for (auto m : {CheckpointQuantMethod::Awq, CheckpointQuantMethod::Gptq})
    for (int group : {32, 64, 128})
      for (bool plus_one : {false, true}) {
        if (m == CheckpointQuantMethod::Awq && plus_one) continue;  // AWQ stores z itself
        SCOPED_TRACE(quant_method_name(m) + " group " + std::to_string(group) + (plus_one ? " v1" : ""));
        const SyntheticInt4 l = make_layer(m, 256, 24, group, false, plus_one, static_cast<uint32_t>(group));
        const Int4Result r = repack_int4(quant_of(m, group, plus_one), l.layer, DType::F32, nullptr, "t '");
        EXPECT_EQ(r.path, Int4Path::ThroughFloats);
        expect_close(r.matrix, l, [](int64_t, int64_t) { return 0.0; });
      }
}

TEST(Int4Repack, Q4_1IsExactUpToTheF16RoundingOfTheOffset) {
  for (auto m : {CheckpointQuantMethod::Awq, CheckpointQuantMethod::Gptq})
    for (int group : {32, 64, 128}) {
      SCOPED_TRACE(quant_method_name(m) + " group " + std::to_string(group));
      const SyntheticInt4 l = make_layer(m, 256, 16, group, false, false, 7u + static_cast<uint32_t>(group));
      ThreadPool pool(2);
      const Int4Result r = repack_int4(quant_of(m, group, false), l.layer, std::nullopt, &pool, "t '");
      ASSERT_EQ(r.path, Int4Path::Q4_1Direct);
      ASSERT_EQ(r.matrix.dtype, DType::Q4_1);
      expect_close(r.matrix, l, [&](int64_t o, int64_t i) {
        const int64_t g = l.group_of[static_cast<size_t>(i)];
        const double zs = l.z[static_cast<size_t>(g * l.out + o)] * fp16_to_f32(l.s[static_cast<size_t>(g * l.out + o)]);
        return std::fabs(zs) * 0x1p-11 + 0x1p-25;
      });
    }
}

TEST(Int4Repack, ShuffledGroupsGoThroughFloatsIntoQ8_0) {
  const SyntheticInt4 l = make_layer(CheckpointQuantMethod::Gptq, 128, 16, 32, true, true, 99);
  const Int4Result r = repack_int4(quant_of(CheckpointQuantMethod::Gptq, 32, true), l.layer, std::nullopt, nullptr, "t '");
  EXPECT_EQ(r.path, Int4Path::ThroughFloats);
  ASSERT_EQ(r.matrix.dtype, DType::Q8_0);
  // Half a Q8_0 step of the block's largest magnitude, plus the f16 rounding of the step.
  expect_close(r.matrix, l, [&](int64_t o, int64_t i) {
    double amax = 0;
    for (int64_t k = i / 32 * 32; k < i / 32 * 32 + 32; ++k) amax = std::max(amax, std::fabs(l.value(o, k)));
    return amax / 127 * (0.5 + 127 * 0x1p-11) + 1e-7;
  });
}

TEST(Int4Repack, RowsNotWholeBlocksFallBackToF16) {
  const SyntheticInt4 l = make_layer(CheckpointQuantMethod::Gptq, 48, 8, 32, false, false, 5);
  const Int4Result r = repack_int4(quant_of(CheckpointQuantMethod::Gptq, 32, false), l.layer, std::nullopt, nullptr, "t '");
  EXPECT_EQ(r.matrix.dtype, DType::F16);
  expect_close(r.matrix, l, [&](int64_t o, int64_t i) { return std::fabs(l.value(o, i)) * 0x1p-11; });
}

TEST(Int4Repack, BadTensorsAreNamed) {
  SyntheticInt4 l = make_layer(CheckpointQuantMethod::Awq, 64, 16, 32, false, false, 1);
  const CheckpointQuant q = quant_of(CheckpointQuantMethod::Awq, 32, false);
  Int4Layer bad = l.layer;
  bad.scales.dtype = DType::F32;
  EXPECT_THROW(
      {
        try {
          repack_int4(q, bad, std::nullopt, nullptr, "f: tensor 'x.");
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("f: tensor 'x.scales': expected F16, got F32"), std::string::npos)
              << e.what();
          throw;
        }
      },
      Error);
  bad = l.layer;
  bad.qzeros.shape = {1, 2};
  EXPECT_THROW(repack_int4(q, bad, std::nullopt, nullptr, "f: tensor 'x."), Error);
  SyntheticInt4 g = make_layer(CheckpointQuantMethod::Gptq, 64, 16, 32, false, false, 2);
  g.g_idx[3] = 7;  // only groups 0 and 1 exist
  EXPECT_THROW(repack_int4(quant_of(CheckpointQuantMethod::Gptq, 32, false), g.layer, std::nullopt, nullptr, "t '"),
               Error);
}

}  // namespace
}  // namespace db
