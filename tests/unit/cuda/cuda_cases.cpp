#include "cuda_cases.h"

#include <cmath>
#include <sstream>
#include <utility>

#include "kernels/cpu/activations.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/rms_norm.h"
#include "kernels/cpu/rope.h"
#include "kernels/cuda/attention.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/matmul.h"
#include "kernels/dequantize.h"
#include "kernels/quantize.h"
#include "kernels/quantize_k.h"
#include "tensor/dtype.h"
#include "util/random.h"
#include "util/thread_pool.h"

namespace db::cuda_test {

CaseResult compare(const std::string& what, const std::vector<float>& got, const std::vector<float>& want,
                   const std::vector<double>& tol) {
  if (got.size() != want.size())
    return {false, what + ": size " + std::to_string(got.size()) + " != " + std::to_string(want.size())};
  double worst_diff = 0, worst_share = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double diff = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (!(diff <= tol[i])) {
      std::ostringstream os;
      os << what << ": element " << i << " is " << got[i] << " on the device, " << want[i] << " on the CPU (tolerance "
         << tol[i] << ")";
      return {false, os.str()};
    }
    if (diff / tol[i] > worst_share) {
      worst_share = diff / tol[i];
      worst_diff = diff;
    }
  }
  std::ostringstream os;
  os << what << ": " << got.size() << " elements, largest |device - CPU| " << worst_diff << " ("
     << 100.0 * worst_share << "% of its tolerance)";
  return {true, os.str()};
}

std::vector<float> normal_floats(size_t n, uint64_t seed, float sigma) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(rng.normal()) * sigma;
  return v;
}

std::vector<double> relative_tol(const std::vector<float>& want, double rel, double abs) {
  std::vector<double> tol(want.size());
  for (size_t i = 0; i < want.size(); ++i) tol[i] = rel * std::fabs(want[i]) + abs;
  return tol;
}

