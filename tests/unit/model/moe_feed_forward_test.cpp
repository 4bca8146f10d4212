#include "model/moe_feed_forward.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "backend/cpu_backend.h"
#include "kernels/packed_weights.h"
#include "kernels/quantize.h"
#include "util/error.h"

namespace db {
namespace {

// ---------------------------------------------------------------------------
// A straightforward router, written like the fixtures' numpy re-implementation:
// scores, a -inf mask over the dropped groups, a stable descending argsort.

struct RefRoute {
  std::vector<int> experts;      // in descending selection score, ties by lower index
  std::vector<double> weights;   // same order
};

std::vector<int> stable_argsort_desc(const std::vector<float>& v) {
  std::vector<int> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return v[a] > v[b]; });
  return idx;
}

RefRoute ref_route(const MoeConfig& c, const float* logits, const float* bias) {
  const int n = c.n_experts, per = n / c.n_groups;
  std::vector<float> s(n), sel(n);
  if (c.gating == ExpertGating::Softmax) {
    float m = *std::max_element(logits, logits + n);
    float sum = 0;
    for (int e = 0; e < n; ++e) sum += std::exp(logits[e] - m);
    for (int e = 0; e < n; ++e) s[e] = std::exp(logits[e] - m) / sum;
  } else {
    for (int e = 0; e < n; ++e) s[e] = 1.0f / (1.0f + std::exp(-logits[e]));
  }
  for (int e = 0; e < n; ++e) sel[e] = s[e] + (bias ? bias[e] : 0.0f);
  std::vector<float> gscore(c.n_groups);
  for (int g = 0; g < c.n_groups; ++g) {
    std::vector<float> grp(sel.begin() + g * per, sel.begin() + (g + 1) * per);
    std::sort(grp.rbegin(), grp.rend());
    gscore[g] = c.gating == ExpertGating::Softmax ? grp[0] : grp[0] + grp[1];
  }
  std::vector<int> keep = stable_argsort_desc(gscore);
  keep.resize(c.n_groups_used);
  std::vector<float> masked(n, -std::numeric_limits<float>::infinity());
  for (int g : keep)
    for (int e = g * per; e < (g + 1) * per; ++e) masked[e] = sel[e];
  RefRoute r;
  std::vector<int> order = stable_argsort_desc(masked);
  r.experts.assign(order.begin(), order.begin() + c.n_experts_used);
  double sum = 0;
  for (int e : r.experts) sum += s[e];
  for (int e : r.experts) {
    double w = s[e];
    if (c.norm_weights) w /= sum + 1e-20;
    r.weights.push_back(w * c.weights_scale);
  }
  return r;
}

MoeConfig make_config(ExpertGating g, int n_exp, int k, int groups, int groups_used, bool norm, float scale,
                      int shared = 0, int ffn = 32) {
  MoeConfig c;
  c.n_experts = n_exp;
  c.n_experts_used = k;
  c.n_shared_experts = shared;
  c.expert_ffn = ffn;
  c.gating = g;
  c.n_groups = groups;
  c.n_groups_used = groups_used;
  c.norm_weights = norm;
  c.weights_scale = scale;
  return c;
}

struct Routed {
  std::vector<int32_t> experts;
  std::vector<float> weights;
};

Routed route(const MoeConfig& c, const std::vector<float>& logits, const float* bias = nullptr) {
  const int64_t n = static_cast<int64_t>(logits.size()) / c.n_experts;
  Routed r{std::vector<int32_t>(n * c.n_experts_used), std::vector<float>(n * c.n_experts_used)};
  route_tokens(c, logits.data(), n, bias, r.experts.data(), r.weights.data());
  return r;
}

