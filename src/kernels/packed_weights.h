// Weight matrices repacked at load into the layout the matmul kernels of the
// running ISA level read fastest (TensorLayout::Panels16, see kernels/cpu/panels.h;
// per level, the quantized formats from AVX2 on, except at the plain AVX-512
// level, and F32 / F16 / BF16 from AVX-512 on: prefers_packed). Repacking costs a
// copy of those matrices in memory (the mapped file's pages are then no longer
// touched, and a loader may hand them back: io/mapped_range.h) and one pass over
// them at load; results are unchanged in meaning: matmul() over a packed view
// computes the same products.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/weight_replicas.h"
#include "tensor/tensor.h"
#include "util/cpu_features.h"
#include "util/huge_buffer.h"
#include "util/thread_pool.h"

namespace db::kernels {

// True if matmul at `level` runs faster on a repacked copy of a `dtype` matrix.
bool prefers_packed(DType dtype, IsaLevel level);

// Writes the Rows matrix w (a dtype with a panel layout) into dst, which holds
// panel_matrix_bytes(w.dtype, w.rows(), w.cols()) bytes, in the Panels16 layout;
// with a pool its row groups are packed on the pool's threads (same bytes).
void pack_matrix(const TensorView& w, uint8_t* dst, ThreadPool* pool = nullptr);

// Owns repacked copies; the views it hands out live as long as the store.
class PackedWeightStore {
 public:
  PackedWeightStore();
  ~PackedWeightStore();
  PackedWeightStore(PackedWeightStore&&) noexcept;
  PackedWeightStore& operator=(PackedWeightStore&&) noexcept;

  // A view of the matrix w for matmul at `level`: w itself when its layout is
  // the one the level prefers for its dtype; else a copy held by this store,
  // repacked into panels (w in Rows layout) or unpacked back into rows (w
  // pre-packed, from a file packed for another level: model/gguf_pack.h), so
  // that matmul sees the same layout, and computes the same bits, whichever
  // file it came from. With a pool the row groups are repacked on its threads;
  // the bytes are the same as without one. w is read only during the call.
  TensorView prepare(const TensorView& w, IsaLevel level, ThreadPool* pool = nullptr);
  // The same at the process-wide level (cpu_features().level).
  TensorView prepare(const TensorView& w, ThreadPool* pool = nullptr);

  size_t bytes() const { return bytes_; }  // repacked bytes held

  // What prepare() has done so far, for the start-up report.
  struct Counts {
    int64_t packed = 0;    // Rows matrices repacked into panels
    int64_t in_place = 0;  // pre-packed matrices used where they lie
    int64_t unpacked = 0;  // pre-packed matrices copied back into rows
  };
  const Counts& counts() const { return counts_; }

  // The bytes of every view prepare() has handed out, held here or elsewhere
  // (a mapped file, a loader's slice): what the matmuls read, for
  // --numa replicate (kernels/weight_replicas.h).
  const std::vector<WeightRange>& handed_out() const { return handed_out_; }

 private:
  TensorView unpack(const TensorView& w);  // a Rows copy of the pre-packed matrix w
  TensorView hand_out(const TensorView& v);  // notes v in handed_out_

  std::vector<HugeBuffer> buffers_;  // huge pages from 2 MB up (util/huge_buffer.h)
  size_t bytes_ = 0;
  Counts counts_;
  std::vector<WeightRange> handed_out_;
};

}  // namespace db::kernels