namespace {

using namespace db::kernels;
namespace gpu = db::kernels::cuda;


// rows rows of n floats stored in t (quantize_row, or the Q4_K quantizer).
std::vector<uint8_t> store_rows(DType t, const std::vector<float>& x, int64_t rows, int64_t n) {
  const size_t rb = row_bytes(t, n);
  std::vector<uint8_t> out(rb * static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    if (t == DType::Q4_K)
      quantize_row_q4_k(x.data() + r * n, reinterpret_cast<BlockQ4_K*>(out.data() + r * rb), n);
    else
      quantize_row(t, x.data() + r * n, out.data() + r * rb, n);
  }
  return out;
}


// Reference: the CPU's dequantized weights times x, summed in double; the tolerance is
// 1e-5 of the sum of |w x| (f32 sums over up to a few thousand products).
void reference_matmul(DType t, const std::vector<uint8_t>& w, int64_t rows, int64_t cols, const float* x,
                      float* y, double* tol) {
  std::vector<float> row(static_cast<size_t>(cols));
  const size_t rb = row_bytes(t, cols);
  for (int64_t r = 0; r < rows; ++r) {
    dequantize_row_data(t, w.data() + r * rb, row.data(), cols);
    double sum = 0, abs_sum = 0;
    for (int64_t c = 0; c < cols; ++c) {
      sum += static_cast<double>(row[c]) * x[c];
      abs_sum += std::fabs(static_cast<double>(row[c]) * x[c]);
    }
    y[r] = static_cast<float>(sum);
    tol[r] = 1e-5 * abs_sum + 1e-6;
  }
}

CaseResult matmul_case(DType t, int64_t rows, int64_t cols, int64_t tokens) {
  const std::vector<uint8_t> w = store_rows(t, normal_floats(rows * cols, 1, 0.05f), rows, cols);
  const std::vector<float> x = normal_floats(tokens * cols, 2);
  std::vector<float> want(tokens * rows);
  std::vector<double> tol(want.size());
  for (int64_t k = 0; k < tokens; ++k)
    reference_matmul(t, w, rows, cols, x.data() + k * cols, want.data() + k * rows, tol.data() + k * rows);
  gpu::Stream stream;
  const gpu::DeviceMatrix dw = gpu::upload_matrix(t, w.data(), rows, cols);
  gpu::DeviceBuffer dx = gpu::to_device(x), dy(want.size() * sizeof(float));
  gpu::matmul(dw, dx.as<float>(), tokens, dy.as<float>(), stream);
  stream.synchronize();
  return compare("matmul " + dtype_name(t), gpu::to_host<float>(dy, want.size()), want, tol);
}

CaseResult grouped_matmul_case(DType t) {
  const int64_t rows = 64, cols = 256, n_groups = 3, n_tokens = 6;
  const std::vector<uint8_t> w = store_rows(t, normal_floats(n_groups * rows * cols, 3, 0.05f), n_groups * rows, cols);
  const std::vector<float> x = normal_floats(n_tokens * cols, 4);
  const std::vector<int32_t> group_start = {0, 4, 4, 11};  // expert 1 gets no token
  const std::vector<int32_t> token_of = {0, 2, 3, 5, 1, 2, 3, 4, 5, 0, 2};
  std::vector<float> want(token_of.size() * rows);
  std::vector<double> tol(want.size());
  for (int g = 0; g < n_groups; ++g) {
    const std::vector<uint8_t> wg(w.begin() + g * rows * row_bytes(t, cols), w.begin() + (g + 1) * rows * row_bytes(t, cols));
    for (int e = group_start[g]; e < group_start[g + 1]; ++e)
      reference_matmul(t, wg, rows, cols, x.data() + token_of[e] * cols, want.data() + e * rows, tol.data() + e * rows);
  }
  gpu::Stream stream;
  const gpu::DeviceMatrix dw = gpu::upload_matrix(t, w.data(), rows, cols, n_groups);
  gpu::DeviceBuffer dx = gpu::to_device(x), dstart = gpu::to_device(group_start), dtok = gpu::to_device(token_of);
  gpu::DeviceBuffer dout(want.size() * sizeof(float));
  gpu::grouped_matmul(dw, dx.as<float>(), dstart.as<int32_t>(), dtok.as<int32_t>(),
                      static_cast<int64_t>(token_of.size()), dout.as<float>(), stream);
  stream.synchronize();
  return compare("grouped matmul " + dtype_name(t), gpu::to_host<float>(dout, want.size()), want, tol);
}

CaseResult rms_norm_case(int64_t n_rows, int64_t dim) {
  const std::vector<float> x = normal_floats(n_rows * dim, 5), w = normal_floats(dim, 6);
  std::vector<float> want(x.size());
  kernels::rms_norm_rows(x.data(), w.data(), n_rows, dim, 1e-6f, want.data());
  gpu::Stream stream;
  gpu::DeviceBuffer dx = gpu::to_device(x), dw = gpu::to_device(w), dy(x.size() * sizeof(float));
  gpu::rms_norm_rows(dx.as<float>(), dw.as<float>(), n_rows, dim, 1e-6f, dy.as<float>(), stream);
  stream.synchronize();
  return compare("rms_norm", gpu::to_host<float>(dy, x.size()), want, relative_tol(want, 1e-5, 1e-6));
}

CaseResult rope_case(RopeStyle style, float mscale) {
  const int n_tokens = 4, n_heads = 3, head_dim = 64, n_pairs = 16;  // rotary on half of each head
  const std::vector<int32_t> positions = {0, 1, 777, 4095};
  std::vector<float> inv_freq(n_pairs);
  for (int i = 0; i < n_pairs; ++i) inv_freq[i] = std::pow(10000.0f, -2.0f * i / (2 * n_pairs));
  const std::vector<float> x = normal_floats(static_cast<size_t>(n_tokens) * n_heads * head_dim, 7);
  std::vector<float> want = x, c(n_pairs), s(n_pairs);
  for (int t = 0; t < n_tokens; ++t) {
    rope_angles(positions[t], inv_freq.data(), n_pairs, mscale, c.data(), s.data());
    rope_rotate(want.data() + static_cast<size_t>(t) * n_heads * head_dim, n_heads, head_dim, n_pairs, style, c.data(),
                s.data());
  }
  gpu::Stream stream;
  gpu::DeviceBuffer dx = gpu::to_device(x), dpos = gpu::to_device(positions), dfreq = gpu::to_device(inv_freq);
  gpu::rope(dx.as<float>(), n_tokens, n_heads, head_dim, n_pairs, style, dpos.as<int32_t>(), dfreq.as<float>(), mscale,
            stream);
  stream.synchronize();
  return compare("rope", gpu::to_host<float>(dx, x.size()), want, relative_tol(want, 1e-6, 1e-6));
}

CaseResult swiglu_case() {
  const int64_t n = 10007;
  std::vector<float> gate = normal_floats(n, 8, 4.0f), up = normal_floats(n, 9), want(n);
  kernels::swiglu(gate.data(), up.data(), n, want.data());
  gpu::Stream stream;
  gpu::DeviceBuffer dg = gpu::to_device(gate), du = gpu::to_device(up), dout(n * sizeof(float));
  gpu::swiglu(dg.as<float>(), du.as<float>(), n, dout.as<float>(), stream);
  stream.synchronize();
  return compare("swiglu", gpu::to_host<float>(dout, n), want, relative_tol(want, 1e-5, 1e-7));
}

// One attention step: sequences of kv_len[s] cached positions (random K/V in dtype,
// blocks in a shuffled order) whose last n_rows[s] positions are this step's queries
// (1: decode; more: a prefill chunk).
struct AttentionShape {
  DType dtype;
  bool latent;  // MLA: one kv head, k_head_dim 576, v_head_dim 512, v inside k
  int n_heads, n_kv_heads, head_dim;
  int block_size;
  std::vector<int> kv_len, n_rows;
};

CaseResult attention_case(const AttentionShape& a) {
  const int n_seqs = static_cast<int>(a.kv_len.size());
  const int k_dim = a.latent ? 576 : a.head_dim, v_dim = a.latent ? 512 : a.head_dim;
  const int n_kv = a.latent ? 1 : a.n_kv_heads;
  std::vector<std::vector<int32_t>> tables(n_seqs);
  int n_blocks = 0;
  for (int s = 0; s < n_seqs; ++s) n_blocks += (a.kv_len[s] + a.block_size - 1) / a.block_size;
  std::vector<int32_t> order(n_blocks + 2);  // two blocks nobody uses
  for (int b = 0; b < n_blocks + 2; ++b) order[b] = b;
  Rng rng(10);
  for (int b = n_blocks + 1; b > 0; --b) std::swap(order[b], order[rng.below(b + 1)]);
  for (int s = 0, next = 0; s < n_seqs; ++s)
    for (int j = 0; j < a.kv_len[s]; j += a.block_size) tables[s].push_back(order[next++]);
  const int64_t num_slots = static_cast<int64_t>(n_blocks + 2) * a.block_size;

  const int64_t k_stride = static_cast<int64_t>(n_kv) * k_dim, v_stride = static_cast<int64_t>(n_kv) * v_dim;
  const std::vector<uint8_t> k = store_rows(a.dtype, normal_floats(num_slots * k_stride, 11), num_slots, k_stride);
  const std::vector<uint8_t> v =
      a.latent ? std::vector<uint8_t>{} : store_rows(a.dtype, normal_floats(num_slots * v_stride, 12), num_slots, v_stride);
  const PagedKVLayer host_kv = a.latent ? PagedKVLayer::latent(k.data(), a.dtype, num_slots, k_dim, v_dim)
                                        : PagedKVLayer::key_value(k.data(), v.data(), a.dtype, num_slots, n_kv, k_dim);

  std::vector<int32_t> query_start{0}, positions;
  for (int s = 0; s < n_seqs; ++s) {
    for (int p = a.kv_len[s] - a.n_rows[s]; p < a.kv_len[s]; ++p) positions.push_back(p);
    query_start.push_back(static_cast<int32_t>(positions.size()));
  }
  const int n_tokens = static_cast<int>(positions.size());
  const std::vector<float> q = normal_floats(static_cast<size_t>(n_tokens) * a.n_heads * k_dim, 13);
  const float scale = 1.0f / std::sqrt(static_cast<float>(k_dim));
  const AttentionQueries queries{q.data(), a.n_heads, n_seqs, query_start.data(), positions.data(),
                                 tables.data(), a.block_size, scale};
  std::vector<float> want(static_cast<size_t>(n_tokens) * a.n_heads * v_dim);
  {
    AttentionWorkspace ws;
    ThreadPool pool(2);
    paged_attention(queries, host_kv, want.data(), ws, pool);
  }

  gpu::Stream stream;
  gpu::DeviceBuffer dk = gpu::to_device(k), dv = a.latent ? gpu::DeviceBuffer{} : gpu::to_device(v);
  gpu::DeviceBuffer dq = gpu::to_device(q), dout(want.size() * sizeof(float));
  PagedKVLayer device_kv = host_kv;
  device_kv.k = dk.data();
  device_kv.v = a.latent ? dk.data() : dv.data();
  const gpu::DeviceAttentionIndex index = gpu::upload_attention_index(queries, num_slots);
  gpu::paged_attention(dq.as<float>(), a.n_heads, scale, index, device_kv, dout.as<float>(), stream);
  stream.synchronize();
  return compare("attention " + dtype_name(a.dtype), gpu::to_host<float>(dout, want.size()), want,
                 relative_tol(want, 1e-4, 1e-5));
}

}  // namespace