TEST(MoeRouting, MatchesReference) {
  const MoeConfig configs[] = {
      make_config(ExpertGating::Softmax, 8, 3, 4, 2, false, 1.5f),   // the V2 fixture's router
      make_config(ExpertGating::Sigmoid, 8, 2, 2, 1, true, 2.5f),    // the V3 fixture's router
      make_config(ExpertGating::Softmax, 64, 6, 8, 3, true, 1.0f),
      make_config(ExpertGating::Sigmoid, 64, 8, 8, 4, true, 2.5f),
      make_config(ExpertGating::Sigmoid, 16, 4, 1, 1, false, 1.0f),  // no groups
      make_config(ExpertGating::Softmax, 16, 16, 4, 4, false, 1.0f),  // every expert
  };
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 2.0f), small(0.0f, 0.3f);
  for (const MoeConfig& c : configs) {
    for (bool with_bias : {false, true}) {
      const int n = 300;
      std::vector<float> logits(n * c.n_experts), bias(c.n_experts);
      for (auto& v : logits) v = normal(rng);
      for (auto& v : bias) v = small(rng);
      const float* b = with_bias ? bias.data() : nullptr;
      const Routed got = route(c, logits, b);
      for (int t = 0; t < n; ++t) {
        const RefRoute want = ref_route(c, logits.data() + t * c.n_experts, b);
        for (int j = 0; j < c.n_experts_used; ++j) {
          const size_t a = size_t(t) * c.n_experts_used + j;
          ASSERT_EQ(got.experts[a], want.experts[j]) << "token " << t << " slot " << j << " n_exp " << c.n_experts;
          EXPECT_NEAR(got.weights[a], want.weights[j], 1e-6 * std::abs(want.weights[j]) + 1e-9);
        }
      }
    }
  }
}

// Group 0 has the single best expert, group 1 the best pair.
const std::vector<float> kGroupLogits = {3.0f, -5.0f, -5.0f, -5.0f, 2.5f, 2.5f, 2.4f, -5.0f};

TEST(MoeRouting, SoftmaxGroupScoreIsTheGroupMax) {
  const MoeConfig c = make_config(ExpertGating::Softmax, 8, 2, 2, 1, false, 1.0f);
  const Routed r = route(c, kGroupLogits);
  // max rule: group 0 (e^3 > e^2.5); the top-2-sum rule would pick group 1 -> {4, 5}.
  EXPECT_EQ(r.experts, (std::vector<int32_t>{0, 1}));
  // Without group limiting: 0 then 4 (4 and 5 tie; the lower index wins).
  const Routed all = route(make_config(ExpertGating::Softmax, 8, 2, 1, 1, false, 1.0f), kGroupLogits);
  EXPECT_EQ(all.experts, (std::vector<int32_t>{0, 4}));
}

TEST(MoeRouting, SigmoidGroupScoreIsTheSumOfTheTopTwo) {
  const MoeConfig c = make_config(ExpertGating::Sigmoid, 8, 2, 2, 1, false, 1.0f);
  const Routed r = route(c, kGroupLogits);
  // sigmoid(2.5) * 2 > sigmoid(3) + sigmoid(-5): group 1; the max rule would give {0, 1}.
  EXPECT_EQ(r.experts, (std::vector<int32_t>{4, 5}));
  const float s25 = 1.0f / (1.0f + std::exp(-2.5f));
  EXPECT_FLOAT_EQ(r.weights[0], s25);
  EXPECT_FLOAT_EQ(r.weights[1], s25);
}

TEST(MoeRouting, BiasSteersSelectionButNotWeights) {
  const std::vector<float> logits = {1.0f, 0.0f, 0.0f, 0.0f};
  const std::vector<float> bias = {0.0f, 0.0f, 0.0f, 0.8f};
  MoeConfig c = make_config(ExpertGating::Sigmoid, 4, 1, 1, 1, false, 1.0f);
  EXPECT_EQ(route(c, logits).experts, (std::vector<int32_t>{0}));
  Routed r = route(c, logits, bias.data());
  EXPECT_EQ(r.experts, (std::vector<int32_t>{3}));
  EXPECT_EQ(r.weights[0], 0.5f);  // sigmoid(0), without the bias
  c.n_experts_used = 2;
  c.norm_weights = true;
  c.weights_scale = 2.5f;
  r = route(c, logits, bias.data());
  EXPECT_EQ(r.experts, (std::vector<int32_t>{3, 0}));
  const double s1 = 1.0 / (1.0 + std::exp(-1.0));
  EXPECT_NEAR(r.weights[0], 0.5 / (0.5 + s1) * 2.5, 1e-6);
  EXPECT_NEAR(r.weights[1], s1 / (0.5 + s1) * 2.5, 1e-6);
  // The bias also decides groups: without it group 0 (1.0 -> 0.73 + 0.5) wins.
  MoeConfig g = make_config(ExpertGating::Sigmoid, 4, 1, 2, 1, false, 1.0f);
  EXPECT_EQ(route(g, logits).experts, (std::vector<int32_t>{0}));
  EXPECT_EQ(route(g, logits, bias.data()).experts, (std::vector<int32_t>{3}));
}

