// The CPU matmul driver: validates the operands, quantizes the activations when
// the weights are quantized, and walks (row tile x token tile) kernels over the
// thread pool. The rows are cut into chunks of row tiles that the threads claim
// dynamically; inside a chunk each tile of weight rows stays in L1 while every
// token tile of the current token chunk passes over it (float panels: each
// block of kFloatPanelKBlock elements of a tile, see run_float_panels). A
// row's result never depends on the chunking, the thread count or the other
// tokens of the batch.
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/cpu/activations.h"
#include "kernels/cpu/matmul_dispatch.h"
#include "kernels/cpu/panels.h"
#include "kernels/cpu/quantize_acts.h"
#include "kernels/dequantize.h"
#include "kernels/matmul.h"
#include "kernels/weight_replicas.h"
#include "util/error.h"

namespace db::kernels {

namespace {

// Activation bytes per token chunk: the chunk is re-read for every row tile,
// so it stays in L2: half of it, from 256 KB to 512 KB. Smaller chunks hold
// fewer token tiles for long rows; a chunk of a single tile streams its
// weights from memory again for every 16 tokens and cannot expand its groups.
// Chunks above 512 KB gain nothing (measurements: bench/kernels/README.md).
int64_t act_chunk_bytes() {
  static const int64_t bytes = std::clamp<int64_t>(cpu_features().l2_bytes / 2, 256 * 1024, 512 * 1024);
  return bytes;
}

GemmTileFn kernel_for(const GemmKernels& k, const TensorView& w) {
  const WeightKernels* kernels = weight_kernels(k, w.dtype);
  if (kernels == nullptr) return nullptr;
  return w.layout == TensorLayout::Panels16 ? kernels->panel.gemm : kernels->rows;
}

// Row tiles ahead of the current one whose weights are prefetched: a product
// with few tokens streams its weights from memory, and the hardware prefetcher
// alone keeps too few cache lines in flight.
constexpr int64_t kPrefetchTiles = 2;

// Prefetches into L2 slice k of n_slices (64-byte aligned) of the `bytes`
// bytes at `next`.
void prefetch_slice(const uint8_t* next, int64_t bytes, int64_t k, int64_t n_slices) {
  const int64_t slice = (bytes / n_slices + 63) / 64 * 64, end = std::min(bytes, (k + 1) * slice);
  for (int64_t off = k * slice; off < end; off += 64) __builtin_prefetch(next + off, 0, 2);  // prefetcht1 on x86
}

// Prefetches weight rows [r, r + n) (clipped to the matrix) into the caches.
void prefetch_rows(const uint8_t* w, int64_t stride, int64_t rows, int64_t r, int64_t n) {
  const int64_t end = std::min(rows, r + n);
  if (r >= end) return;
  const uint8_t* first = w + r * stride;
  const int64_t bytes = (end - r) * stride;
  for (int64_t off = 0; off < bytes; off += 64) __builtin_prefetch(first + off, 0, 3);
}

// How a product's weight rows fall into row tiles: `rows` rows per tile, the
// tile starting `bytes` bytes after the previous one (Rows layout: tile_rows
// rows; Panels16: one 16-row group).
struct RowTiling {
  int rows;
  int64_t bytes;
  int tokens;     // tokens per kernel call
  bool prefetch;  // prefetch whole tiles ahead (the panel kernels stream their own prefetches)
};

// Runs row tiles [row_tile_begin, row_tile_end) over all tokens, calling
// kernel(tile, row tile index) for each (row tile, token tile). Token t of the
// product is input token base.t0 + t (inputs side by side) and output row t.
template <class Kernel>
void run_tiles(const RowTiling& tiling, const Kernel& kernel, GemmTile base, int64_t rows, int64_t n_tokens,
               int64_t chunk_tokens, int64_t row_tile_begin, int64_t row_tile_end) {
  const uint8_t* w0 = base.w;
  float* y0 = base.y;
  const int64_t n_tiles = (rows + tiling.rows - 1) / tiling.rows;
  for (int64_t tc = 0; tc < n_tokens; tc += chunk_tokens) {
    const int64_t tc_end = std::min(n_tokens, tc + chunk_tokens);
    for (int64_t rt = row_tile_begin; rt < row_tile_end; ++rt) {
      const int64_t r0 = rt * tiling.rows;
      if (tiling.prefetch) prefetch_rows(w0, tiling.bytes, n_tiles, rt + kPrefetchTiles, 1);
      GemmTile tile = base;
      tile.w = w0 + rt * tiling.bytes;
      tile.nr = static_cast<int>(std::min<int64_t>(tiling.rows, rows - r0));
      for (int64_t t0 = tc; t0 < tc_end; t0 += tiling.tokens) {
        tile.t0 = base.t0 + t0;
        tile.nt = static_cast<int>(std::min<int64_t>(tiling.tokens, tc_end - t0));
        tile.y = y0 + t0 * base.ldy + r0;
        kernel(tile, rt);
      }
    }
  }
}

void check_operands(const TensorView& W, const float* X, int64_t n_tokens, const float* Y) {
  if (!can_dequantize(W.dtype))
    throw Error("matmul: weight dtype " + dtype_name(W.dtype) + " (shape " + W.shape_str() +
                ") is not supported; supported: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K");
  if (W.shape.size() < 2) throw Error("matmul: weight must be a matrix, got shape " + W.shape_str());
  if (W.cols() % block_size(W.dtype) != 0)
    throw Error("matmul: weight row length " + std::to_string(W.cols()) + " is not a multiple of the " +
                dtype_name(W.dtype) + " block size " + std::to_string(block_size(W.dtype)));
  if (n_tokens < 0) throw Error("matmul: negative token count " + std::to_string(n_tokens));
  if (n_tokens > 0 && W.rows() > 0 && (W.data == nullptr || X == nullptr || Y == nullptr))
    throw Error("matmul: null weight, input or output pointer (weight shape " + W.shape_str() + ")");
}

// Float panels with more than one token tile: elements per kernel call (a
// group's 256 elements of F32 are 16 KB, a token tile's 16 KB), at least this
// many chunks, and about this many groups per chunk.
constexpr int64_t kFloatPanelKBlock = 256;
constexpr int64_t kMinFloatPanelChunks = 16;
constexpr int64_t kFloatPanelGroupsPerChunk = 4;

// Weight bytes per work chunk handed to a thread: small enough that a thread
// the OS preempts holds up little, large enough to amortize the hand-off and
// the chunk's start, where the weights' prefetches have yet to run ahead (a
// chunk's last prefetches fetch the next chunk's start, which another thread
// may claim). A product's chunks are a multiple of the thread count, so that
// its equal chunks leave no thread idle at its end and a product smaller than
// one chunk still runs on every thread (measurements: bench/kernels/README.md).
constexpr int64_t kChunkWeightBytes = 256 * 1024;
// Tokens per chunk's worth of work per weight byte (see prepare()).
constexpr int64_t kTokensPerChunkPass = 16;

// One product of a group, ready to run: its kernel, tile template (base.t0:
// its first input token among the group's, see run_tiles) and chunking.
struct Product {
  GemmTileFn fn;
  int64_t w_bytes;                         // the weight's bytes from base.w
  const PanelKernels* expanded = nullptr;  // set: expand each group once for its token tiles
  int64_t expanded_bytes = 0;              // bytes of one expanded group
  GemmTile base;
  RowTiling tiling;
  int64_t rows;
  int64_t chunk_tokens;  // tokens per pass over the rows (activations stay in L2)
  int64_t row_tiles;
  int64_t n_chunks;      // row tiles are split into this many contiguous chunks
  bool float_panels;     // runs in run_float_panels