std::vector<CudaCase> cuda_cases() {
  std::vector<CudaCase> cases;
  for (DType t : {DType::Q4_0, DType::Q8_0, DType::Q4_K, DType::BF16, DType::F16}) {
    const int64_t cols = t == DType::Q4_K ? 512 : 544;  // 17 blocks of 32: lanes with one and with no second unit
    cases.push_back({"Gemv_" + dtype_name(t), [t, cols] { return matmul_case(t, 97, cols, 1); }});
    cases.push_back({"Gemm_" + dtype_name(t), [t, cols] { return matmul_case(t, 97, cols, 13); }});
  }
  cases.push_back({"GroupedMatmul_Q8_0", [] { return grouped_matmul_case(DType::Q8_0); }});
  cases.push_back({"GroupedMatmul_Q4_K", [] { return grouped_matmul_case(DType::Q4_K); }});
  cases.push_back({"RmsNorm", [] { return rms_norm_case(5, 1536); }});
  cases.push_back({"RmsNorm_OddWidth", [] { return rms_norm_case(3, 100); }});
  cases.push_back({"Rope_Neox", [] { return rope_case(RopeStyle::NEOX, 1.0f); }});
  cases.push_back({"Rope_Interleaved_YarnScale", [] { return rope_case(RopeStyle::INTERLEAVED, 1.2f); }});
  cases.push_back({"SwiGLU", swiglu_case});
  cases.push_back({"Attention_MhaDecode_F32",
                   [] { return attention_case({DType::F32, false, 4, 4, 64, 16, {1, 37, 100}, {1, 1, 1}}); }});
  cases.push_back({"Attention_GqaChunkedPrefill_F16",
                   [] { return attention_case({DType::F16, false, 8, 2, 128, 16, {53, 70}, {33, 1}}); }});
  cases.push_back({"Attention_GqaDecode_LongContext_F16",  // a 188-block table; a group of 4 past the end
                   [] { return attention_case({DType::F16, false, 8, 2, 128, 16, {3001, 18}, {1, 1}}); }});
  cases.push_back({"Attention_GqaDecode_BF16",
                   [] { return attention_case({DType::BF16, false, 8, 2, 128, 32, {5, 300}, {1, 1}}); }});
  cases.push_back({"Attention_MhaPrefill_Q8_0",
                   [] { return attention_case({DType::Q8_0, false, 2, 2, 64, 16, {40}, {40}}); }});
  cases.push_back({"Attention_MlaLatentDecode_F16",
                   [] { return attention_case({DType::F16, true, 16, 1, 0, 16, {1, 90}, {1, 1}}); }});
  cases.push_back({"Attention_MlaLatentChunk_Q8_0",
                   [] { return attention_case({DType::Q8_0, true, 16, 1, 0, 16, {45}, {12}}); }});
  for (CudaCase& c : cuda_backend_cases()) cases.push_back(std::move(c));
  return cases;
}

}  // namespace db::cuda_test
