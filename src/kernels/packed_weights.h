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

#include "tensor/tensor.h"
#include "util/cpu_features.h"
#include "util/huge_buffer.h"
#include "util/thread_pool.h"

namespace db::kernels {

// True if matmul at `level` runs faster on a repacked copy of a `dtype` matrix.
bool prefers_packed(DType dtype, IsaLevel level);

// Owns repacked copies; the views it hands out live as long as the store.
class PackedWeightStore {
 public:
  PackedWeightStore();
  ~PackedWeightStore();
  PackedWeightStore(PackedWeightStore&&) noexcept;
  PackedWeightStore& operator=(PackedWeightStore&&) noexcept;

  // A view of w (a Rows-layout matrix) for matmul at `level`: a repacked copy
  // held by this store when prefers_packed(w.dtype, level), else w itself.
  // With a pool the row groups are repacked on its threads; the packed bytes
  // are the same as without one. w is read only during the call.
  TensorView prepare(const TensorView& w, IsaLevel level, ThreadPool* pool = nullptr);
  // The same at the process-wide level (cpu_features().level).
  TensorView prepare(const TensorView& w, ThreadPool* pool = nullptr);

  size_t bytes() const { return bytes_; }  // repacked bytes held

 private:
  std::vector<HugeBuffer> buffers_;  // huge pages from 2 MB up (util/huge_buffer.h)
  size_t bytes_ = 0;
};

}  // namespace db::kernels
