// The CUDA backend's ops against the CPU backend's (backend/compute_backend.h): each
// case runs the same ops on the same random inputs through both and compares what
// comes back, within the tolerance of the weights' type. Part of cuda_cases().
#include <cmath>
#include <functional>
#include <vector>

#include "backend/cpu_backend.h"
#include "backend/cuda_backend.h"
#include "cuda_cases.h"
#include "kernels/quantize.h"
#include "tensor/kv_row_bytes.h"
#include "util/thread_pool.h"

namespace db::cuda_test {

namespace {

// A matrix of rows x cols in t, its bytes kept by the case (prepare_matrix reads them).
struct HostMatrix {
  std::vector<uint8_t> bytes;
  TensorView view;
  HostMatrix(DType t, int64_t rows, int64_t cols, uint64_t seed) {
    const std::vector<float> x = normal_floats(static_cast<size_t>(rows * cols), seed);
    const size_t rb = row_bytes(t, cols);
    bytes.resize(rb * static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) kernels::quantize_row(t, x.data() + r * cols, bytes.data() + r * rb, cols);
    view.dtype = t;
    view.shape = {rows, cols};
    view.data = bytes.data();
  }
};

// The buffers one backend's run uses, handed back to the host at the end.
struct Run {
  ComputeBackend& b;
  std::vector<DeviceBuffer> buffers;
  float* upload(const std::vector<float>& host) {
    buffers.emplace_back();
    b.grow(buffers.back(), static_cast<int64_t>(host.size()));
    b.to_device(host.data(), buffers.back().data(), static_cast<int64_t>(host.size()));
    return buffers.back().data();
  }
  float* zeros(int64_t n) {
    buffers.emplace_back();
    b.grow(buffers.back(), n);
    return buffers.back().data();
  }
  std::vector<float> read(const float* p, int64_t n) {
    std::vector<float> host(static_cast<size_t>(n));
    b.to_host(p, host.data(), n);
    return host;
  }
};

using Ops = std::function<std::vector<float>(Run&)>;

// ops on the CPU backend and on the CUDA backend, compared element by element.
CaseResult both(const std::string& what, const Ops& ops, double rel, double abs) {
  ThreadPool pool(2);
  CpuBackend cpu;
  cpu.set_host_pool(pool);
  Run on_cpu{cpu, {}};
  const std::vector<float> want = ops(on_cpu);
  CudaBackend cuda;
  cuda.set_host_pool(pool);
  std::vector<float> got;
  {
    Run on_cuda{cuda, {}};
    got = ops(on_cuda);
  }
  return compare(what, got, want, relative_tol(want, rel, abs));
}

constexpr int64_t kTokens = 7, kDim = 96;

CaseResult rows_case() {
  const std::vector<float> x = normal_floats(kTokens * kDim, 1), d = normal_floats(kTokens * kDim, 2);
  const std::vector<float> norm_w = normal_floats(kDim, 3), bias = normal_floats(kDim / 2, 4);
  const std::vector<int32_t> rows = {6, 0, 3};
  const std::vector<float> weights = {0.25f, -1.5f, 2.0f};
  return both("copy, gather, add, bias, scatter, norm", [&](Run& r) {
    r.b.prepare_vector(norm_w);
    r.b.prepare_vector(bias);
    float* a = r.upload(x);
    float* delta = r.upload(d);
    float* g = r.zeros(3 * kDim);
    r.b.gather_rows(a, kDim, rows.data(), 3, g);
    r.b.add_rows(a, delta, kTokens, kDim);
    r.b.add_bias(a + 8, kDim, bias, kTokens);  // a column range of each row
    r.b.add_weighted_rows(g, kDim, rows.data(), weights.data(), 3, a);
    float* strided = r.zeros(kTokens * 2 * kDim);
    r.b.copy_rows(a, kDim, strided + 5, 2 * kDim, kTokens, kDim);
    r.b.norm_rows(strided + 5, 2 * kDim, norm_w.data(), kTokens, kDim, 1e-6f, strided + 5, 2 * kDim);
    r.b.add_rows_then_norm(a, delta, norm_w.data(), kTokens, kDim, 1e-5f);
    std::vector<float> out = r.read(strided, kTokens * 2 * kDim);
    for (const float* p : {a, delta}) {
      const std::vector<float> more = r.read(p, kTokens * kDim);
      out.insert(out.end(), more.begin(), more.end());
    }
    r.b.fill_zero(g, 3 * kDim);
    const std::vector<float> zeroed = r.read(g, 3 * kDim);
    out.insert(out.end(), zeroed.begin(), zeroed.end());
    return out;
  }, 1e-5, 1e-5);
}

CaseResult rope_case(kernels::RopeStyle style) {
  const int n_pairs = 16, head_dim = 48, n_heads = 3;
  const std::vector<int32_t> positions = {0, 5, 1000, 77, 3, 9, 4096};
  std::vector<float> inv_freq(n_pairs);
  for (int i = 0; i < n_pairs; ++i) inv_freq[i] = std::pow(10000.0f, -2.0f * i / (2 * n_pairs));
  const std::vector<float> x = normal_floats(kTokens * n_heads * head_dim, 5);
  return both("rope_tables + rope", [&](Run& r) {
    r.b.prepare_vector(inv_freq);
    float* q = r.upload(x);
    float* c = r.zeros(kTokens * n_pairs);
    float* s = r.zeros(kTokens * n_pairs);
    r.b.rope_tables(positions.data(), kTokens, inv_freq.data(), n_pairs, 1.1f, c, s);
    const RopeHeads set{q, n_heads * head_dim, n_heads, head_dim};
    r.b.rope(&set, 1, kTokens, {c, s, n_pairs, style});
    return r.read(q, kTokens * n_heads * head_dim);
  }, 1e-5, 1e-5);
}

CaseResult products_case(DType t) {
  const int64_t in = 256, heads = 2, head_in = 128;
  const HostMatrix a(t, 64, in, 10), b(t, 64, in, 11), head0(t, 32, head_in, 12), head1(t, 32, head_in, 13);
  const HostMatrix table(t, 50, in, 14);
  const std::vector<float> x = normal_floats(kTokens * in, 15);
  const std::vector<int32_t> ids = {3, 49, 0, 3, 17, 8, 22};
  return both("embed, matmul_group, swiglu, heads, to_host (" + dtype_name(t) + ")", [&](Run& r) {
    const TensorView wa = r.b.prepare_matrix(a.view), wb = r.b.prepare_matrix(b.view);
    const TensorView h0 = r.b.prepare_matrix(head0.view), h1 = r.b.prepare_matrix(head1.view);
    const TensorView emb = r.b.prepare_matrix(table.view);
    float* xs = r.upload(x);
    float* e = r.zeros(kTokens * (in + 4));
    r.b.embed_rows(emb, ids.data(), kTokens, e, in + 4);
    float* y = r.zeros(kTokens * 160);
    const kernels::MatmulTask group[2] = {{&wa, y, 160}, {&wb, y + 64, 160}};
    r.b.matmul_group(group, 2, xs, kTokens);
    float* gate = r.zeros(kTokens * 64);
    float* up = r.zeros(kTokens * 64);
    r.b.matmul_swiglu(wa, wb, xs, kTokens, gate, up);
    float* hy = r.zeros(kTokens * 64);
    const kernels::MatmulTask per_head[2] = {{&h0, hy, 64}, {&h1, hy + 32, 64}};
    r.b.matmul_heads(per_head, static_cast<int>(heads), xs, in, head_in, kTokens);
    std::vector<float> logits(static_cast<size_t>(kTokens * 64));
    r.b.matmul_to_host(wb, xs, kTokens, logits.data());
    std::vector<float> out = r.read(e, kTokens * (in + 4));
    for (auto [p, n] : {std::pair{y, kTokens * 160}, {gate, kTokens * 64}, {hy, kTokens * 64}}) {
      const std::vector<float> more = r.read(p, n);
      out.insert(out.end(), more.begin(), more.end());
    }
    out.insert(out.end(), logits.begin(), logits.end());
    return out;
  }, 1e-4, 2e-3);
}

CaseResult kv_case(DType kv_dtype) {
  const int n_heads = 4, n_kv = 2, hd = 64, block = 16;
  const int64_t kv_dim = n_kv * hd, num_slots = 8 * block;
  // Two sequences: 20 cached positions + 2 new, and 1 new (decode from nothing).
  const std::vector<int32_t> query_start = {0, 2, 3};
  const std::vector<int32_t> positions = {20, 21, 0};
  const std::vector<std::vector<int32_t>> tables = {{5, 1}, {7}};
  std::vector<int64_t> slots;
  for (int p = 0; p < 22; ++p) slots.push_back((p < 16 ? 5 : 1) * block + p % 16);
  slots.push_back(7 * block);
  const std::vector<float> k = normal_floats(23 * kv_dim, 20), v = normal_floats(23 * kv_dim, 21);
  const std::vector<float> q = normal_floats(3 * n_heads * hd, 22);
  const size_t store_bytes = kv_row_bytes(kv_dtype, kv_dim) * num_slots;
  return both("write_kv + paged_attention (" + dtype_name(kv_dtype) + ")", [&](Run& r) {
    float* kc = r.zeros(static_cast<int64_t>(store_bytes / 4 + 1));
    float* vc = r.zeros(static_cast<int64_t>(store_bytes / 4 + 1));
    float* kk = r.upload(k);
    float* vv = r.upload(v);
    r.b.write_kv(kk, vv, kv_dim, 23, slots.data(),
                 kernels::PagedKVLayerOut::key_value(kc, vc, kv_dtype, num_slots, kv_dim));
    float* qq = r.upload(q);
    float* out = r.zeros(3 * n_heads * hd);
    const kernels::AttentionQueries queries{qq, n_heads, 2, query_start.data(), positions.data(), tables.data(),
                                            block, 0.125f};
    // The attention reads the 20 cached positions of sequence 0 and its 2 new ones: the
    // slots written above are positions 0..21 of sequence 0 and 0 of sequence 1.
    r.b.paged_attention(queries, kernels::PagedKVLayer::key_value(kc, vc, kv_dtype, num_slots, n_kv, hd), out);
    return r.read(out, 3 * n_heads * hd);
  }, 1e-3, kv_dtype == DType::Q8_0 ? 2e-2 : 2e-3);
}

}  // namespace

std::vector<CudaCase> cuda_backend_cases() {
  std::vector<CudaCase> cases;
  cases.push_back({"Backend_Rows", rows_case});
  cases.push_back({"Backend_Rope_Neox", [] { return rope_case(kernels::RopeStyle::NEOX); }});
  cases.push_back({"Backend_Rope_Interleaved", [] { return rope_case(kernels::RopeStyle::INTERLEAVED); }});
  for (DType t : {DType::F32, DType::F16, DType::Q8_0, DType::Q4_0})
    cases.push_back({"Backend_Products_" + dtype_name(t), [t] { return products_case(t); }});
  for (DType t : {DType::F16, DType::BF16, DType::F32, DType::Q8_0})
    cases.push_back({"Backend_KV_" + dtype_name(t), [t] { return kv_case(t); }});
  return cases;
}

}  // namespace db::cuda_test