TEST(MoeRouting, NormalizationAndScale) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> logits(16);
  for (auto& v : logits) v = normal(rng);
  for (ExpertGating g : {ExpertGating::Softmax, ExpertGating::Sigmoid}) {
    const Routed plain = route(make_config(g, 16, 4, 1, 1, false, 1.0f), logits);
    const Routed scaled = route(make_config(g, 16, 4, 1, 1, false, 1.5f), logits);
    const Routed normed = route(make_config(g, 16, 4, 1, 1, true, 2.5f), logits);
    EXPECT_EQ(plain.experts, scaled.experts);
    EXPECT_EQ(plain.experts, normed.experts);
    double sum = 0, normed_sum = 0;
    for (int j = 0; j < 4; ++j) {
      EXPECT_FLOAT_EQ(scaled.weights[j], plain.weights[j] * 1.5f);
      sum += plain.weights[j];
      normed_sum += normed.weights[j];
      if (j > 0) {
        EXPECT_GE(plain.weights[j - 1], plain.weights[j]);  // descending order
      }
    }
    EXPECT_NEAR(normed_sum, 2.5, 1e-5);
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(normed.weights[j], plain.weights[j] / sum * 2.5, 1e-6);
    if (g == ExpertGating::Softmax) {
      EXPECT_LT(sum, 1.0);
    }
  }
}

TEST(MoeRouting, TiesPickTheLowerIndex) {
  const std::vector<float> flat(8, 0.25f);
  for (ExpertGating g : {ExpertGating::Softmax, ExpertGating::Sigmoid}) {
    // Equal groups: groups 0 and 1 kept; equal experts: 0, 1, 2.
    EXPECT_EQ(route(make_config(g, 8, 3, 4, 2, false, 1.0f), flat).experts, (std::vector<int32_t>{0, 1, 2}));
    // Groups 1 and 3 lead, tied; experts of those groups, the tie broken by index.
    const std::vector<float> l = {0, 0, 1, 1, 0, 0, 1, 1};
    EXPECT_EQ(route(make_config(g, 8, 3, 4, 2, false, 1.0f), l).experts, (std::vector<int32_t>{2, 3, 6}));
  }
  // Ordered by score, then index.
  EXPECT_EQ(route(make_config(ExpertGating::Softmax, 4, 3, 1, 1, false, 1.0f), {0.0f, 1.0f, 0.0f, 2.0f}).experts,
            (std::vector<int32_t>{3, 1, 0}));
}

TEST(MoeRouting, RejectsBadConfigs) {
  EXPECT_NO_THROW(check_moe_config(make_config(ExpertGating::Softmax, 8, 3, 4, 2, false, 1.0f)));
  EXPECT_THROW(check_moe_config(make_config(ExpertGating::Softmax, 0, 3, 1, 1, false, 1.0f)), Error);
  EXPECT_THROW(check_moe_config(make_config(ExpertGating::Softmax, 8, 9, 1, 1, false, 1.0f)), Error);
  EXPECT_THROW(check_moe_config(make_config(ExpertGating::Softmax, 8, 3, 3, 1, false, 1.0f)), Error);
  EXPECT_THROW(check_moe_config(make_config(ExpertGating::Softmax, 8, 3, 4, 5, false, 1.0f)), Error);
  EXPECT_THROW(check_moe_config(make_config(ExpertGating::Softmax, 8, 3, 4, 1, false, 1.0f)), Error);  // 2 < 3
  EXPECT_THROW(MoeFeedForward(make_config(ExpertGating::Softmax, 8, 3, 4, 1, false, 1.0f), 64), Error);
}

