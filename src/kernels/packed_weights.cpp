#include "kernels/packed_weights.h"

#include <algorithm>
#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "kernels/cpu/panels.h"
#include "util/error.h"

namespace db::kernels {

bool prefers_packed(DType dtype, IsaLevel level) {
  if (is_float_panel(dtype)) return level >= IsaLevel::Avx512;
#if defined(__x86_64__)
  if (level == IsaLevel::Avx2) return avx2::has_panel_kernel(dtype);
  if (level == IsaLevel::Avx2Vnni) return avx2vnni::has_panel_kernel(dtype);
#endif
  return level >= IsaLevel::Avx512Vnni && has_panel_layout(dtype);
}

namespace {

// Huge pages hold large packed matrices: streamed once per step, they cost a
// TLB miss per 4 KB page otherwise, and the hardware prefetchers stop at every
// 4 KB boundary.
constexpr size_t kHugePage = size_t{2} << 20;

// 64-byte aligned memory for `bytes` packed bytes; from 2 MB up, whole huge
// pages, advised as such (where the kernel only gives them on request).
uint8_t* allocate_packed(size_t bytes) {
  const size_t align = bytes >= kHugePage ? kHugePage : 64;
  auto* mem = static_cast<uint8_t*>(std::aligned_alloc(align, (bytes + align - 1) / align * align));
  if (mem == nullptr) throw std::bad_alloc();
#if defined(__linux__)
  if (align == kHugePage) ::madvise(mem, (bytes + align - 1) / align * align, MADV_HUGEPAGE);
#endif
  return mem;
}

}  // namespace

void PackedWeightStore::FreeDeleter::operator()(uint8_t* p) const { std::free(p); }

PackedWeightStore::PackedWeightStore() = default;
PackedWeightStore::~PackedWeightStore() = default;
PackedWeightStore::PackedWeightStore(PackedWeightStore&&) noexcept = default;
PackedWeightStore& PackedWeightStore::operator=(PackedWeightStore&&) noexcept = default;

TensorView PackedWeightStore::prepare(const TensorView& w, ThreadPool* pool) {
  return prepare(w, cpu_features().level, pool);
}

TensorView PackedWeightStore::prepare(const TensorView& w, IsaLevel level, ThreadPool* pool) {
  if (w.layout != TensorLayout::Rows || w.shape.size() != 2 || !prefers_packed(w.dtype, level) || w.rows() == 0)
    return w;
  const int64_t rows = w.rows(), cols = w.cols();
  const auto bytes = static_cast<size_t>(panel_matrix_bytes(w.dtype, rows, cols));
  uint8_t* mem = allocate_packed(bytes);
  buffers_.emplace_back(mem);
  const auto* src = static_cast<const uint8_t*>(w.data);
  const int64_t stride = static_cast<int64_t>(w.row_nbytes()), group_bytes = panel_group_bytes(w.dtype, cols);
  const int64_t groups = (rows + kPanelRows - 1) / kPanelRows;
  auto pack_groups = [&](int64_t g0, int64_t g1) {
    const int64_t r0 = g0 * kPanelRows, r1 = std::min(rows, g1 * kPanelRows);
    pack_panels(w.dtype, src + r0 * stride, stride, r1 - r0, cols, mem + g0 * group_bytes);
  };
  if (pool != nullptr)
    pool->parallel_for(groups, pack_groups);
  else
    pack_groups(0, groups);
  bytes_ += bytes;
  TensorView packed = w;
  packed.data = mem;
  packed.layout = TensorLayout::Panels16;
  return packed;
}

}  // namespace db::kernels
