#include "kernels/cuda/attention.h"

#include <vector>

#include "kernels/cuda/check.cuh"
#include "kernels/cuda/block_decode.h"
#include "tensor/kv_row_bytes.h"

namespace db::kernels::cuda {

namespace {

constexpr int kWarpsPerBlock = 4;
constexpr int kPerLane = kMaxAttentionHeadDim / 32;  // dims d = lane + 32 i held by a lane
constexpr int kGroup = 4;                            // positions scored together

struct Params {
  const float* q;
  int n_tokens, n_heads, group;  // group: query heads per kv head
  const int32_t* row_seq;
  const int32_t* positions;
  const int32_t* table_start;
  const int32_t* tables;
  int block_size;
  float scale;
  const uint8_t* k;
  const uint8_t* v;
  size_t k_row_bytes, v_row_bytes;  // bytes from one slot's row to the next
  int k_head_dim, v_head_dim;
  float* out;
};

template <DType T>
__global__ void attention_kernel(Params p) {
  const int lane = threadIdx.x % 32;
  const int64_t warp = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (warp >= static_cast<int64_t>(p.n_tokens) * p.n_heads) return;
  const int row = static_cast<int>(warp / p.n_heads), h = static_cast<int>(warp % p.n_heads);
  const int kvh = h / p.group;
  const int32_t pos = p.positions[row];
  const int32_t* table = p.tables + p.table_start[p.row_seq[row]];
  const float* q = p.q + warp * p.k_head_dim;

  float qv[kPerLane], acc[kPerLane];
  for (int i = 0; i < kPerLane; ++i) {
    const int d = lane + 32 * i;
    qv[i] = d < p.k_head_dim ? q[d] : 0.0f;
    acc[i] = 0.0f;
  }
  const int64_t k0 = static_cast<int64_t>(kvh) * p.k_head_dim, v0 = static_cast<int64_t>(kvh) * p.v_head_dim;
  float m = -INFINITY, l = 0.0f;
  // kGroup positions per step: their scores' reductions overlap, then the online
  // softmax takes them in position order against one running maximum.
  for (int32_t j0 = 0; j0 <= pos; j0 += kGroup) {
    float score[kGroup];
    const uint8_t* vrow[kGroup];
#pragma unroll
    for (int g = 0; g < kGroup; ++g) {
      const int32_t j = j0 + g;
      score[g] = -INFINITY;  // past the query's position: weight 0
      vrow[g] = nullptr;
      if (j > pos) continue;  // the same for all lanes: the warp stays converged
      const int64_t slot = static_cast<int64_t>(table[j / p.block_size]) * p.block_size + j % p.block_size;
      const uint8_t* krow = p.k + slot * p.k_row_bytes;
      vrow[g] = p.v + slot * p.v_row_bytes;
      float dot = 0.0f;
#pragma unroll
      for (int i = 0; i < kPerLane; ++i) {
        const int d = lane + 32 * i;
        if (d < p.k_head_dim) dot += qv[i] * load_element<T>(krow, k0 + d);
      }
      score[g] = warp_sum(dot) * p.scale;
    }
    float m_new = m;
#pragma unroll
    for (int g = 0; g < kGroup; ++g) m_new = fmaxf(m_new, score[g]);  // finite: position j0 <= pos
    const float correction = expf(m - m_new);
    l *= correction;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) acc[i] *= correction;
#pragma unroll
    for (int g = 0; g < kGroup; ++g) {
      if (vrow[g] == nullptr) continue;
      const float weight = expf(score[g] - m_new);
      l += weight;
#pragma unroll
      for (int i = 0; i < kPerLane; ++i) {
        const int d = lane + 32 * i;
        if (d < p.v_head_dim) acc[i] += weight * load_element<T>(vrow[g], v0 + d);
      }
    }
    m = m_new;
  }
  float* o = p.out + warp * p.v_head_dim;
  for (int i = 0; i < kPerLane; ++i) {
    const int d = lane + 32 * i;
    if (d < p.v_head_dim) o[d] = acc[i] / l;
  }
}

}  // namespace

