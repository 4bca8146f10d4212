#include "kernels/cpu/quantize_acts.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace db::kernels {

namespace {

size_t align64(size_t n) { return (n + 63) / 64 * 64; }

// Below this many activation values a fork costs more than the work it splits.
constexpr int64_t kMinParallelValues = 16384;

// Reusable, 64-byte aligned scratch of the calling thread, one per (format,
// layout), one (slot 4) for float tiles and one (slot 5) for gathered float rows.
uint8_t* scratch(int slot, size_t bytes) {
  thread_local std::vector<uint8_t> bufs[6];
  std::vector<uint8_t>& buf = bufs[slot];
  if (buf.size() < bytes + 64) buf.resize(bytes + 64);
  const auto addr = reinterpret_cast<uintptr_t>(buf.data());
  return buf.data() + ((64 - addr % 64) % 64);
}

// One token row quantized in Rows form, for scattering into the Tiles layout.
struct RowScratch {
  std::vector<int8_t> qs;
  std::vector<float> d, ds;
  std::vector<int32_t> zsum;
  std::vector<int16_t> bsums;

  void reserve(int64_t cols, int64_t nblocks) {
    qs.resize(static_cast<size_t>(cols));
    d.resize(static_cast<size_t>(nblocks));
    ds.resize(static_cast<size_t>(nblocks));
    zsum.resize(static_cast<size_t>(nblocks));
    bsums.resize(static_cast<size_t>(nblocks * 16));
  }
};

void quantize_row(const GemmKernels& k, const QuantizedActs& a, const float* x, int8_t* qs, float* d, float* ds,
                  int32_t* zsum, int16_t* bsums) {
  if (a.block == 32)
    k.quantize_q8x32(x, a.cols, qs, d, ds, zsum);
  else
    k.quantize_q8x256(x, a.cols, qs, d, bsums);
}

// Quantizes token t's row into its Tiles slots. The destinations are copied
// into locals first: the code copies are byte stores, which may alias any
// object, so the compiler would otherwise reload every pointer per block.
void quantize_tiled_row(const GemmKernels& k, const QuantizedActs& a, const float* x, int64_t t) {
  thread_local RowScratch row;
  row.reserve(a.cols, a.nblocks);
  quantize_row(k, a, x, row.qs.data(), row.d.data(), row.ds.data(), row.zsum.data(), row.bsums.data());
  const int64_t slot0 = act_slot(a, t, 0), nblocks = a.nblocks;
  const int8_t* const qs = row.qs.data();
  const float* const d = row.d.data();
  int8_t* const out_qs = a.qs;
  float* const out_d = a.d;
  if (a.block == 32) {
    const float* const ds = row.ds.data();
    const int32_t* const zsum = row.zsum.data();
    float* const out_ds = a.ds;
    int32_t* const out_zsum = a.zsum;
    for (int64_t b = 0; b < nblocks; ++b) {
      const int64_t s = slot0 + b * kActTileTokens;
      std::memcpy(out_qs + s * 32, qs + b * 32, 32);  // constant sizes: inline moves, no call
      out_d[s] = d[b];
      out_ds[s] = ds[b];
      out_zsum[s] = zsum[b];
    }
    return;
  }
  const int16_t* const bsums = row.bsums.data();
  int16_t* const out_bsums = a.bsums;
  int32_t* const out_zsum16 = a.zsum16;
  int16_t* const out_bsum32 = a.bsum32;
  for (int64_t b = 0; b < nblocks; ++b) {
    const int64_t s = slot0 + b * kActTileTokens;
    std::memcpy(out_qs + s * 256, qs + b * 256, 256);
    out_d[s] = d[b];
    const int16_t* sums = bsums + 16 * b;
    std::memcpy(out_bsums + 16 * s, sums, 16 * sizeof(int16_t));
    for (int g = 0; g < 16; ++g) out_zsum16[16 * s + g] = -32 * int32_t{sums[g]};
    for (int p = 0; p < 8; ++p) out_bsum32[8 * s + p] = static_cast<int16_t>(sums[2 * p] + sums[2 * p + 1]);
  }
}

}  // namespace