// ---------------------------------------------------------------------------
// The whole block.

// The backend every block of these tests runs on; it outlives the blocks' buffers.
CpuBackend& cpu() {
  static CpuBackend backend;
  return backend;
}

// Random weights of one layer kept as floats (for the reference) and as the
// stored bytes: experts stacked {E, rows, cols} as in GGUF, viewed with expert_slice.
struct TestLayer {
  MoeConfig c;
  int64_t hidden = 0;
  std::vector<float> router, bias;
  std::vector<std::vector<float>> gate, up, down;  // [E] row-major floats
  std::vector<float> sh_gate, sh_up, sh_down;
  std::vector<uint8_t> gate_bytes, up_bytes, down_bytes, sh_gate_bytes, sh_up_bytes, sh_down_bytes;
  MoeLayerWeights w;
  kernels::PackedWeightStore packed;
};

std::vector<float> random_floats(int64_t n, float sd, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, sd);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = normal(rng);
  return v;
}

// Converts consecutive {rows, cols} matrices to `dt` rows, appended to bytes.
void append_rows(DType dt, const std::vector<float>& m, int64_t cols, std::vector<uint8_t>& bytes) {
  const size_t rb = row_bytes(dt, cols), rows = m.size() / static_cast<size_t>(cols);
  const size_t at = bytes.size();
  bytes.resize(at + rb * rows);
  for (size_t r = 0; r < rows; ++r) kernels::quantize_row(dt, m.data() + r * cols, bytes.data() + at + r * rb, cols);
}

TensorView view_of(DType dt, std::vector<int64_t> shape, const std::vector<uint8_t>& bytes) {
  TensorView v;
  v.dtype = dt;
  v.shape = std::move(shape);
  v.data = bytes.data();
  return v;
}

// pack: repack every matrix as the loader does when the ISA level prefers it.
void build_layer(TestLayer& L, const MoeConfig& c, int64_t hidden, DType dt, bool pack, uint32_t seed) {
  L.c = c;
  L.hidden = hidden;
  std::mt19937 rng(seed);
  const int64_t ffn = c.expert_ffn, sffn = int64_t{c.n_shared_experts} * c.expert_ffn;
  L.router = random_floats(c.n_experts * hidden, 0.15f, rng);
  L.bias = random_floats(c.n_experts, 0.1f, rng);
  L.gate.clear();
  L.up.clear();
  L.down.clear();
  for (int e = 0; e < c.n_experts; ++e) {
    L.gate.push_back(random_floats(ffn * hidden, 0.12f, rng));
    L.up.push_back(random_floats(ffn * hidden, 0.12f, rng));
    L.down.push_back(random_floats(hidden * ffn, 0.15f, rng));
    append_rows(dt, L.gate.back(), hidden, L.gate_bytes);
    append_rows(dt, L.up.back(), hidden, L.up_bytes);
    append_rows(dt, L.down.back(), ffn, L.down_bytes);
  }
  auto prep = [&](const TensorView& v) { return pack ? L.packed.prepare(v) : v; };
  const TensorView gs = view_of(dt, {c.n_experts, ffn, hidden}, L.gate_bytes);
  const TensorView us = view_of(dt, {c.n_experts, ffn, hidden}, L.up_bytes);
  const TensorView ds = view_of(dt, {c.n_experts, hidden, ffn}, L.down_bytes);
  L.w = MoeLayerWeights{};
  L.w.router = L.router;
  if (c.gating == ExpertGating::Sigmoid) L.w.score_bias = L.bias;
  for (int e = 0; e < c.n_experts; ++e)
    L.w.experts.push_back({prep(expert_slice(gs, e)), prep(expert_slice(us, e)), prep(expert_slice(ds, e))});
  if (sffn > 0) {
    L.sh_gate = random_floats(sffn * hidden, 0.12f, rng);
    L.sh_up = random_floats(sffn * hidden, 0.12f, rng);
    L.sh_down = random_floats(hidden * sffn, 0.15f, rng);
    append_rows(dt, L.sh_gate, hidden, L.sh_gate_bytes);
    append_rows(dt, L.sh_up, hidden, L.sh_up_bytes);
    append_rows(dt, L.sh_down, sffn, L.sh_down_bytes);
    L.w.shared = {prep(view_of(dt, {sffn, hidden}, L.sh_gate_bytes)), prep(view_of(dt, {sffn, hidden}, L.sh_up_bytes)),
                  prep(view_of(dt, {hidden, sffn}, L.sh_down_bytes))};
  }
  prepare_moe_layer_weights(cpu(), L.w);
}

