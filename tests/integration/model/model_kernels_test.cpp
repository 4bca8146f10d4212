// The model's elementwise and attention kernels against plain double-precision
// references on random data, with shapes the fixtures do not reach.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "kernels/cpu/activations.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/attention_kv_write.h"
#include "kernels/cpu/rms_norm.h"
#include "kernels/cpu/rope.h"
#include "kernels/cpu/softmax.h"
#include "util/error.h"
#include "util/fp16.h"

namespace db::kernels {
namespace {

std::vector<float> random_vector(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

TEST(KernelTest, RmsNormMatchesDouble) {
  const auto x = random_vector(77, 1, 3.0f), w = random_vector(77, 2);
  std::vector<float> y(77);
  rms_norm(x.data(), w.data(), 77, 1e-5f, y.data());
  double ss = 0;
  for (float v : x) ss += double(v) * v;
  const double inv = 1.0 / std::sqrt(ss / 77 + 1e-5);
  for (int i = 0; i < 77; ++i) EXPECT_NEAR(y[i], w[i] * x[i] * inv, 1e-5 * std::abs(w[i] * x[i] * inv) + 1e-7);
}

TEST(KernelTest, SwigluMatchesDefinition) {
  const auto g = random_vector(33, 3, 4.0f), u = random_vector(33, 4);
  std::vector<float> out(33);
  swiglu(g.data(), u.data(), 33, out.data());
  for (int i = 0; i < 33; ++i) EXPECT_NEAR(out[i], g[i] / (1 + std::exp(-double(g[i]))) * u[i], 1e-5);
}

TEST(KernelTest, RopeStylesAreThePermutationOfEachOther) {
  // Rotating a vector in NEOX layout equals rotating its interleaved permutation
  // (what llama.cpp's converter does to q/k rows) in INTERLEAVED layout.
  // Partial rotation (dims 10, 11 untouched); 5 pairs: the vector steps and a scalar tail.
  const int d = 12, pairs = 5;
  const auto x = random_vector(2 * d, 5);
  std::vector<float> inv_freq = {1.0f, 0.3f, 0.05f, 0.001f, 0.0002f}, c(pairs), s(pairs);
  rope_angles(37, inv_freq.data(), pairs, 1.0f, c.data(), s.data());
  std::vector<float> neox = x, inter(2 * d);
  for (int h = 0; h < 2; ++h) {
    for (int i = 0; i < pairs; ++i) {
      inter[h * d + 2 * i] = x[h * d + i];
      inter[h * d + 2 * i + 1] = x[h * d + pairs + i];
    }
    for (int i = 2 * pairs; i < d; ++i) inter[h * d + i] = x[h * d + i];
  }
  rope_rotate(neox.data(), 2, d, pairs, RopeStyle::NEOX, c.data(), s.data());
  rope_rotate(inter.data(), 2, d, pairs, RopeStyle::INTERLEAVED, c.data(), s.data());
  for (int h = 0; h < 2; ++h) {
    for (int i = 0; i < pairs; ++i) {
      EXPECT_EQ(inter[h * d + 2 * i], neox[h * d + i]);
      EXPECT_EQ(inter[h * d + 2 * i + 1], neox[h * d + pairs + i]);
      const double th = 37.0 * inv_freq[i];
      EXPECT_NEAR(neox[h * d + i], x[h * d + i] * std::cos(th) - x[h * d + pairs + i] * std::sin(th), 1e-5);
    }
    for (int i = 2 * pairs; i < d; ++i) EXPECT_EQ(neox[h * d + i], x[h * d + i]);
  }
}

TEST(KernelTest, OnlineSoftmaxOverChunksEqualsSoftmax) {
  auto scores = random_vector(40, 6, 5.0f);
  const auto orig = scores;
  OnlineSoftmax st{-std::numeric_limits<float>::infinity(), 0.0f};
  std::vector<double> weights;  // exp(s - m_final) reconstructed from per-chunk weights
  double m_final = -1e30;
  for (float v : orig) m_final = std::max(m_final, double(v));
  float sum_weighted = 0;
  for (int c = 0; c < 40; c += 7) {
    const int n = std::min(7, 40 - c);
    const float corr = online_softmax_update(st, scores.data() + c, n);
    sum_weighted *= corr;
    for (int j = 0; j < n; ++j) sum_weighted += scores[c + j] * orig[c + j];
  }
  double z = 0, expect = 0;
  for (float v : orig) z += std::exp(v - m_final);
  for (float v : orig) expect += std::exp(v - m_final) / z * v;
  EXPECT_FLOAT_EQ(st.m, float(m_final));
  EXPECT_NEAR(st.l, z, 1e-5 * z);
  EXPECT_NEAR(sum_weighted / st.l, expect, 1e-5);
}

struct AttnCase {
  int n_heads, n_kv_heads, head_dim, block_size;
  DType dtype;
  float q_scale = 1.0f;  // spread of the query values (large: scores far apart, the softmax max keeps moving)
  int cached0 = 30;      // tokens cached for sequence 0 (over 256: several key spans, split over threads)
};

// Three sequences over scattered cache blocks: 30 (or cached0) cached + 5 new
// tokens, 1 new token, and a 19-token prefill; K/V written through write_kv_rows.
class PagedAttentionTest : public ::testing::TestWithParam<AttnCase> {
 protected:
  void SetUp() override {
    p_ = GetParam();
    kv_dim_ = p_.n_kv_heads * p_.head_dim;
    q_dim_ = p_.n_heads * p_.head_dim;
    k_store_.resize(size_t(kNumBlocks) * p_.block_size * kv_dim_ * block_bytes(p_.dtype));
    v_store_.resize(k_store_.size());
    const auto out = PagedKVLayerOut::key_value(k_store_.data(), v_store_.data(), p_.dtype, num_slots(), kv_dim_);
    const int cached[3] = {p_.cached0, 0, 0}, fresh[3] = {5, 1, 19};
    int next_block = 0;
    for (int s = 0; s < 3; ++s) {
      const int ctx = cached[s] + fresh[s];
      while (int(tables_[s].size()) * p_.block_size < ctx) tables_[s].push_back((next_block++ * 7 + 3) % kNumBlocks);
      keys_[s] = random_vector(size_t(ctx) * kv_dim_, 100 + s);
      values_[s] = random_vector(size_t(ctx) * kv_dim_, 200 + s);
      std::vector<int64_t> slots;
      for (int pos = 0; pos < ctx; ++pos)
        slots.push_back(int64_t{tables_[s][pos / p_.block_size]} * p_.block_size + pos % p_.block_size);
      write_kv_rows(keys_[s].data(), values_[s].data(), kv_dim_, ctx, slots.data(), out);
      for (int pos = cached[s]; pos < ctx; ++pos) positions_.push_back(pos);
      query_start_.push_back(query_start_.back() + fresh[s]);
    }
    q_ = random_vector(size_t(query_start_.back()) * q_dim_, 300, p_.q_scale);
  }

  int64_t num_slots() const { return int64_t{kNumBlocks} * p_.block_size; }
  float scale() const { return 1.0f / std::sqrt(float(p_.head_dim)); }
  // What the cache holds for v.
  float stored(float v) const {
    if (p_.dtype == DType::F16) return fp16_to_f32(f32_to_fp16(v));
    if (p_.dtype == DType::BF16) return bf16_to_f32(f32_to_bf16(v));
    return v;
  }

  // Largest |out - softmax(q k^T * scale) v| over every query, head and dim, in double.
  double naive_max_error(const std::vector<float>& out) const {
    const int group = p_.n_heads / p_.n_kv_heads, d = p_.head_dim;
    double max_err = 0;
    for (int s = 0; s < 3; ++s) {
      for (int t = query_start_[s]; t < query_start_[s + 1]; ++t) {
        for (int h = 0; h < p_.n_heads; ++h) {
          const int g = h / group, pos = positions_[t];
          std::vector<double> w(pos + 1);
          double m = -1e300, z = 0;
          for (int j = 0; j <= pos; ++j) {
            double dot = 0;
            for (int i = 0; i < d; ++i)
              dot += double(q_[size_t(t) * q_dim_ + h * d + i]) * stored(keys_[s][size_t(j) * kv_dim_ + g * d + i]);
            m = std::max(m, w[j] = dot * scale());
          }
          for (double& x : w) z += (x = std::exp(x - m));
          for (int i = 0; i < d; ++i) {
            double o = 0;
            for (int j = 0; j <= pos; ++j) o += w[j] / z * stored(values_[s][size_t(j) * kv_dim_ + g * d + i]);
            max_err = std::max(max_err, std::abs(o - out[size_t(t) * q_dim_ + h * d + i]));
          }
        }
      }
    }
    return max_err;
  }

  static constexpr int kNumBlocks = 16;
  AttnCase p_;
  int kv_dim_ = 0, q_dim_ = 0;
  std::vector<uint8_t> k_store_, v_store_;
  std::vector<std::vector<int32_t>> tables_{3};
  std::vector<std::vector<float>> keys_{3}, values_{3};  // per sequence: [ctx][kv_dim]
  std::vector<int32_t> query_start_{0}, positions_;
  std::vector<float> q_;
};

TEST_P(PagedAttentionTest, MatchesNaiveAttention) {
  const AttentionQueries qs{q_.data(),      p_.n_heads,    3,      query_start_.data(), positions_.data(),
                            tables_.data(), p_.block_size, scale()};
  const auto layer =
      PagedKVLayer::key_value(k_store_.data(), v_store_.data(), p_.dtype, num_slots(), p_.n_kv_heads, p_.head_dim);
  AttentionWorkspace ws;
  for (int threads : {1, 2}) {  // one thread: work items span all kv heads; two: one kv head each
    ThreadPool pool(threads);
    for (IsaLevel level : kIsaLevels) {
      if (!isa_supported(level)) continue;
      std::vector<float> out(q_.size());
      paged_attention_isa(level, qs, layer, out.data(), ws, pool);
      // Rounding errors of the scores grow with their magnitude.
      EXPECT_LT(naive_max_error(out), 2e-6 * std::max(1.0f, p_.q_scale)) << isa_name(level) << " threads " << threads;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, PagedAttentionTest,
                         ::testing::Values(AttnCase{4, 4, 16, 16, DType::F32}, AttnCase{6, 2, 20, 16, DType::F16},
                                           AttnCase{8, 1, 64, 64, DType::BF16}, AttnCase{3, 3, 8, 24, DType::F32},
                                           AttnCase{9, 3, 64, 16, DType::F16}, AttnCase{8, 2, 128, 16, DType::F16},
                                           AttnCase{4, 2, 80, 32, DType::BF16},
                                           AttnCase{9, 3, 64, 16, DType::F32, 12.0f},
                                           AttnCase{8, 1, 64, 64, DType::BF16, 1.0f, 600},
                                           AttnCase{6, 1, 32, 64, DType::F32, 4.0f, 700}));

TEST(PagedAttentionErrors, BlockTableTooShort) {
  std::vector<float> q(16), out(16), kv(16 * 16);
  std::vector<int32_t> qstart = {0, 1}, pos = {16};
  std::vector<std::vector<int32_t>> tables = {{0}};
  AttentionWorkspace ws;
  ThreadPool pool(1);
  EXPECT_THROW(paged_attention({q.data(), 1, 1, qstart.data(), pos.data(), tables.data(), 16, 1.0f},
                               {kv.data(), kv.data(), DType::F32, 16, 1, 16}, out.data(), ws, pool),
               Error);
}

}  // namespace
}  // namespace db::kernels