DeviceAttentionIndex upload_attention_index(const AttentionQueries& queries, int64_t num_slots) {
  if (queries.block_size <= 0) throw Error("CUDA attention: block_size must be positive");
  const int n_tokens = queries.query_start[queries.n_seqs];
  std::vector<int32_t> row_seq(n_tokens), positions(queries.positions, queries.positions + n_tokens);
  std::vector<int32_t> table_start{0}, tables;
  for (int s = 0; s < queries.n_seqs; ++s) {
    const std::vector<int32_t>& table = queries.block_tables[s];
    for (int32_t b : table)
      if (b < 0 || static_cast<int64_t>(b + 1) * queries.block_size > num_slots)
        throw Error("CUDA attention: sequence " + std::to_string(s) + " names block " + std::to_string(b) +
                    " outside the cache");
    for (int r = queries.query_start[s]; r < queries.query_start[s + 1]; ++r) {
      row_seq[r] = s;
      if (positions[r] < 0 || static_cast<int64_t>(positions[r]) / queries.block_size >= static_cast<int64_t>(table.size()))
        throw Error("CUDA attention: the block table of sequence " + std::to_string(s) + " does not cover position " +
                    std::to_string(positions[r]));
    }
    tables.insert(tables.end(), table.begin(), table.end());
    table_start.push_back(static_cast<int32_t>(tables.size()));
  }
  if (tables.empty()) tables.push_back(0);  // a valid device pointer even for an empty step
  DeviceAttentionIndex index;
  index.row_seq = to_device(row_seq);
  index.positions = to_device(positions);
  index.table_start = to_device(table_start);
  index.tables = to_device(tables);
  index.n_tokens = n_tokens;
  index.block_size = queries.block_size;
  return index;
}

void paged_attention(const float* q, int n_heads, float scale, const DeviceAttentionIndex& index,
                     const PagedKVLayer& kv, float* out, Stream& stream) {
  if (kv.n_kv_heads <= 0 || n_heads % kv.n_kv_heads != 0)
    throw Error("CUDA attention: " + std::to_string(n_heads) + " query heads for " + std::to_string(kv.n_kv_heads) +
                " kv heads");
  if (kv.k_head_dim <= 0 || kv.v_head_dim <= 0 || kv.k_head_dim > kMaxAttentionHeadDim ||
      kv.v_head_dim > kMaxAttentionHeadDim)
    throw Error("CUDA attention: head widths " + std::to_string(kv.k_head_dim) + " / " +
                std::to_string(kv.v_head_dim) + " outside 1.." + std::to_string(kMaxAttentionHeadDim));
  if (index.n_tokens == 0) return;
  Params p{};
  p.q = q;
  p.n_tokens = index.n_tokens;
  p.n_heads = n_heads;
  p.group = n_heads / kv.n_kv_heads;
  p.row_seq = index.row_seq.as<int32_t>();
  p.positions = index.positions.as<int32_t>();
  p.table_start = index.table_start.as<int32_t>();
  p.tables = index.tables.as<int32_t>();
  p.block_size = index.block_size;
  p.scale = scale;
  p.k = static_cast<const uint8_t*>(kv.k);
  p.v = static_cast<const uint8_t*>(kv.v);
  p.k_row_bytes = kv_row_bytes(kv.dtype, kv.k_row_stride);
  p.v_row_bytes = kv_row_bytes(kv.dtype, kv.v_row_stride);
  p.k_head_dim = kv.k_head_dim;
  p.v_head_dim = kv.v_head_dim;
  p.out = out;
  const dim3 grid(blocks_for(static_cast<int64_t>(index.n_tokens) * n_heads, kWarpsPerBlock));
  const dim3 block(32 * kWarpsPerBlock);
  cudaStream_t s = stream_of(stream.handle());
  switch (kv.dtype) {
    case DType::F32: attention_kernel<DType::F32><<<grid, block, 0, s>>>(p); break;
    case DType::F16: attention_kernel<DType::F16><<<grid, block, 0, s>>>(p); break;
    case DType::BF16: attention_kernel<DType::BF16><<<grid, block, 0, s>>>(p); break;
    case DType::Q8_0: attention_kernel<DType::Q8_0><<<grid, block, 0, s>>>(p); break;
    default: throw Error("CUDA attention: unsupported cache type " + dtype_name(kv.dtype));
  }
  check_launch("attention_kernel");
}

}  // namespace db::kernels::cuda