  int64_t tile_begin(int64_t c) const { return row_tiles * c / n_chunks; }
};

// The activations of one step in every format and layout a group needs
// (prepared lazily, once): n_tokens rows of X, of which `rows` are tokens.
class SharedActs {
 public:
  SharedActs(const GemmKernels& k, const float* X, int64_t n_tokens, int64_t cols, ThreadPool& pool,
             TokenRows rows = {})
      : k_(k), x_(X), n_tokens_(n_tokens), cols_(cols), pool_(pool), rows_(rows) {}
  int64_t n_tokens() const { return n_tokens_; }
  const QuantizedActs* get(int block, ActLayout layout) {
    const int i = (block == 32 ? 0 : 1) + (layout == ActLayout::Tiles ? 2 : 0);
    if (!ready_[i]) {
      acts_[i] = quantize_acts(k_, block, layout, x_, n_tokens_, cols_, pool_, rows_);
      ready_[i] = true;
    }
    return &acts_[i];
  }
  // The float panel kernels' view of the tokens (kernels/cpu/quantize_acts.h):
  // regrouped in tiles unless there is a single token.
  const float* float_tiles() {
    if (n_tokens_ == 1) return x_;
    if (float_tiles_ == nullptr) float_tiles_ = tile_float_acts(x_, n_tokens_, cols_, pool_, rows_);
    return float_tiles_;
  }
  // The float Rows kernels' view: contiguous rows, X itself unless it holds
  // several products' inputs side by side.
  const float* float_rows() {
    if (rows_.period == 0) return x_;
    if (float_rows_ == nullptr) float_rows_ = gather_float_rows(x_, n_tokens_, cols_, pool_, rows_);
    return float_rows_;
  }