// down(silu(gate x) * up x) in double, added to y with weight wt.
void ref_ffn(const std::vector<float>& g, const std::vector<float>& u, const std::vector<float>& d, int64_t ffn,
             int64_t hidden, const float* x, double wt, std::vector<double>& y) {
  std::vector<double> a(static_cast<size_t>(ffn));
  for (int64_t f = 0; f < ffn; ++f) {
    double gv = 0, uv = 0;
    for (int64_t i = 0; i < hidden; ++i) {
      gv += double(g[f * hidden + i]) * x[i];
      uv += double(u[f * hidden + i]) * x[i];
    }
    a[f] = gv / (1.0 + std::exp(-gv)) * uv;
  }
  for (int64_t o = 0; o < hidden; ++o) {
    double acc = 0;
    for (int64_t f = 0; f < ffn; ++f) acc += double(d[o * ffn + f]) * a[f];
    y[o] += wt * acc;
  }
}

// The block per token in double; counts[e] receives the tokens routed to e.
std::vector<double> ref_block(const TestLayer& L, const float* x, int64_t n, std::vector<int64_t>& counts) {
  const MoeConfig& c = L.c;
  const int64_t h = L.hidden;
  std::vector<double> out(static_cast<size_t>(n * h), 0.0);
  counts.assign(c.n_experts, 0);
  for (int64_t t = 0; t < n; ++t) {
    const float* xt = x + t * h;
    std::vector<float> logits(c.n_experts);
    for (int e = 0; e < c.n_experts; ++e) {
      double acc = 0;
      for (int64_t i = 0; i < h; ++i) acc += double(L.router[e * h + i]) * xt[i];
      logits[e] = static_cast<float>(acc);
    }
    const RefRoute r = ref_route(c, logits.data(), L.w.score_bias.empty() ? nullptr : L.w.score_bias.data());
    std::vector<double> y(static_cast<size_t>(h), 0.0);
    for (size_t j = 0; j < r.experts.size(); ++j) {
      const int e = r.experts[j];
      ++counts[e];
      ref_ffn(L.gate[e], L.up[e], L.down[e], c.expert_ffn, h, xt, r.weights[j], y);
    }
    if (c.n_shared_experts > 0)
      ref_ffn(L.sh_gate, L.sh_up, L.sh_down, int64_t{c.n_shared_experts} * c.expert_ffn, h, xt, 1.0, y);
    std::copy(y.begin(), y.end(), out.begin() + t * h);
  }
  return out;
}

std::vector<float> run_block(MoeFeedForward& ffn, const MoeLayerWeights& w, const std::vector<float>& x, int64_t n,
                             ThreadPool& pool) {
  std::vector<float> out(static_cast<size_t>(n * ffn.hidden()), std::nanf(""));
  ffn.forward(w, x.data(), n, out.data(), cpu(), pool);
  return out;
}

