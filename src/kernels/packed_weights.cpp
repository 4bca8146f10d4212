#include "kernels/packed_weights.h"

#include <algorithm>
#include <span>

#include "kernels/cpu/isa_table.h"
#include "kernels/cpu/panels.h"
#include "util/error.h"

namespace db::kernels {

namespace {

using DTypes = std::span<const DType>;
constexpr DTypes kAllPanels = kPanelDTypes;
constexpr DTypes kQuantizedPanels = kAllPanels.first(kFirstFloatPanel);
constexpr DTypes kFloatPanels = kAllPanels.subspan(kFirstFloatPanel);

// The weight types repacked for each level: those its panel kernels read faster
// than its Rows kernels (the matmul tables: kernels/cpu/gemm_tables.cpp).
const IsaTable<DTypes>& packed_types() {
  static const IsaTable<DTypes> table{
      {IsaLevel::Scalar, {}},              // the Rows kernels are the reference
      {IsaLevel::Avx2, kQuantizedPanels},  // the AVX2 and AVX-VNNI panel kernels
      {IsaLevel::Avx512, kFloatPanels},    // quantized types keep the AVX-512 Rows kernels
      {IsaLevel::Avx512Vnni, kAllPanels},  // the AVX-512 VNNI and AMX panel kernels
  };
  return table;
}

}  // namespace

bool prefers_packed(DType dtype, IsaLevel level) {
  const DTypes types = packed_types().at(level);
  return std::find(types.begin(), types.end(), dtype) != types.end();
}

void pack_matrix(const TensorView& w, uint8_t* dst, ThreadPool* pool) {
  DB_CHECK(w.layout == TensorLayout::Rows && w.shape.size() == 2 && has_panel_layout(w.dtype),
           "pack_matrix: expected a Rows matrix of a type with a panel layout, got " + dtype_name(w.dtype) + " " +
               w.shape_str());
  const int64_t rows = w.rows(), cols = w.cols();
  const auto* src = static_cast<const uint8_t*>(w.data);
  const int64_t stride = static_cast<int64_t>(w.row_nbytes()), group_bytes = panel_group_bytes(w.dtype, cols);
  const int64_t groups = (rows + kPanelRows - 1) / kPanelRows;
  auto pack_groups = [&](int64_t g0, int64_t g1) {
    const int64_t r0 = g0 * kPanelRows, r1 = std::min(rows, g1 * kPanelRows);
    pack_panels(w.dtype, src + r0 * stride, stride, r1 - r0, cols, dst + g0 * group_bytes);
  };
  if (pool != nullptr)
    pool->parallel_for(groups, pack_groups);
  else
    pack_groups(0, groups);
}

PackedWeightStore::PackedWeightStore() = default;
PackedWeightStore::~PackedWeightStore() = default;
PackedWeightStore::PackedWeightStore(PackedWeightStore&&) noexcept = default;
PackedWeightStore& PackedWeightStore::operator=(PackedWeightStore&&) noexcept = default;

TensorView PackedWeightStore::prepare(const TensorView& w, ThreadPool* pool) {
  return prepare(w, cpu_features().level, pool);
}

TensorView PackedWeightStore::hand_out(const TensorView& v) {
  if (v.data != nullptr && v.nbytes() > 0) handed_out_.push_back({static_cast<const uint8_t*>(v.data), v.nbytes()});
  return v;
}

TensorView PackedWeightStore::prepare(const TensorView& w, IsaLevel level, ThreadPool* pool) {
  if (w.layout == TensorLayout::Panels16) {
    if (prefers_packed(w.dtype, level)) {
      ++counts_.in_place;
      return hand_out(w);
    }
    ++counts_.unpacked;
    return hand_out(unpack(w));
  }
  if (w.layout != TensorLayout::Rows || w.shape.size() != 2 || !prefers_packed(w.dtype, level) || w.rows() == 0)
    return hand_out(w);
  ++counts_.packed;
  TensorView packed = w;
  packed.layout = TensorLayout::Panels16;
  uint8_t* mem = buffers_.emplace_back(packed.nbytes()).data();
  pack_matrix(w, mem, pool);
  bytes_ += packed.nbytes();
  packed.data = mem;
  return hand_out(packed);
}

TensorView PackedWeightStore::unpack(const TensorView& w) {
  DB_CHECK(w.shape.size() == 2, "unpack: a pre-packed matrix has two dimensions, got " + w.shape_str());
  TensorView rows = w;
  rows.layout = TensorLayout::Rows;
  uint8_t* mem = buffers_.emplace_back(rows.nbytes()).data();
  const auto* panels = static_cast<const uint8_t*>(w.data);
  for (int64_t r = 0; r < w.rows(); ++r) unpack_panel_row(w.dtype, panels, w.cols(), r, mem + r * rows.row_nbytes());
  bytes_ += rows.nbytes();
  rows.data = mem;
  return rows;
}

}  // namespace db::kernels