 private:
  const GemmKernels& k_;
  const float* x_;
  int64_t n_tokens_, cols_;
  ThreadPool& pool_;
  TokenRows rows_;
  QuantizedActs acts_[4]{};
  bool ready_[4] = {false, false, false, false};
  const float* float_tiles_ = nullptr;
  const float* float_rows_ = nullptr;
};

// Prepares task `task` over n_tokens tokens starting at input token t_base of `acts`.
Product prepare(const GemmKernels& k, IsaLevel level, const MatmulTask& task, const float* X, int64_t n_tokens,
                int64_t t_base, SharedActs& acts, int threads) {
  const TensorView& W = *task.w;
  Product p{};
  p.fn = kernel_for(k, W);
  DB_CHECK(p.fn != nullptr, "no " + dtype_name(W.dtype) + " kernel at level " + isa_name(level));
  p.rows = W.rows();
  p.float_panels = W.layout == TensorLayout::Panels16 && is_float_panel(W.dtype);
  p.base.w = static_cast<const uint8_t*>(W.data);
  p.w_bytes = static_cast<int64_t>(W.nbytes());
  p.base.w_stride = static_cast<int64_t>(W.row_nbytes());
  if (W.layout == TensorLayout::Panels16) {
    const int max_tokens = weight_kernels(k, W.dtype)->panel.max_tokens;
    p.tiling = {kPanelRows, panel_group_bytes(W.dtype, W.cols()), max_tokens > 0 ? max_tokens : kPanelTileTokens,
                false};
  }
  else
    p.tiling = {k.tile_rows, p.base.w_stride * k.tile_rows, k.tile_tokens, true};
  p.base.cols = W.cols();
  p.base.y = task.y;
  p.base.ldy = task.ldy > 0 ? task.ldy : p.rows;
  p.base.t0 = t_base;
  int64_t act_row_bytes = W.cols() * static_cast<int64_t>(sizeof(float));
  if (is_quantized(W.dtype)) {
    // The panel kernels read token-interleaved tiles (their token tiles never straddle one).
    static_assert(kPanelTileTokens == kActTileTokens);
    const bool panels = W.layout == TensorLayout::Panels16;
    p.base.acts = acts.get(block_size(W.dtype) == 256 ? 256 : 32, panels ? ActLayout::Tiles : ActLayout::Rows);
    act_row_bytes = p.base.acts->qs_stride;
  } else if (p.float_panels) {
    p.base.x = acts.float_tiles();
    p.base.x_kstride = acts.n_tokens() == 1 ? 1 : kActTileTokens;
  } else {
    p.base.x = acts.float_rows();
  }
  p.chunk_tokens = std::max<int64_t>(1, act_chunk_bytes() / act_row_bytes / p.tiling.tokens) * p.tiling.tokens;
  p.row_tiles = (p.rows + p.tiling.rows - 1) / p.tiling.rows;
  // Chunks by weight bytes, and finer the more tokens pass over each byte, so
  // that compute-bound products (prompts, large batches) balance across threads.
  const int64_t bytes = p.tiling.bytes * p.row_tiles;
  const int64_t token_passes = (n_tokens + kTokensPerChunkPass - 1) / kTokensPerChunkPass;
  const int64_t chunks = (bytes + kChunkWeightBytes - 1) / kChunkWeightBytes * token_passes;
  p.n_chunks = std::clamp<int64_t>((chunks + threads - 1) / threads * threads, 1, p.row_tiles);
  if (W.layout == TensorLayout::Panels16 && n_tokens > kPanelTileTokens && p.chunk_tokens > kPanelTileTokens) {
    const PanelKernels& pk = weight_kernels(k, W.dtype)->panel;
    if (pk.expand != nullptr) {
      p.expanded = &pk;
      p.expanded_bytes = W.cols() / panel_block_elems(W.dtype) * pk.expanded_block_bytes;
    }
  }
  if (p.float_panels && n_tokens > kPanelTileTokens) {
    // Several groups per chunk, so that a block of the tokens' elements stays
    // in L2 while the chunk's groups pass over it (run_float_panels).
    p.n_chunks = std::clamp<int64_t>(std::max<int64_t>(p.row_tiles / kFloatPanelGroupsPerChunk, kMinFloatPanelChunks),
                                     1, p.row_tiles);
  }
  return p;
}

// The product as the calling thread reads it: its weights from this thread's
// node's copy under --numa replicate (kernels/weight_replicas.h), else as they
// are. Every parallel region of this file calls it once per chunk.
Product on_this_node(const Product& p) {
  Product q = p;
  q.base.w = local_weights(p.base.w, static_cast<size_t>(p.w_bytes));
  return q;
}

// Runs chunk c of a float panel product: for each block of kFloatPanelKBlock
// elements, every group of the chunk over every token tile, so that a group's
// block of weights stays in L1 while the tokens pass and the tokens' block in
// L2 while the groups pass. The kernels continue each sum where the previous
// block left it in y, so the result equals one pass over whole rows. With at
// most one token tile there is nothing to reuse: whole rows per call.
void run_float_panels(const Product& p, int64_t n_tokens, int64_t c) {
  const int64_t cols = p.base.cols, k_block = n_tokens > kPanelTileTokens ? kFloatPanelKBlock : cols;
  const int64_t g0 = p.tile_begin(c), g1 = p.tile_begin(c + 1);
  GemmTile tile = p.base;
  const int64_t t_base = p.base.t0;
  for (int64_t k0 = 0; k0 < cols; k0 += k_block) {
    tile.k0 = k0;
    tile.k1 = std::min(cols, k0 + k_block);
    for (int64_t g = g0; g < g1; ++g) {
      const int64_t r0 = g * kPanelRows;
      tile.w = p.base.w + g * p.tiling.bytes;
      tile.nr = static_cast<int>(std::min<int64_t>(kPanelRows, p.rows - r0));
      for (int64_t t0 = 0; t0 < n_tokens; t0 += kPanelTileTokens) {
        tile.t0 = t_base + t0;
        tile.nt = static_cast<int>(std::min<int64_t>(kPanelTileTokens, n_tokens - t0));
        tile.y = p.base.y + t0 * p.base.ldy + r0;
        tile.x = p.base.x + tile.t0 * cols;  // token tile tile.t0 / 16 (or the single token)
        p.fn(tile);
      }
    }
  }
}

// Runs chunk c of a product whose groups have an expanded form: each group is
// expanded once into this thread's scratch, then every token tile of the
// token chunk passes over the expansion, so the unpacking is not repeated per
// token tile.
//
// Meanwhile each token tile prefetches a slice of the next group, which its
// expansion then reads from L2, not memory.
//
// With `up` (the up weights of a fused gate whose gate is p), both groups are
// expanded and the fused kernel runs over the two expansions.
// (Measurements of all three: bench/kernels/README.md.)
void run_expanded_chunk(const Product& p, int64_t n_tokens, int64_t c, const uint8_t* up = nullptr) {
  thread_local std::vector<uint8_t> scratch;
  const PanelKernels& pk = *p.expanded;
  const auto stride = static_cast<size_t>((p.expanded_bytes + 63) / 64 * 64);
  const size_t bytes = up == nullptr ? stride : 2 * stride;
  if (scratch.size() < bytes + 64) scratch.resize(bytes + 64);
  uint8_t* group = scratch.data() + (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64;
  uint8_t* up_group = group + stride;
  int64_t expanded_tile = -1;
  const int64_t tiles = (std::min(n_tokens, p.chunk_tokens) + kPanelTileTokens - 1) / kPanelTileTokens;
  const auto kernel = [&](const GemmTile& t, int64_t rt) {
    if (rt != expanded_tile) {
      pk.expand(t.w, t.cols, group);
      if (up != nullptr) pk.expand(up + rt * p.tiling.bytes, t.cols, up_group);
      expanded_tile = rt;
    }
    if (rt + 1 < p.row_tiles) {  // each token tile brings a slice of the next group
      const int64_t k = (t.t0 / kPanelTileTokens) % tiles;
      prefetch_slice(t.w + p.tiling.bytes, p.tiling.bytes, k, tiles);
      if (up != nullptr) prefetch_slice(up + (rt + 1) * p.tiling.bytes, p.tiling.bytes, k, tiles);
    }
    GemmTile e = t;
    e.w = group;
    if (up != nullptr)
      pk.expanded_swiglu(e, up_group);
    else
      pk.expanded(e);
  };
  run_tiles(p.tiling, kernel, p.base, p.rows, n_tokens, p.chunk_tokens, p.tile_begin(c), p.tile_begin(c + 1));
}

void run_chunk(const Product& p, int64_t n_tokens, int64_t c) {
  if (p.float_panels) return run_float_panels(p, n_tokens, c);
  if (p.expanded != nullptr) return run_expanded_chunk(p, n_tokens, c);
  run_tiles(p.tiling, [&p](const GemmTile& t, int64_t) { p.fn(t); }, p.base, p.rows, n_tokens, p.chunk_tokens,
            p.tile_begin(c), p.tile_begin(c + 1));
}

// The level's fused gate kernel for gate and up, or null (then gate and up run
// as two products followed by swiglu()).
GemmSwigluTileFn fused_swiglu_for(const GemmKernels& k, const TensorView& gate, const TensorView& up) {
  if (gate.layout != TensorLayout::Panels16 || up.layout != TensorLayout::Panels16 || gate.dtype != up.dtype)
    return nullptr;
  const WeightKernels* kernels = weight_kernels(k, gate.dtype);
  return kernels == nullptr ? nullptr : kernels->panel.swiglu;
}

// Validates a group; returns false when there is nothing to compute.
bool check_group(const MatmulTask* tasks, int n_tasks, const float* X, int64_t n_tokens) {
  bool any = false;
  for (int i = 0; i < n_tasks; ++i) {
    check_operands(*tasks[i].w, X, n_tokens, tasks[i].y);
    if (tasks[i].w->cols() != tasks[0].w->cols())
      throw Error("matmul: grouped weights differ in row length: " + tasks[0].w->shape_str() + " vs " +
                  tasks[i].w->shape_str());
    any = any || tasks[i].w->rows() > 0;
  }
  return any && n_tokens > 0;
}

// Runs a group in one parallel region. Shared input (rows.period 0): every
// task reads X's n_tokens rows. Side by side (rows.period > 0, see TokenRows):
// task i reads rows [i * period, i * period + n_tokens) of the group's rows.
void matmul_group_isa(IsaLevel level, const MatmulTask* tasks, int n_tasks, const float* X, int64_t n_tokens,
                      TokenRows rows, ThreadPool& pool) {
  if (!isa_supported(level))
    throw Error(std::string("matmul: ISA level ") + isa_name(level) + " is not supported by this CPU");
  if (!check_group(tasks, n_tasks, X, n_tokens)) return;
  const int64_t cols = tasks[0].w->cols();
  if (cols == 0) {
    for (int i = 0; i < n_tasks; ++i) {
      const int64_t rows = tasks[i].w->rows(), ldy = tasks[i].ldy > 0 ? tasks[i].ldy : rows;
      for (int64_t t = 0; t < n_tokens; ++t) std::fill_n(tasks[i].y + t * ldy, rows, 0.0f);
    }
    return;
  }
  const GemmKernels& k = gemm_kernels(level);
  SharedActs acts = rows.period > 0 ? SharedActs(k, X, rows.period * n_tasks, cols, pool, rows)
                               : SharedActs(k, X, n_tokens, cols, pool);
  std::vector<Product> products(static_cast<size_t>(n_tasks));
  std::vector<int64_t> first_chunk(static_cast<size_t>(n_tasks) + 1, 0);
  for (int i = 0; i < n_tasks; ++i) {
    products[i] = prepare(k, level, tasks[i], X, n_tokens, i * rows.period, acts, pool.size());
    if (tasks[i].w->rows() == 0) products[i].n_chunks = 0;
    first_chunk[i + 1] = first_chunk[i] + products[i].n_chunks;
  }
  pool.parallel_chunks(first_chunk[n_tasks], [&](int64_t c) {
    const auto i = std::upper_bound(first_chunk.begin(), first_chunk.end(), c) - first_chunk.begin() - 1;
    run_chunk(on_this_node(products[i]), n_tokens, c - first_chunk[i]);
  });
}

}  // namespace

void matmul_isa(IsaLevel level, const TensorView& W, const float* X, int64_t n_tokens, float* Y, ThreadPool& pool) {
  const MatmulTask task{&W, Y};
  matmul_group_isa(level, &task, 1, X, n_tokens, {}, pool);
}

void matmul(const TensorView& W, const float* X, int64_t n_tokens, float* Y, ThreadPool& pool) {
  matmul_isa(cpu_features().level, W, X, n_tokens, Y, pool);
}

void matmul_group(const MatmulTask* tasks, int n_tasks, const float* X, int64_t n_tokens, ThreadPool& pool) {
  matmul_group_isa(cpu_features().level, tasks, n_tasks, X, n_tokens, {}, pool);
}

void matmul_heads(const MatmulTask* tasks, int n_tasks, const float* X, int64_t ldx, int64_t head_stride,
                  int64_t n_tokens, ThreadPool& pool) {
  // Each input padded to whole tiles of tokens: the panel kernels' token tiles never straddle two.
  const int64_t period = (n_tokens + kActTileTokens - 1) / kActTileTokens * kActTileTokens;
  matmul_group_isa(cpu_features().level, tasks, n_tasks, X, n_tokens, TokenRows{period, n_tokens, ldx, head_stride},
                   pool);
}

void matmul_swiglu(const TensorView& gate, const TensorView& up, const float* X, int64_t n_tokens, float* out,
                   float* up_scratch, ThreadPool& pool) {
  const IsaLevel level = cpu_features().level;
  const MatmulTask tasks[2] = {{&gate, out}, {&up, up_scratch}};
  if (gate.shape != up.shape)
    throw Error("matmul_swiglu: gate " + gate.shape_str() + " and up " + up.shape_str() + " differ in shape");
  if (!check_group(tasks, 2, X, n_tokens)) return;
  const int64_t rows = gate.rows();
  if (gate.cols() == 0) {
    std::fill(out, out + n_tokens * rows, 0.0f);  // silu(0) * 0
    return;
  }
  const GemmKernels& k = gemm_kernels(level);
  SharedActs acts(k, X, n_tokens, gate.cols(), pool);
  Product g = prepare(k, level, tasks[0], X, n_tokens, 0, acts, pool.size());
  if (const GemmSwigluTileFn fused = fused_swiglu_for(k, gate, up)) {
    const auto* up0 = static_cast<const uint8_t*>(up.data);
    const auto local_up = [&] { return local_weights(up0, up.nbytes()); };
    if (g.expanded != nullptr && g.expanded->expanded_swiglu != nullptr) {
      pool.parallel_chunks(g.n_chunks,
                           [&](int64_t c) { run_expanded_chunk(on_this_node(g), n_tokens, c, local_up()); });
      return;
    }
    pool.parallel_chunks(g.n_chunks, [&](int64_t c) {
      const Product lg = on_this_node(g);
      const uint8_t* up_w = local_up();
      const auto kernel = [&](const GemmTile& t, int64_t rt) { fused(t, up_w + rt * g.tiling.bytes); };
      run_tiles(lg.tiling, kernel, lg.base, rows, n_tokens, lg.chunk_tokens, lg.tile_begin(c), lg.tile_begin(c + 1));
    });
    return;
  }
  Product u = prepare(k, level, tasks[1], X, n_tokens, 0, acts, pool.size());
  if (g.tiling.rows != u.tiling.rows) {  // differently laid out: the chunks would cover different rows
    matmul_group_isa(level, tasks, 2, X, n_tokens, {}, pool);
    for (int64_t t = 0; t < n_tokens; ++t) swiglu(out + t * rows, up_scratch + t * rows, rows, out + t * rows);
    return;
  }
  g.n_chunks = u.n_chunks = std::max(g.n_chunks, u.n_chunks);
  pool.parallel_chunks(g.n_chunks, [&](int64_t c) {
    run_chunk(on_this_node(g), n_tokens, c);
    run_chunk(on_this_node(u), n_tokens, c);
    const int64_t r0 = g.tile_begin(c) * g.tiling.rows, r1 = std::min(rows, g.tile_begin(c + 1) * g.tiling.rows);
    for (int64_t t = 0; t < n_tokens; ++t) {
      float* g_row = out + t * rows + r0;
      swiglu(g_row, up_scratch + t * rows + r0, r1 - r0, g_row);
    }
  });
}

}  // namespace db::kernels
