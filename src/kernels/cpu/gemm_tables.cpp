// The kernel table of each ISA level: per weight type, the Rows-layout kernel and
// the Panels16 kernels that level runs.
#include <initializer_list>
#include <utility>

#include "kernels/cpu/isa_table.h"
#include "kernels/cpu/matmul_dispatch.h"
#include "kernels/cpu/panels.h"

namespace db::kernels {

namespace {

using RowsKernel = std::pair<DType, GemmTileFn>;

void set_rows(GemmKernels& k, std::initializer_list<RowsKernel> kernels) {
  for (const auto& [type, fn] : kernels) k.types[gemm_type_index(type)].rows = fn;
}

// Runs one of the panel_kernels() of kernels/cpu/panels.h (they set the formats
// they have kernels for, in kPanelDTypes order, and leave the others) on k's rows.
void set_panels(GemmKernels& k, void (*fill)(PanelKernels (&)[kPanelFormats])) {
  PanelKernels panels[kPanelFormats];
  for (int i = 0; i < kPanelFormats; ++i) panels[i] = k.types[gemm_type_index(kPanelDTypes[i])].panel;
  fill(panels);
  for (int i = 0; i < kPanelFormats; ++i) k.types[gemm_type_index(kPanelDTypes[i])].panel = panels[i];
}

GemmKernels scalar_kernels() {
  GemmKernels k{};
  set_rows(k, {{DType::Q4_0, scalar::gemm_q4_0}, {DType::Q4_1, scalar::gemm_q4_1}, {DType::Q8_0, scalar::gemm_q8_0},
               {DType::Q4_K, scalar::gemm_q4_k}, {DType::Q5_K, scalar::gemm_q5_k}, {DType::Q6_K, scalar::gemm_q6_k},
               {DType::Q5_0, scalar::gemm_q5_0}, {DType::Q5_1, scalar::gemm_q5_1},
               {DType::F32, scalar::gemm_f32}, {DType::F16, scalar::gemm_f16}, {DType::BF16, scalar::gemm_bf16}});
  set_panels(k, scalar::panel_kernels);
  k.tile_rows = kScalarTileRows;
  k.tile_tokens = kScalarTileTokens;
  k.quantize_q8x32 = quantize_row_q8x32_scalar;
  k.quantize_q8x256 = quantize_row_q8x256_scalar;
  return k;
}

#if defined(__x86_64__)
GemmKernels avx2_kernels() {
  GemmKernels k{};
  set_rows(k, {{DType::Q4_0, avx2::gemm_q4_0}, {DType::Q4_1, avx2::gemm_q4_1}, {DType::Q8_0, avx2::gemm_q8_0},
               {DType::Q4_K, avx2::gemm_q4_k}, {DType::Q5_K, avx2::gemm_q5_k}, {DType::Q6_K, avx2::gemm_q6_k},
               {DType::Q5_0, avx2::gemm_q5_0}, {DType::Q5_1, avx2::gemm_q5_1},
               {DType::F32, avx2::gemm_f32}, {DType::F16, avx2::gemm_f16}, {DType::BF16, avx2::gemm_bf16}});
  set_panels(k, scalar::panel_kernels);  // float panels are not packed at this level; these keep them computable
  set_panels(k, avx2::panel_kernels);
  k.tile_rows = kAvx2TileRows;
  k.tile_tokens = kAvx2TileTokens;
  k.quantize_q8x32 = avx2::quantize_row_q8x32;
  k.quantize_q8x256 = avx2::quantize_row_q8x256;
  return k;
}

GemmKernels avx2vnni_kernels() {
  GemmKernels k = avx2_kernels();
  set_panels(k, avx2vnni::panel_kernels);
  return k;
}

GemmKernels avx512_kernels() {
  GemmKernels k{};
  set_rows(k, {{DType::Q4_0, avx512::gemm_q4_0}, {DType::Q4_1, avx512::gemm_q4_1}, {DType::Q8_0, avx512::gemm_q8_0},
               {DType::Q4_K, avx512::gemm_q4_k}, {DType::Q5_K, avx512::gemm_q5_k}, {DType::Q6_K, avx512::gemm_q6_k},
               {DType::Q5_0, avx512::gemm_q5_0}, {DType::Q5_1, avx512::gemm_q5_1},
               {DType::F32, avx512::gemm_f32}, {DType::F16, avx512::gemm_f16}, {DType::BF16, avx512::gemm_bf16}});
  set_panels(k, scalar::panel_kernels);  // quantized panels are packed only for VNNI; these keep them computable
  set_panels(k, avx512::float_panel_kernels);
  k.tile_rows = kAvx512TileRows;
  k.tile_tokens = kAvx512TileTokens;
  k.quantize_q8x32 = avx512::quantize_row_q8x32;
  k.quantize_q8x256 = avx512::quantize_row_q8x256;
  return k;
}

GemmKernels avx512vnni_kernels() {
  GemmKernels k = avx512_kernels();
  set_rows(k, {{DType::Q4_0, avx512vnni::gemm_q4_0}, {DType::Q4_1, avx512vnni::gemm_q4_1},
               {DType::Q8_0, avx512vnni::gemm_q8_0}, {DType::Q4_K, avx512vnni::gemm_q4_k},
               {DType::Q5_K, avx512vnni::gemm_q5_k}, {DType::Q6_K, avx512vnni::gemm_q6_k},
               {DType::Q5_0, avx512vnni::gemm_q5_0}, {DType::Q5_1, avx512vnni::gemm_q5_1}});
  set_panels(k, avx512vnni::panel_kernels);
  return k;
}

GemmKernels amx_kernels() {
  GemmKernels k = avx512vnni_kernels();
  set_panels(k, amx::panel_kernels);
  return k;
}
#endif

// A level's table, built on first use only: filling it runs code of that level
// (its files are compiled for its instruction set, and the compiler may use
// those instructions anywhere in them), and callers ask only for levels this
// CPU supports.
template <GemmKernels (*Build)()>
const GemmKernels& built() {
  static const GemmKernels kernels = Build();
  return kernels;
}

using TableFn = const GemmKernels& (*)();

const IsaTable<TableFn>& tables() {
  static const IsaTable<TableFn> table{
      {IsaLevel::Scalar, &built<scalar_kernels>},
#if defined(__x86_64__)
      {IsaLevel::Avx2, &built<avx2_kernels>},
      {IsaLevel::Avx2Vnni, &built<avx2vnni_kernels>},
      {IsaLevel::Avx512, &built<avx512_kernels>},
      {IsaLevel::Avx512Vnni, &built<avx512vnni_kernels>},
      {IsaLevel::Amx, &built<amx_kernels>},
#endif
  };
  return table;
}

}  // namespace

int gemm_type_index(DType t) {
  for (int i = 0; i < kGemmTypes; ++i)
    if (kGemmDTypes[i] == t) return i;
  return -1;
}

const WeightKernels* weight_kernels(const GemmKernels& k, DType t) {
  const int i = gemm_type_index(t);
  return i < 0 ? nullptr : &k.types[i];
}

const GemmKernels& gemm_kernels(IsaLevel level) { return tables().at(level)(); }

}  // namespace db::kernels