QuantizedActs quantize_acts(const GemmKernels& k, int block, ActLayout layout, const float* X, int64_t n_tokens,
                            int64_t cols, ThreadPool& pool, TokenRows rows) {
  const bool tiles = layout == ActLayout::Tiles;
  QuantizedActs a{};
  a.n_tokens = n_tokens;
  a.cols = cols;
  a.block = block;
  a.nblocks = cols / block;
  a.qs_stride = tiles ? cols : static_cast<int64_t>(align64(static_cast<size_t>(cols)));
  // Tiles: room for whole tiles of tokens.
  const int64_t slot_tokens = tiles ? (n_tokens + kActTileTokens - 1) / kActTileTokens * kActTileTokens : n_tokens;
  const size_t qs_bytes = align64(static_cast<size_t>(slot_tokens * a.qs_stride));
  const size_t d_bytes = align64(static_cast<size_t>(slot_tokens * a.nblocks) * sizeof(float));
  // Q8x32: ds and zsum (4 bytes per block each); Q8x256: 16 bsums per block,
  // and in Tiles 16 zsum16 and 8 bsum32 per block.
  const auto per_block = [&](size_t bytes) { return align64(static_cast<size_t>(slot_tokens * a.nblocks) * bytes); };
  const size_t bsums_bytes = per_block(16 * sizeof(int16_t)), zsum16_bytes = per_block(16 * sizeof(int32_t));
  const size_t extra_bytes = block == 32 ? 2 * d_bytes
                             : tiles    ? bsums_bytes + zsum16_bytes + per_block(8 * sizeof(int16_t))
                                        : bsums_bytes;
  uint8_t* base = scratch((block == 32 ? 0 : 1) + (tiles ? 2 : 0), qs_bytes + d_bytes + extra_bytes);
  a.qs = reinterpret_cast<int8_t*>(base);
  a.d = reinterpret_cast<float*>(base + qs_bytes);
  if (block == 32) {
    a.ds = reinterpret_cast<float*>(base + qs_bytes + d_bytes);
    a.zsum = reinterpret_cast<int32_t*>(base + qs_bytes + 2 * d_bytes);
  } else {
    a.bsums = reinterpret_cast<int16_t*>(base + qs_bytes + d_bytes);
    if (tiles) {
      a.zsum16 = reinterpret_cast<int32_t*>(base + qs_bytes + d_bytes + bsums_bytes);
      a.bsum32 = reinterpret_cast<int16_t*>(base + qs_bytes + d_bytes + bsums_bytes + zsum16_bytes);
    }
  }
  auto quantize_rows = [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      if (!rows.holds(t)) continue;
      const float* x = rows.row(X, t, cols);
      const int64_t v = t * a.nblocks;
      if (tiles)
        quantize_tiled_row(k, a, x, t);
      else
        quantize_row(k, a, x, a.qs + t * a.qs_stride, a.d + v, a.ds ? a.ds + v : nullptr,
                     a.zsum ? a.zsum + v : nullptr, a.bsums ? a.bsums + 16 * v : nullptr);
    }
  };
  if (n_tokens * cols < kMinParallelValues)
    quantize_rows(0, n_tokens);
  else
    pool.parallel_for(n_tokens, quantize_rows);
  return a;
}

const float* tile_float_acts(const float* X, int64_t n_tokens, int64_t cols, ThreadPool& pool, TokenRows rows) {
  const int64_t tiles = (n_tokens + kActTileTokens - 1) / kActTileTokens;
  auto* out = reinterpret_cast<float*>(scratch(4, static_cast<size_t>(tiles * cols * kActTileTokens) * sizeof(float)));
  auto regroup = [&](int64_t begin, int64_t end) {
    for (int64_t tile = begin; tile < end; ++tile) {
      const int64_t t0 = tile * kActTileTokens, nt = std::min<int64_t>(kActTileTokens, n_tokens - t0);
      float* dst = out + tile * cols * kActTileTokens;
      for (int64_t l = 0; l < nt; ++l) {
        if (!rows.holds(t0 + l)) continue;
        const float* src = rows.row(X, t0 + l, cols);
        for (int64_t k = 0; k < cols; ++k) dst[k * kActTileTokens + l] = src[k];
      }
    }
  };
  if (n_tokens * cols < kMinParallelValues)
    regroup(0, tiles);
  else
    pool.parallel_for(tiles, regroup);
  return out;
}

const float* gather_float_rows(const float* X, int64_t n_tokens, int64_t cols, ThreadPool& pool, TokenRows rows) {
  auto* out = reinterpret_cast<float*>(scratch(5, static_cast<size_t>(n_tokens * cols) * sizeof(float)));
  auto copy = [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t)
      if (rows.holds(t)) std::memcpy(out + t * cols, rows.row(X, t, cols), static_cast<size_t>(cols) * sizeof(float));
  };
  if (n_tokens * cols < kMinParallelValues)
    copy(0, n_tokens);
  else
    pool.parallel_for(n_tokens, copy);
  return out;
}

}  // namespace db::kernels
