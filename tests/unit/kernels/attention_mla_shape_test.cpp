// Paged attention with keys and values of different widths, at every ISA
// level this CPU has:
//  - separate K and V arrays whose heads differ in width (and whose slots may
//    be padded apart);
//  - the latent layout of MLA's weight-absorbed form: one kv head whose value
//    is the prefix of its key row (V aliases K), query heads in groups of 4
//    to 128 (the widest take tiles of fewer query rows).
// Each is checked against a double-precision reference computed from the
// source vectors (not from the cache layout), the vector levels against the
// scalar level, and, in the latent layout, for batch invariance: a query's
// output has the same bits alone or in a varlen batch, at block sizes 16 and
// 64, with its keys split over threads (split-K) or not.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/attention_kv_write.h"
#include "kernels/cpu/attention_ops.h"
#include "tensor/dtype.h"
#include "tensor/kv_row_bytes.h"
#include "util/error.h"
#include "util/fp16.h"
#include "paged_steps.h"

namespace db::kernels {
namespace {

constexpr IsaLevel kLevels[] = {IsaLevel::Scalar, IsaLevel::Avx2, IsaLevel::Avx512};

struct Shape {
  int n_heads, n_kv_heads, dk, dv;
  bool latent;     // V is the prefix of K's row (then n_kv_heads == 1)
  int k_pad, v_pad;  // extra elements between slots (separate arrays only)
  DType dtype;
};

std::string describe(const Shape& s) {
  return std::to_string(s.n_heads) + "x" + std::to_string(s.n_kv_heads) + " k" + std::to_string(s.dk) + " v" +
         std::to_string(s.dv) + (s.latent ? " latent " : " separate ") + dtype_name(s.dtype);
}

std::vector<float> random_vector(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.5f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// x as the cache holds it, back in f32: x holds rows `stride` floats apart,
// and each row's first `width` values are stored as one cache row of dtype
// (Q8_0 quantizes a row in 32-element blocks from its start).
std::vector<float> rounded(const std::vector<float>& x, DType dtype, int width, int stride) {
  std::vector<float> r(x.size(), NAN);
  std::vector<uint8_t> bytes(kv_row_bytes(dtype, width));
  for (size_t row = 0; row + size_t(width) <= x.size(); row += size_t(stride)) {
    store_row_scalar(x.data() + row, width, dtype, bytes.data());
    for (int i = 0; i < width; ++i) {
      const uint8_t* block = bytes.data() + i / 32 * 34;
      r[row + size_t(i)] = dtype == DType::F32    ? x[row + size_t(i)]
                           : dtype == DType::F16  ? fp16_to_f32(load_u16(bytes.data() + 2 * i))
                           : dtype == DType::BF16 ? bf16_to_f32(load_u16(bytes.data() + 2 * i))
                                                  : float(int8_t(block[2 + i % 32])) * fp16_to_f32(load_u16(block));
    }
  }
  return r;
}

using Outputs = std::vector<std::vector<std::vector<float>>>;  // [seq][position] -> n_heads * dv floats

std::vector<int> range(int begin, int end) {
  std::vector<int> r;
  for (int i = begin; i < end; ++i) r.push_back(i);
  return r;
}

// A few sequences with K, V and query vectors for positions [0, ctx).
class Sequences {
 public:
  Sequences(const Shape& shape, std::vector<int> ctx) : shape_(shape), ctx_(std::move(ctx)) {
    k_dim_ = shape.n_kv_heads * shape.dk, v_dim_ = shape.n_kv_heads * shape.dv;
    src_stride_ = std::max(k_dim_, v_dim_) + 3;  // both sources share a row stride
    const size_t q_dim = size_t(shape.n_heads) * shape.dk;
    for (size_t s = 0; s < ctx_.size(); ++s) {
      keys_.push_back(random_vector(size_t(ctx_[s]) * src_stride_, 10 + uint32_t(s)));
      values_.push_back(random_vector(size_t(ctx_[s]) * src_stride_, 20 + uint32_t(s)));
      queries_.push_back(random_vector(size_t(ctx_[s]) * q_dim, 30 + uint32_t(s)));
    }
  }

  float scale() const { return 1.0f / std::sqrt(float(shape_.dk)); }

  // One attention call over a cache with `block_size` (blocks scattered in
  // reverse order): steps[i] lists sequence steps[i].first's query positions.
  // *splits, when given, receives how many items ran their key spans on separate work items.
  Outputs run(IsaLevel level, int block_size, const testing::StepPlan& steps,
              size_t* splits = nullptr) const {
    const int q_dim = shape_.n_heads * shape_.dk, out_dim = shape_.n_heads * shape_.dv;
    int total_blocks = 0;
    for (int c : ctx_) total_blocks += (c + block_size - 1) / block_size;
    const int64_t num_slots = int64_t{total_blocks} * block_size;
    const auto row_bytes = [&](int64_t elems) { return kv_row_bytes(shape_.dtype, elems); };
    PagedKVLayerOut dst{};
    PagedKVLayer layer{};
    std::vector<uint8_t> k, v;  // NaN filled: a read of an unwritten element shows
    if (shape_.latent) {
      k.assign(size_t(num_slots) * row_bytes(shape_.dk), 0xFF);
      dst = PagedKVLayerOut::keys_only(k.data(), shape_.dtype, num_slots, shape_.dk);
      layer = PagedKVLayer::latent(k.data(), shape_.dtype, num_slots, shape_.dk, shape_.dv);
    } else {
      const int64_t k_stride = k_dim_ + shape_.k_pad, v_stride = v_dim_ + shape_.v_pad;
      k.assign(size_t(num_slots) * row_bytes(k_stride), 0xFF);
      v.assign(size_t(num_slots) * row_bytes(v_stride), 0xFF);
      dst = {k.data(), v.data(), shape_.dtype, num_slots, k_dim_, v_dim_, k_stride, v_stride};
      layer = {k.data(), v.data(), shape_.dtype, num_slots, shape_.n_kv_heads, shape_.dk, shape_.dv, k_stride,
               v_stride};
    }
    const auto all_tables = testing::assign_blocks(ctx_, block_size, total_blocks, [&](size_t s, const int64_t* slots) {
      write_kv_rows(keys_[s].data(), shape_.latent ? nullptr : values_[s].data(), src_stride_, ctx_[s], slots, dst);
    });
    const testing::StepBatch b = testing::gather_step(steps, queries_, q_dim, all_tables);
    std::vector<float> out(b.positions.size() * size_t(out_dim), NAN);
    AttentionWorkspace ws;
    ThreadPool pool(2);
    paged_attention_isa(level,
                        {b.q.data(), shape_.n_heads, int(steps.size()), b.query_start.data(), b.positions.data(),
                         b.tables.data(), block_size, scale()},
                        layer, out.data(), ws, pool);
    if (splits) *splits = ws.splits.size();
    return testing::split_outputs(steps, ctx_.size(), ctx_, out, out_dim);
  }

  // The reference output of sequence seq's query at pos: the values read at
  // `value_offset` elements into each kv head's value (its place in the K row
  // in the latent layout): 0 is right, anything else is a wrong V.
  std::vector<double> reference(int seq, int pos, int value_offset = 0) const {
    const std::vector<float> k = rounded(keys_[size_t(seq)], shape_.dtype, k_dim_, src_stride_);
    const std::vector<float> v = shape_.latent ? k : rounded(values_[size_t(seq)], shape_.dtype, v_dim_, src_stride_);
    const int group = shape_.n_heads / shape_.n_kv_heads, dk = shape_.dk, dv = shape_.dv;
    // Kv head h's value: K row elements [h * dk, h * dk + dv) when latent, else V row [h * dv, (h + 1) * dv).
    const int v_head_stride = shape_.latent ? dk : dv;
    std::vector<double> out(size_t(shape_.n_heads) * dv, 0.0), scores(size_t(pos) + 1);
    for (int h = 0; h < shape_.n_heads; ++h) {
      const int kvh = h / group;
      const float* q = queries_[size_t(seq)].data() + (size_t(pos) * shape_.n_heads + h) * dk;
      double max = -INFINITY;
      for (int j = 0; j <= pos; ++j) {
        double dot = 0;
        for (int i = 0; i < dk; ++i) dot += double(q[i]) * k[size_t(j) * src_stride_ + size_t(kvh) * dk + i];
        scores[size_t(j)] = dot * scale();
        max = std::max(max, scores[size_t(j)]);
      }
      double sum = 0;
      for (int j = 0; j <= pos; ++j) sum += (scores[size_t(j)] = std::exp(scores[size_t(j)] - max));
      for (int j = 0; j <= pos; ++j)
        for (int c = 0; c < dv; ++c)
          out[size_t(h) * dv + c] +=
              scores[size_t(j)] / sum * v[size_t(j) * src_stride_ + size_t(kvh) * v_head_stride + value_offset + c];
    }
    return out;
  }

 private:
  Shape shape_;
  std::vector<int> ctx_;
  int k_dim_, v_dim_, src_stride_;
  std::vector<std::vector<float>> keys_, values_, queries_;  // per sequence: [ctx][src_stride_ or q_dim]
};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && !a.empty() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

constexpr double kTolerance = 2e-4;  // |got - want| for outputs of magnitude about 1

double max_error(const std::vector<float>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return INFINITY;
  double e = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = std::abs(double(got[i]) - want[i]);
    if (!(d <= e)) e = std::isnan(d) ? INFINITY : d;
  }
  return e;
}

// Queries of sequence 0 at `positions` (a prefill of all its rows, and
// decode steps) against the reference at every level, and the vector levels
// against the scalar level. The reference with V read from the wrong place
// (the tail of the key row in the latent layout, one element on otherwise)
// must be far off: the check can tell.
void check_against_reference(const Shape& shape, int ctx, const std::vector<int>& positions) {
  SCOPED_TRACE(describe(shape));
  const Sequences seqs(shape, {ctx, 37});
  const std::vector<std::pair<int, std::vector<int>>> prefill_steps{{1, range(0, 37)}, {0, range(0, ctx)}};
  const auto scalar = seqs.run(IsaLevel::Scalar, 16, prefill_steps);
  const int wrong_offset = shape.latent ? shape.dk - shape.dv : 1;
  double wrong = 0;
  for (IsaLevel level : kLevels) {
    if (!isa_supported(level)) continue;
    const auto prefill = level == IsaLevel::Scalar ? scalar : seqs.run(level, 16, prefill_steps);
    for (int pos : positions) {
      const std::vector<double> want = seqs.reference(0, pos);
      if (level == IsaLevel::Scalar) {
        const std::vector<double> wrong_want = seqs.reference(0, pos, wrong_offset);
        wrong = std::max(wrong, max_error(std::vector<float>(wrong_want.begin(), wrong_want.end()), want));
      }
      const auto step = seqs.run(level, 64, {{0, {pos}}});
      EXPECT_LT(max_error(prefill[0][size_t(pos)], want), kTolerance) << isa_name(level) << " prefill, " << pos;
      EXPECT_LT(max_error(step[0][size_t(pos)], want), kTolerance) << isa_name(level) << " decode, " << pos;
      const std::vector<double> s(scalar[0][size_t(pos)].begin(), scalar[0][size_t(pos)].end());
      EXPECT_LT(max_error(prefill[0][size_t(pos)], s), kTolerance) << isa_name(level) << " vs scalar, " << pos;
    }
  }
  EXPECT_GT(wrong, 100 * kTolerance) << "values read from the wrong offset would pass";
}

class AttentionShapes : public ::testing::TestWithParam<Shape> {};

TEST_P(AttentionShapes, MatchesDoublePrecisionReference) {
  check_against_reference(GetParam(), 300, {0, 1, 15, 16, 40, 255, 256, 299});
}

INSTANTIATE_TEST_SUITE_P(
    KeyValueWidths, AttentionShapes,
    ::testing::Values(
        // separate arrays, k_head_dim != v_head_dim (some with padded slots)
        Shape{8, 2, 72, 40, false, 0, 0, DType::F16},    // AVX2 reads F16 in place at decode
        Shape{4, 2, 64, 32, false, 0, 0, DType::F16},    // AVX-512 reads F16 in place at decode
        Shape{6, 3, 32, 48, false, 8, 0, DType::BF16},   // v wider than k
        Shape{4, 1, 24, 20, false, 0, 5, DType::F32},    // widths off the vector widths
        Shape{16, 2, 128, 64, false, 16, 16, DType::F16},
        // the latent layout: one kv head, V = K's prefix
        Shape{16, 1, 72, 64, true, 0, 0, DType::F16}, Shape{16, 1, 72, 64, true, 0, 0, DType::BF16},
        Shape{16, 1, 72, 64, true, 0, 0, DType::F32}, Shape{4, 1, 40, 24, true, 0, 0, DType::F16},
        Shape{32, 1, 72, 64, true, 0, 0, DType::BF16},
        // V3's 128 and Kimi-K2's 64 heads on the latent: tiles of 2 and 4 query rows
        Shape{128, 1, 72, 64, true, 0, 0, DType::F16}, Shape{64, 1, 40, 24, true, 0, 0, DType::Q8_0},
        // Q8_0: heads inside and across 32-element blocks, padded slots, the latent layout
        Shape{8, 2, 72, 40, false, 0, 0, DType::Q8_0}, Shape{6, 3, 32, 48, false, 8, 0, DType::Q8_0},
        Shape{16, 1, 72, 64, true, 0, 0, DType::Q8_0}, Shape{4, 1, 40, 24, true, 0, 0, DType::Q8_0}));

// DeepSeek-V2/V3's real widths: keys of 512 latent + 64 rope, values the 512.
TEST(AttentionMlaShape, RealWidthsMatchReference) {
  for (DType dtype : {DType::F16, DType::BF16, DType::F32, DType::Q8_0})
    check_against_reference(Shape{16, 1, 576, 512, true, 0, 0, dtype}, 270, {0, 17, 255, 256, 269});
}

// Latent layout: a query's output bits do not depend on its batch, the block
// size or split-K.
void check_latent_invariance(const Shape& shape, const std::vector<int>& ctx, const std::vector<int>& probe) {
  SCOPED_TRACE(describe(shape));
  const Sequences seqs(shape, ctx);
  const int n0 = ctx[0], n1 = ctx[1], n2 = ctx[2];
  for (IsaLevel level : kLevels) {
    if (!isa_supported(level)) continue;
    size_t splits = 0;
    const auto prefill = seqs.run(level, 16, {{0, range(0, n0)}}, &splits);
    EXPECT_EQ(splits, 0u) << "a long prefill has items enough for the threads";
    for (int block_size : {16, 64}) {
      const auto batched = seqs.run(level, block_size,
                                    {{1, range(0, n1)}, {0, range(n0 - 40, n0)}, {2, range(0, n2)}, {1, {}}});
      const auto mixed = seqs.run(level, block_size, {{2, {n2 - 1}}, {0, {n0 - 1}}, {1, range(n1 - 3, n1)}});
      const auto alone1 = seqs.run(level, block_size, {{1, range(0, n1)}});
      for (int pos = n0 - 40; pos < n0; ++pos)
        ASSERT_TRUE(same_bits(batched[0][size_t(pos)], prefill[0][size_t(pos)]))
            << isa_name(level) << " block " << block_size << " position " << pos;
      ASSERT_TRUE(same_bits(mixed[0][size_t(n0 - 1)], prefill[0][size_t(n0 - 1)])) << isa_name(level);
      ASSERT_TRUE(same_bits(mixed[2][size_t(n2 - 1)], batched[2][size_t(n2 - 1)])) << isa_name(level);
      for (int pos = 0; pos < n1; ++pos)
        ASSERT_TRUE(same_bits(batched[1][size_t(pos)], alone1[1][size_t(pos)])) << isa_name(level) << " " << pos;
      for (int pos = n1 - 3; pos < n1; ++pos)
        ASSERT_TRUE(same_bits(mixed[1][size_t(pos)], alone1[1][size_t(pos)])) << isa_name(level) << " " << pos;
      for (int pos : probe) {
        const auto step = seqs.run(level, block_size, {{0, {pos}}}, &splits);
        EXPECT_EQ(splits, pos < 256 ? 0u : 1u) << "a decode step past 256 positions splits its keys";
        ASSERT_TRUE(same_bits(step[0][size_t(pos)], prefill[0][size_t(pos)]))
            << isa_name(level) << " block " << block_size << " position " << pos;
      }
    }
  }
}

TEST(AttentionMlaShape, LatentBatchInvariance) {
  for (DType dtype : {DType::F16, DType::BF16, DType::F32, DType::Q8_0})
    check_latent_invariance(Shape{16, 1, 72, 64, true, 0, 0, dtype}, {600, 300, 45}, {0, 255, 256, 257, 511, 599});
}

// 128 heads on the latent take tiles of 2 query rows (attention.cpp): a query's
// bits still do not depend on its batch or its tile's neighbours.
TEST(AttentionMlaShape, LatentBatchInvarianceWideGroup) {
  check_latent_invariance(Shape{128, 1, 72, 64, true, 0, 0, DType::F16}, {300, 70, 20}, {255, 256, 299});
}

TEST(AttentionMlaShape, LatentBatchInvarianceRealWidths) {
  for (DType dtype : {DType::F16, DType::Q8_0})
    check_latent_invariance(Shape{16, 1, 576, 512, true, 0, 0, dtype}, {300, 70, 20}, {255, 256, 299});
}

// The write side: K rows only (v null), or K and V rows of different widths
// and strides; nothing outside the rows is touched.
TEST(KvRowWrite, KeysOnlyAndDifferentWidths) {
  const std::vector<float> k = random_vector(3 * 10, 1), v = random_vector(3 * 10, 2);
  const int64_t slots[] = {4, 0, 2};
  for (DType dtype : {DType::F16, DType::BF16, DType::F32, DType::Q8_0}) {
    const size_t k9 = kv_row_bytes(dtype, 9), v6 = kv_row_bytes(dtype, 6), k7 = kv_row_bytes(dtype, 7);
    std::vector<uint8_t> kc(5 * k9, 0xAB), vc(5 * v6, 0xAB), k_want = kc, v_want = vc;
    for (int i = 0; i < 3; ++i) {
      store_row_scalar(k.data() + 10 * i, 7, dtype, k_want.data() + size_t(slots[i]) * k9);
      store_row_scalar(v.data() + 10 * i, 4, dtype, v_want.data() + size_t(slots[i]) * v6);
    }
    write_kv_rows(k.data(), v.data(), 10, 3, slots, {kc.data(), vc.data(), dtype, 5, 7, 4, 9, 6});
    EXPECT_EQ(kc, k_want) << dtype_name(dtype);
    EXPECT_EQ(vc, v_want) << dtype_name(dtype);
    std::vector<uint8_t> only(5 * k7, 0xAB), only_want = only;
    for (int i = 0; i < 3; ++i) store_row_scalar(k.data() + 10 * i, 7, dtype, only_want.data() + size_t(slots[i]) * k7);
    write_kv_rows(k.data(), nullptr, 10, 3, slots, PagedKVLayerOut::keys_only(only.data(), dtype, 5, 7));
    EXPECT_EQ(only, only_want) << dtype_name(dtype);
  }
}

TEST(AttentionMlaShape, RejectsHeadsWiderThanTheirRows) {
  std::vector<float> k(64 * 16), q(2 * 16), out(2 * 16);
  const int32_t start[] = {0, 1}, pos[] = {0};
  const std::vector<int32_t> table{0};
  AttentionWorkspace ws;
  ThreadPool pool(1);
  const PagedKVLayer bad{k.data(), k.data(), DType::F32, 64, 1, 16, 16, 8, 16};
  EXPECT_THROW(paged_attention_isa(IsaLevel::Scalar, {q.data(), 2, 1, start, pos, &table, 16, 1.0f}, bad, out.data(),
                                   ws, pool),
               Error);
}

}  // namespace
}  // namespace db::kernels
