// The CPU compute backend against the kernels it wraps: every op gives the bytes
// of the direct kernel calls (or of the plain loop it replaces), at row counts on
// both sides of its serial / parallel cut-offs and with strided rows.
#include "backend/cpu_backend.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kernels/cpu/rms_norm.h"
#include "kernels/cpu/rope.h"
#include "test_weights.h"
#include "util/error.h"

namespace db {
namespace {

// n standard Gaussian floats.
std::vector<float> random_floats(int64_t n, uint32_t seed) {
  return kernels::testing::random_floats(static_cast<size_t>(n), seed, 1.0f);
}

bool same_bits(const float* a, const float* b, int64_t n) {
  return std::memcmp(a, b, static_cast<size_t>(n) * sizeof(float)) == 0;
}

TEST(CpuBackend, BufferGrowsKeepingContentsWithZeroTail) {
  CpuBackend b;
  DeviceBuffer buf;
  EXPECT_EQ(buf.size(), 0);
  b.grow(buf, 5);
  ASSERT_EQ(buf.size(), 5);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(buf.data()[i], 0.0f);
  for (int i = 0; i < 5; ++i) buf.data()[i] = float(i + 1);
  float* before = buf.data();
  b.grow(buf, 3);  // never shrinks
  EXPECT_EQ(buf.data(), before);
  b.grow(buf, 40000);
  ASSERT_EQ(buf.size(), 40000);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(buf.data()[i], float(i + 1));
  for (int i = 5; i < 40000; ++i) ASSERT_EQ(buf.data()[i], 0.0f);
  DeviceBuffer moved = std::move(buf);
  EXPECT_EQ(moved.size(), 40000);
  EXPECT_EQ(buf.data(), nullptr);
  CpuBackend other;
  EXPECT_THROW(other.grow(moved, 1), Error);
}

TEST(CpuBackend, OpsNeedTheHostPool) {
  CpuBackend b;
  std::vector<float> x(4, 1.0f);
  EXPECT_THROW(b.add_rows(x.data(), x.data(), 1, 4), Error);
  // Growing a buffer needs none, however large what it keeps.
  DeviceBuffer buf;
  b.grow(buf, 100000);
  buf.data()[99999] = 3.0f;
  b.grow(buf, 200000);
  EXPECT_EQ(buf.data()[99999], 3.0f);
}

TEST(CpuBackend, RowCopiesGathersAndWeightedSums) {
  CpuBackend b;
  ThreadPool pool(2);
  b.set_host_pool(pool);
  for (int64_t rows : {3, 40, 700}) {  // serial and parallel sides of the cut-offs
    const int64_t width = 24, ld_src = 30, ld_dst = 37;
    const std::vector<float> src = random_floats(rows * ld_src, 1);
    std::vector<float> got(static_cast<size_t>(rows * ld_dst), -1.0f), want = got;
    b.copy_rows(src.data(), ld_src, got.data(), ld_dst, rows, width);
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(want.data() + r * ld_dst, src.data() + r * ld_src, width * sizeof(float));
    EXPECT_TRUE(same_bits(got.data(), want.data(), rows * ld_dst)) << rows;

    std::vector<int32_t> idx(static_cast<size_t>(rows));
    for (int64_t i = 0; i < rows; ++i) idx[i] = static_cast<int32_t>((i * 11 + 2) % rows);  // distinct: 11 is prime to rows
    std::vector<float> gathered(static_cast<size_t>(rows * ld_src));
    b.gather_rows(src.data(), ld_src, idx.data(), rows, gathered.data());
    for (int64_t i = 0; i < rows; ++i)
      ASSERT_TRUE(same_bits(gathered.data() + i * ld_src, src.data() + idx[i] * ld_src, ld_src)) << rows;

    const std::vector<float> weights = random_floats(rows, 2);
    std::vector<float> dst = random_floats(rows * ld_src, 3), want_dst = dst;
    b.add_weighted_rows(gathered.data(), ld_src, idx.data(), weights.data(), rows, dst.data());
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t d = 0; d < ld_src; ++d)
        want_dst[idx[i] * ld_src + d] += weights[i] * gathered[i * ld_src + d];
    EXPECT_TRUE(same_bits(dst.data(), want_dst.data(), rows * ld_src)) << rows;
  }
}

TEST(CpuBackend, NormsMatchTheRowKernel) {
  CpuBackend b;
  ThreadPool pool(2);
  b.set_host_pool(pool);
  const int64_t n = 13, dim = 96, ld = 120;
  const std::vector<float> w = random_floats(dim, 4), x = random_floats(n * ld, 5);
  std::vector<float> want(static_cast<size_t>(n * ld), 0.0f);
  for (int64_t t = 0; t < n; ++t) kernels::rms_norm(x.data() + t * ld, w.data(), dim, 1e-5f, want.data() + t * ld);
  std::vector<float> strided(static_cast<size_t>(n * ld), 0.0f);
  b.norm_rows(x.data(), ld, w.data(), n, dim, 1e-5f, strided.data(), ld);
  EXPECT_TRUE(same_bits(strided.data(), want.data(), n * ld));

  // Packed rows (the several-rows kernel), and the add-then-norm of a block's end.
  std::vector<float> packed(static_cast<size_t>(n * dim)), rows(static_cast<size_t>(n * dim));
  for (int64_t t = 0; t < n; ++t) std::memcpy(rows.data() + t * dim, x.data() + t * ld, dim * sizeof(float));
  b.norm_rows(rows.data(), dim, w.data(), n, dim, 1e-5f, packed.data(), dim);
  for (int64_t t = 0; t < n; ++t) ASSERT_TRUE(same_bits(packed.data() + t * dim, want.data() + t * ld, dim));

  std::vector<float> resid = random_floats(n * dim, 6), delta = rows;
  std::vector<float> want_resid = resid, want_delta(static_cast<size_t>(n * dim));
  for (int64_t i = 0; i < n * dim; ++i) want_resid[i] += rows[i];
  for (int64_t t = 0; t < n; ++t)
    kernels::rms_norm(want_resid.data() + t * dim, w.data(), dim, 1e-5f, want_delta.data() + t * dim);
  b.add_rows_then_norm(resid.data(), delta.data(), w.data(), n, dim, 1e-5f);
  EXPECT_TRUE(same_bits(resid.data(), want_resid.data(), n * dim));
  EXPECT_TRUE(same_bits(delta.data(), want_delta.data(), n * dim));
}

TEST(CpuBackend, RopeAndBiasMatchTheKernels) {
  CpuBackend b;
  ThreadPool pool(2);
  b.set_host_pool(pool);
  const int64_t n = 9;
  const int n_pairs = 8, heads = 3, head_dim = 24, ld = heads * head_dim + 5;
  const std::vector<float> inv_freq = random_floats(n_pairs, 7);
  std::vector<int32_t> positions(static_cast<size_t>(n));
  for (int64_t t = 0; t < n; ++t) positions[t] = static_cast<int32_t>(t * 5 + 1);
  std::vector<float> cos(static_cast<size_t>(n * n_pairs)), sin = cos;
  b.rope_tables(positions.data(), n, inv_freq.data(), n_pairs, 0.9f, cos.data(), sin.data());
  std::vector<float> want_cos(cos.size()), want_sin(sin.size());
  for (int64_t t = 0; t < n; ++t)
    kernels::rope_angles(positions[t], inv_freq.data(), n_pairs, 0.9f, want_cos.data() + t * n_pairs,
                         want_sin.data() + t * n_pairs);
  ASSERT_TRUE(same_bits(cos.data(), want_cos.data(), n * n_pairs));
  ASSERT_TRUE(same_bits(sin.data(), want_sin.data(), n * n_pairs));

  const std::vector<float> bias = random_floats(heads * head_dim, 8);
  std::vector<float> x = random_floats(n * ld, 9), want = x;
  b.add_bias(x.data(), ld, bias, n);
  const RopeHeads sets[2] = {{x.data(), ld, heads - 1, head_dim}, {x.data() + (heads - 1) * head_dim + 4, ld, 1, 16}};
  b.rope(sets, 2, n, {cos.data(), sin.data(), n_pairs, kernels::RopeStyle::NEOX});
  for (int64_t t = 0; t < n; ++t) {
    float* row = want.data() + t * ld;
    for (size_t i = 0; i < bias.size(); ++i) row[i] += bias[i];
    kernels::rope_rotate(row, heads - 1, head_dim, n_pairs, kernels::RopeStyle::NEOX, want_cos.data() + t * n_pairs,
                         want_sin.data() + t * n_pairs);
    kernels::rope_rotate(row + (heads - 1) * head_dim + 4, 1, 16, n_pairs, kernels::RopeStyle::NEOX,
                         want_cos.data() + t * n_pairs, want_sin.data() + t * n_pairs);
  }
  EXPECT_TRUE(same_bits(x.data(), want.data(), n * ld));
}

TEST(CpuBackend, ProductsAndEmbeddingsMatchTheKernels) {
  CpuBackend b;
  ThreadPool pool(2);
  b.set_host_pool(pool);
  const int64_t rows = 48, cols = 64, n = 7;
  const std::vector<float> wf = random_floats(rows * cols, 10), x = random_floats(n * cols, 11);
  TensorView w;
  w.dtype = DType::F32;
  w.shape = {rows, cols};
  w.data = wf.data();
  const TensorView prepared = b.prepare_matrix(w);
  std::vector<float> want(static_cast<size_t>(n * rows)), got(want.size(), 0.0f), host(want.size(), 0.0f);
  kernels::matmul(w, x.data(), n, want.data(), pool);
  b.matmul(prepared, x.data(), n, got.data());
  b.matmul_to_host(prepared, x.data(), n, host.data());
  EXPECT_TRUE(same_bits(got.data(), want.data(), n * rows));
  EXPECT_TRUE(same_bits(host.data(), want.data(), n * rows));

  const std::vector<int32_t> ids = {5, 0, 47, 5};
  std::vector<float> emb(ids.size() * 2 * cols, -2.0f);
  b.embed_rows(prepared, ids.data(), static_cast<int64_t>(ids.size()), emb.data(), 2 * cols);
  for (size_t t = 0; t < ids.size(); ++t) {
    ASSERT_TRUE(same_bits(emb.data() + t * 2 * cols, wf.data() + ids[t] * cols, cols));
    EXPECT_EQ(emb[t * 2 * cols + cols], -2.0f);  // the stride's gap is left alone
  }
}

}  // namespace
}  // namespace db