TEST(MoeFeedForward, MatchesDoubleReference) {
  const MoeConfig configs[] = {
      make_config(ExpertGating::Softmax, 16, 3, 4, 2, false, 1.5f, /*shared=*/1),
      make_config(ExpertGating::Sigmoid, 16, 2, 2, 1, true, 2.5f, /*shared=*/0),
      make_config(ExpertGating::Sigmoid, 16, 4, 4, 2, true, 2.5f, /*shared=*/2),
      make_config(ExpertGating::Softmax, 16, 2, 1, 1, true, 1.0f, /*shared=*/0),
  };
  ThreadPool pool(2);
  const int64_t hidden = 64, n = 5;
  uint32_t seed = 100;
  for (const MoeConfig& c : configs) {
    TestLayer L;
    build_layer(L, c, hidden, DType::F32, /*pack=*/false, seed++);
    std::mt19937 rng(seed++);
    const std::vector<float> x = random_floats(n * hidden, 1.0f, rng);
    std::vector<int64_t> counts;
    const std::vector<double> want = ref_block(L, x.data(), n, counts);
    // Experts no token chose must not be read: take their weights away.
    int unused = 0;
    for (int e = 0; e < c.n_experts; ++e)
      if (counts[e] == 0) {
        ++unused;
        L.w.experts[e].gate.data = L.w.experts[e].up.data = L.w.experts[e].down.data = nullptr;
      }
    ASSERT_GT(unused, 0);
    MoeFeedForward ffn(c, hidden);
    const std::vector<float> got = run_block(ffn, L.w, x, n, pool);
    EXPECT_EQ(ffn.tokens_per_expert(), counts);
    EXPECT_EQ(ffn.last_tokens(), n);
    for (int64_t t = 0; t < n; ++t) {
      double row_max = 0;
      for (int64_t i = 0; i < hidden; ++i) row_max = std::max(row_max, std::abs(want[t * hidden + i]));
      for (int64_t i = 0; i < hidden; ++i)
        ASSERT_NEAR(got[t * hidden + i], want[t * hidden + i], 1e-5 * row_max)
            << "token " << t << " dim " << i << " n_shared " << c.n_shared_experts;
    }
    // In place (out == xn) gives the same bits.
    std::vector<float> inplace = x;
    ffn.forward(L.w, inplace.data(), n, inplace.data(), cpu(), pool);
    EXPECT_EQ(std::memcmp(inplace.data(), got.data(), got.size() * sizeof(float)), 0);
  }
}

TEST(MoeFeedForward, ZeroTokensAndBadWeights) {
  const MoeConfig c = make_config(ExpertGating::Softmax, 8, 2, 1, 1, false, 1.0f, 1);
  TestLayer L;
  build_layer(L, c, 32, DType::F32, false, 1);
  ThreadPool pool(1);
  MoeFeedForward ffn(c, 32);
  ffn.forward(L.w, nullptr, 0, nullptr, cpu(), pool);
  EXPECT_EQ(ffn.tokens_per_expert(), std::vector<int64_t>(8, 0));
  MoeLayerWeights no_shared = L.w;
  no_shared.shared = {};
  std::vector<float> x(32, 1.0f), y(32);
  EXPECT_THROW(ffn.forward(no_shared, x.data(), 1, y.data(), cpu(), pool), Error);
  MoeLayerWeights short_router = L.w;
  short_router.router.pop_back();
  EXPECT_THROW(ffn.forward(short_router, x.data(), 1, y.data(), cpu(), pool), Error);
  MoeLayerWeights bad_shape = L.w;
  bad_shape.experts[3].down.shape = {32, 64};
  EXPECT_THROW(ffn.forward(bad_shape, x.data(), 1, y.data(), cpu(), pool), Error);
  MoeLayerWeights unprepared = L.w;
  unprepared.router_matrix = {};
  EXPECT_THROW(ffn.forward(unprepared, x.data(), 1, y.data(), cpu(), pool), Error);
}

TEST(MoeFeedForward, ExpertSliceViewsOneExpert) {
  std::vector<uint8_t> bytes;
  std::vector<float> m(3 * 4 * 64);
  for (size_t i = 0; i < m.size(); ++i) m[i] = float(i % 97) * 0.01f;
  append_rows(DType::Q8_0, m, 64, bytes);
  const TensorView stacked = view_of(DType::Q8_0, {3, 4, 64}, bytes);
  const TensorView e2 = expert_slice(stacked, 2);
  EXPECT_EQ(e2.shape, (std::vector<int64_t>{4, 64}));
  EXPECT_EQ(e2.dtype, DType::Q8_0);
  EXPECT_EQ(static_cast<const uint8_t*>(e2.data), bytes.data() + 2 * 4 * row_bytes(DType::Q8_0, 64));
  EXPECT_THROW(expert_slice(stacked, 3), Error);
  EXPECT_THROW(expert_slice(view_of(DType::Q8_0, {12, 64}, bytes), 0), Error);
}

