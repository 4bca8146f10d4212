// Paged attention's batch invariance, at every ISA level this CPU has: a query's
// output is equal bit for bit whether it is computed inside a long prefill
// tile, alone as a one-row decode step, in a differently split sequence, next
// to other sequences, over a cache with another block size, or with its keys
// split over threads (split-K) or not.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/attention_kv_write.h"
#include "kernels/cpu/attention_ops.h"
#include "tensor/dtype.h"
#include "tensor/kv_row_bytes.h"
#include "paged_steps.h"

namespace db::kernels {
namespace {

struct Shape {
  int n_heads, n_kv_heads, head_dim;
  DType dtype;
};

std::vector<float> random_vector(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.5f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// A few sequences, each with K, V and query vectors for positions [0, ctx).
class Sequences {
 public:
  Sequences(const Shape& shape, std::vector<int> ctx) : shape_(shape), ctx_(std::move(ctx)) {
    const size_t kv_dim = size_t(shape.n_kv_heads) * shape.head_dim, q_dim = size_t(shape.n_heads) * shape.head_dim;
    for (size_t s = 0; s < ctx_.size(); ++s) {
      keys_.push_back(random_vector(ctx_[s] * kv_dim, 10 + uint32_t(s)));
      values_.push_back(random_vector(ctx_[s] * kv_dim, 20 + uint32_t(s)));
      queries_.push_back(random_vector(ctx_[s] * q_dim, 30 + uint32_t(s)));
    }
  }

  // One attention call over a cache with `block_size` (blocks scattered in
  // reverse order): steps[i] lists sequence steps[i].first's query positions.
  // Returns each query's output rows, keyed as [seq][position] -> n_heads * head_dim floats.
  // *splits, when given, receives how many items ran their key spans on separate work items.
  std::vector<std::vector<std::vector<float>>> run(IsaLevel level, int block_size,
                                                   const testing::StepPlan& steps,
                                                   size_t* splits = nullptr) const {
    const int kv_dim = shape_.n_kv_heads * shape_.head_dim, q_dim = shape_.n_heads * shape_.head_dim;
    int total_blocks = 0;
    for (int c : ctx_) total_blocks += (c + block_size - 1) / block_size;
    const int64_t num_slots = int64_t{total_blocks} * block_size;
    // NaN fill (Q8_0: NaN scales): a read of an unwritten element shows.
    std::vector<uint8_t> k(size_t(num_slots) * kv_row_bytes(shape_.dtype, kv_dim), 0xFF);
    std::vector<uint8_t> v(k.size(), 0xFF);
    const auto all_tables = testing::assign_blocks(ctx_, block_size, total_blocks, [&](size_t s, const int64_t* slots) {
      write_kv_rows(keys_[s].data(), values_[s].data(), kv_dim, ctx_[s], slots,
                    PagedKVLayerOut::key_value(k.data(), v.data(), shape_.dtype, num_slots, kv_dim));
    });
    const testing::StepBatch b = testing::gather_step(steps, queries_, q_dim, all_tables);
    std::vector<float> out(b.q.size());
    AttentionWorkspace ws;
    ThreadPool pool(2);
    paged_attention_isa(level,
                        {b.q.data(), shape_.n_heads, int(steps.size()), b.query_start.data(), b.positions.data(),
                         b.tables.data(), block_size, 1.0f / std::sqrt(float(shape_.head_dim))},
                        PagedKVLayer::key_value(k.data(), v.data(), shape_.dtype, num_slots, shape_.n_kv_heads,
                                                shape_.head_dim),
                        out.data(), ws, pool);
    if (splits) *splits = ws.splits.size();
    return testing::split_outputs(steps, ctx_.size(), ctx_, out, q_dim);
  }

 private:
  Shape shape_;
  std::vector<int> ctx_;
  std::vector<std::vector<float>> keys_, values_, queries_;  // per sequence: [ctx][kv_dim or q_dim]
};

std::vector<int> range(int begin, int end) {
  std::vector<int> r;
  for (int i = begin; i < end; ++i) r.push_back(i);
  return r;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && !a.empty() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

class AttentionInvariance : public ::testing::TestWithParam<Shape> {};

constexpr const auto& kLevels = kIsaLevels;

TEST_P(AttentionInvariance, PrefillRowEqualsSingleRowStep) {
  const Sequences seqs(GetParam(), {75});
  for (IsaLevel level : kLevels) {
    if (!isa_supported(level)) continue;
    const auto prefill = seqs.run(level, 16, {{0, range(0, 75)}});
    for (int pos = 0; pos < 75; ++pos) {
      const auto step = seqs.run(level, 16, {{0, {pos}}});
      ASSERT_TRUE(same_bits(step[0][size_t(pos)], prefill[0][size_t(pos)])) << isa_name(level) << " position " << pos;
    }
  }
}

TEST_P(AttentionInvariance, SplitBatchAndBlockSizeDoNotMatter) {
  const Sequences seqs(GetParam(), {75, 40, 3});
  for (IsaLevel level : kLevels) {
    if (!isa_supported(level)) continue;
    const auto alone = seqs.run(level, 16, {{0, range(0, 75)}});
    const auto split = seqs.run(level, 16, {{0, range(0, 33)}});
    const auto rest = seqs.run(level, 16, {{1, range(20, 40)}, {0, range(33, 50)}, {2, {2}}, {0, range(50, 75)}});
    for (int block_size : {16, 32, 64, 24, 8}) {
      const auto batched = seqs.run(level, block_size, {{1, range(0, 40)}, {2, range(0, 3)}, {0, range(0, 75)}});
      for (int pos = 0; pos < 75; ++pos) {
        const auto& expect = alone[0][size_t(pos)];
        ASSERT_TRUE(same_bits(batched[0][size_t(pos)], expect)) << isa_name(level) << " block " << block_size;
        const auto& piece = pos < 33 ? split[0][size_t(pos)] : rest[0][size_t(pos)];
        ASSERT_TRUE(same_bits(piece, expect)) << isa_name(level) << " position " << pos;
      }
      for (int pos = 20; pos < 40; ++pos) ASSERT_TRUE(same_bits(batched[1][size_t(pos)], rest[1][size_t(pos)]));
      ASSERT_TRUE(same_bits(batched[2][2], rest[2][2]));
    }
  }
}

// Past 256 positions a query's keys fold in spans. A long prefill keeps each
// item's spans on one thread; a decode step or a short chunk (few items for
// two threads) splits them over the threads. The bits must not change.
TEST_P(AttentionInvariance, KeySpansSplitOverThreadsOrNot) {
  const Sequences seqs(GetParam(), {600, 300});
  for (IsaLevel level : kLevels) {
    if (!isa_supported(level)) continue;
    size_t splits = 0;
    const auto prefill = seqs.run(level, 16, {{0, range(0, 600)}}, &splits);
    EXPECT_EQ(splits, 0u) << "a long prefill has items enough for the threads";
    for (int pos : {255, 256, 257, 511, 512, 599}) {
      const auto step = seqs.run(level, 16, {{0, {pos}}}, &splits);
      EXPECT_EQ(splits, pos < 256 ? 0u : size_t(GetParam().n_kv_heads)) << "position " << pos;
      ASSERT_TRUE(same_bits(step[0][size_t(pos)], prefill[0][size_t(pos)])) << isa_name(level) << " position " << pos;
    }
    const auto both = seqs.run(level, 32, {{1, {299}}, {0, range(560, 600)}});
    const auto alone = seqs.run(level, 32, {{1, range(0, 300)}});
    ASSERT_TRUE(same_bits(both[1][299], alone[1][299])) << isa_name(level);
    for (int pos = 560; pos < 600; ++pos)
      ASSERT_TRUE(same_bits(both[0][size_t(pos)], prefill[0][size_t(pos)])) << isa_name(level) << " position " << pos;
  }
}

// New K / V rows reach the cache as the same bytes at every level: ties,
// half subnormals, overflow to infinity, infinities, NaN and -0 included, at
// lengths around the 16-value vector width and the 32-element Q8_0 block.
TEST(KvRowStore, EveryLevelWritesTheScalarBytes) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(77);
  for (size_t i = 0; i < x.size(); ++i) x[i] = normal(rng) * std::pow(10.0f, static_cast<float>(int(i % 13) - 6));
  const float specials[] = {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 0x1p-20f, 3e-8f, 65519.0f, 65520.0f, 1e6f,
                            INFINITY,        -INFINITY,           NAN,      -0.0f, 0x1p-130f};
  std::copy(std::begin(specials), std::end(specials), x.begin() + 3);
  for (DType dtype : {DType::F16, DType::BF16, DType::F32, DType::Q8_0})
    for (int64_t n : {1, 15, 16, 17, 32, 77}) {
      const size_t bytes = kv_row_bytes(dtype, n);
      std::vector<uint8_t> want(bytes + 8, 0xAB), got(bytes + 8, 0xAB);
      store_row_scalar(x.data(), n, dtype, want.data());
      for (IsaLevel level : kLevels) {
        if (!isa_supported(level)) continue;
        std::fill(got.begin(), got.end(), 0xAB);
        attention_ops(level).store_row(x.data(), n, dtype, got.data());
        EXPECT_EQ(got, want) << isa_name(level) << " " << dtype_name(dtype) << " n " << n;  // nothing past the row
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Shapes, AttentionInvariance,
                         ::testing::Values(Shape{9, 3, 64, DType::F16}, Shape{6, 2, 20, DType::BF16},
                                           Shape{4, 4, 16, DType::F32}, Shape{8, 2, 128, DType::F16},
                                           Shape{7, 1, 40, DType::F32}, Shape{12, 2, 128, DType::F16},
                                           Shape{14, 2, 64, DType::F16}, Shape{16, 1, 32, DType::BF16},
                                           // Q8_0: whole blocks per head, heads inside a block, a head across two
                                           Shape{9, 3, 64, DType::Q8_0}, Shape{4, 4, 16, DType::Q8_0},
                                           Shape{6, 2, 20, DType::Q8_0}));

}  // namespace
}  // namespace db::kernels