// A token's output is the same bits alone as in a batch of 37 (and on 1 or 2 threads).
TEST(MoeFeedForward, BatchInvariant) {
  const MoeConfig c = make_config(ExpertGating::Sigmoid, 16, 4, 4, 2, true, 2.5f, /*shared=*/1, /*ffn=*/64);
  const int64_t hidden = 128, n = 37;
  ThreadPool pool2(2), pool1(1);
  for (DType dt : {DType::F32, DType::Q8_0, DType::Q4_0}) {
    for (bool pack : {false, true}) {
      TestLayer L;
      build_layer(L, c, hidden, dt, pack, 11);
      std::mt19937 rng(12);
      const std::vector<float> x = random_floats(n * hidden, 1.0f, rng);
      MoeFeedForward ffn(c, hidden);
      const std::vector<float> batch = run_block(ffn, L.w, x, n, pool2);
      int64_t total = 0, most = 0;
      for (int64_t v : ffn.tokens_per_expert()) total += v, most = std::max(most, v);
      EXPECT_EQ(total, n * c.n_experts_used);
      EXPECT_GT(most, 1);  // some expert runs several tokens at once
      for (int64_t t = 0; t < n; ++t) {
        const std::vector<float> xt(x.begin() + t * hidden, x.begin() + (t + 1) * hidden);
        const std::vector<float> alone = run_block(ffn, L.w, xt, 1, t % 2 ? pool1 : pool2);
        ASSERT_EQ(std::memcmp(alone.data(), batch.data() + t * hidden, hidden * sizeof(float)), 0)
            << dtype_name(dt) << (pack ? " packed" : "") << " token " << t;
      }
      // A shuffled batch gives each token the same bits too.
      std::vector<int64_t> perm(n);
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      std::vector<float> xs(x.size());
      for (int64_t t = 0; t < n; ++t) std::copy_n(x.begin() + perm[t] * hidden, hidden, xs.begin() + t * hidden);
      const std::vector<float> shuffled = run_block(ffn, L.w, xs, n, pool2);
      for (int64_t t = 0; t < n; ++t)
        ASSERT_EQ(std::memcmp(shuffled.data() + t * hidden, batch.data() + perm[t] * hidden, hidden * sizeof(float)),
                  0)
            << dtype_name(dt) << (pack ? " packed" : "") << " shuffled token " << t;
    }
  }
}

// Q8_0 experts (the router stays f32, as in GGUF files) stay close to the F32 result.
TEST(MoeFeedForward, Q8_0CloseToF32) {
  const MoeConfig c = make_config(ExpertGating::Softmax, 16, 3, 4, 2, false, 1.5f, /*shared=*/1, /*ffn=*/64);
  const int64_t hidden = 128, n = 9;
  ThreadPool pool(2);
  TestLayer f32, q8;
  build_layer(f32, c, hidden, DType::F32, false, 21);
  build_layer(q8, c, hidden, DType::Q8_0, true, 21);
  std::mt19937 rng(22);
  const std::vector<float> x = random_floats(n * hidden, 1.0f, rng);
  MoeFeedForward a(c, hidden), b(c, hidden);
  const std::vector<float> want = run_block(a, f32.w, x, n, pool);
  const std::vector<float> got = run_block(b, q8.w, x, n, pool);
  EXPECT_EQ(a.tokens_per_expert(), b.tokens_per_expert());
  double max_ref = 0, max_err = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    max_ref = std::max(max_ref, double(std::abs(want[i])));
    max_err = std::max(max_err, double(std::abs(got[i] - want[i])));
  }
  EXPECT_GT(max_ref, 0.1);
  EXPECT_LT(max_err, 2e-2 * max_ref);
  EXPECT_GT(max_err, 0.0);  // really quantized
}

}  // namespace
}  // namespace db
