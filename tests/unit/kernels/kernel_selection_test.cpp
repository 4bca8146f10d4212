// Which kernel each ISA level selects. Bit-equality tests cannot see a level that
// silently runs the scalar reference; these check the selection itself: every level
// runs the kernel of the highest level at or below it that has one.
#include <gtest/gtest.h>

#include <iterator>
#include <string>

#include "kernels/cpu/activations.h"
#include "kernels/cpu/attention_ops.h"
#include "kernels/cpu/isa_table.h"
#include "kernels/cpu/matmul_dispatch.h"
#include "kernels/cpu/panels.h"
#include "kernels/cpu/rms_norm.h"
#include "kernels/packed_weights.h"

namespace db::kernels {
namespace {

int f_scalar() { return 0; }
int f_avx2() { return 1; }
int f_avx512() { return 3; }
int f_vnni() { return 4; }

TEST(IsaTable, EachLevelTakesTheNearestKernelAtOrBelowIt) {
  using Fn = int (*)();
  const IsaTable<Fn> t{{IsaLevel::Scalar, &f_scalar}, {IsaLevel::Avx2, &f_avx2}, {IsaLevel::Avx512, &f_avx512},
                       {IsaLevel::Avx512Vnni, &f_vnni}};
  EXPECT_EQ(t.at(IsaLevel::Scalar), &f_scalar);
  EXPECT_EQ(t.at(IsaLevel::Avx2), &f_avx2);
  EXPECT_EQ(t.at(IsaLevel::Avx2Vnni), &f_avx2);
  EXPECT_EQ(t.at(IsaLevel::Avx512), &f_avx512);
  EXPECT_EQ(t.at(IsaLevel::Avx512Vnni), &f_vnni);
  EXPECT_EQ(t.at(IsaLevel::Amx), &f_vnni);
  // Order of the entries does not matter.
  const IsaTable<Fn> reversed{{IsaLevel::Avx512, &f_avx512}, {IsaLevel::Avx2, &f_avx2}, {IsaLevel::Scalar, &f_scalar}};
  EXPECT_EQ(reversed.at(IsaLevel::Avx2Vnni), &f_avx2);
  EXPECT_EQ(reversed.at(IsaLevel::Amx), &f_avx512);
  EXPECT_THROW((IsaTable<Fn>{{IsaLevel::Avx2, &f_avx2}}), Error);
}

#if defined(__x86_64__)
// Levels with a vector kernel of their own, per op: Scalar, Avx2 and Avx512.
template <class Fn>
void expect_selection(Fn (*kernel)(IsaLevel), const char* op) {
  const Fn scalar = kernel(IsaLevel::Scalar), avx2 = kernel(IsaLevel::Avx2), avx512 = kernel(IsaLevel::Avx512);
  EXPECT_NE(avx2, scalar) << op;
  EXPECT_NE(avx512, avx2) << op;
  EXPECT_EQ(kernel(IsaLevel::Avx2Vnni), avx2) << op << ": AVX-VNNI machines must not fall back to scalar";
  EXPECT_EQ(kernel(IsaLevel::Avx512Vnni), avx512) << op;
  EXPECT_EQ(kernel(IsaLevel::Amx), avx512) << op;
}

const AttentionOps* attention_kernel(IsaLevel level) { return &attention_ops(level); }

TEST(KernelSelection, RmsNormSwigluAndAttentionUseTheirVectorKernelsAtEveryLevelAbove) {
  expect_selection(&rms_norm_rows_kernel, "rms_norm");
  expect_selection(&swiglu_kernel, "swiglu");
  expect_selection(&attention_kernel, "attention");
  EXPECT_EQ(&attention_ops(IsaLevel::Scalar), &attention_ops_scalar());
  EXPECT_EQ(&attention_ops(IsaLevel::Avx2Vnni), &attention_ops_avx2());
  EXPECT_EQ(&attention_ops(IsaLevel::Amx), &attention_ops_avx512());
}

// The matmul's Rows-layout kernel per weight type at each level with kernels of
// its own; Avx2Vnni runs Avx2's, Amx Avx512Vnni's.
struct RowsSelection {
  DType type;
  GemmTileFn scalar, avx2, avx512, avx512vnni;
};
const RowsSelection kRowsSelection[] = {
    {DType::Q4_0, scalar::gemm_q4_0, avx2::gemm_q4_0, avx512::gemm_q4_0, avx512vnni::gemm_q4_0},
    {DType::Q4_1, scalar::gemm_q4_1, avx2::gemm_q4_1, avx512::gemm_q4_1, avx512vnni::gemm_q4_1},
    {DType::Q8_0, scalar::gemm_q8_0, avx2::gemm_q8_0, avx512::gemm_q8_0, avx512vnni::gemm_q8_0},
    {DType::Q4_K, scalar::gemm_q4_k, avx2::gemm_q4_k, avx512::gemm_q4_k, avx512vnni::gemm_q4_k},
    {DType::Q5_K, scalar::gemm_q5_k, avx2::gemm_q5_k, avx512::gemm_q5_k, avx512vnni::gemm_q5_k},
    {DType::Q6_K, scalar::gemm_q6_k, avx2::gemm_q6_k, avx512::gemm_q6_k, avx512vnni::gemm_q6_k},
    {DType::Q5_0, scalar::gemm_q5_0, avx2::gemm_q5_0, avx512::gemm_q5_0, avx512vnni::gemm_q5_0},
    {DType::Q5_1, scalar::gemm_q5_1, avx2::gemm_q5_1, avx512::gemm_q5_1, avx512vnni::gemm_q5_1},
    {DType::F32, scalar::gemm_f32, avx2::gemm_f32, avx512::gemm_f32, avx512::gemm_f32},
    {DType::F16, scalar::gemm_f16, avx2::gemm_f16, avx512::gemm_f16, avx512::gemm_f16},
    {DType::BF16, scalar::gemm_bf16, avx2::gemm_bf16, avx512::gemm_bf16, avx512::gemm_bf16},
};

GemmTileFn expected_rows(const RowsSelection& s, IsaLevel level) {
  switch (level) {
    case IsaLevel::Scalar: return s.scalar;
    case IsaLevel::Avx2:
    case IsaLevel::Avx2Vnni: return s.avx2;
    case IsaLevel::Avx512: return s.avx512;
    case IsaLevel::Avx512Vnni:
    case IsaLevel::Amx: return s.avx512vnni;
  }
  return nullptr;
}

// Stands, in the table below, for the AMX tile kernels (internal to panel_amx.cpp).
void amx_tile_kernel(const GemmTile&) {}

// The panel kernel each level runs on a repacked weight type; null: the level
// does not repack it (its Rows kernel runs). `scalar` is the reference, which
// no level above Scalar may run on a repacked copy.
struct PanelSelection {
  DType type;
  GemmTileFn scalar, avx2, avx2vnni, avx512, avx512vnni, amx;
};
const PanelSelection kPanelSelection[] = {
    {DType::Q4_0, scalar::panel_q4_0, avx2::panel_q4_0, avx2vnni::panel_q4_0, nullptr, avx512vnni::panel_q4_0,
     amx_tile_kernel},
    {DType::Q4_1, scalar::panel_q4_1, avx2::panel_q4_1, avx2vnni::panel_q4_1, nullptr, avx512vnni::panel_q4_1,
     amx_tile_kernel},
    {DType::Q8_0, scalar::panel_q8_0, avx2::panel_q8_0, avx2vnni::panel_q8_0, nullptr, avx512vnni::panel_q8_0,
     amx_tile_kernel},
    {DType::Q4_K, scalar::panel_q4_k, avx2::panel_q4_k, avx2vnni::panel_q4_k, nullptr, avx512vnni::panel_q4_k,
     amx_tile_kernel},
    {DType::Q5_K, scalar::panel_q5_k, avx2::panel_q5_k, avx2vnni::panel_q5_k, nullptr, avx512vnni::panel_q5_k,
     amx_tile_kernel},
    {DType::Q6_K, scalar::panel_q6_k, avx2::panel_q6_k, avx2vnni::panel_q6_k, nullptr, avx512vnni::panel_q6_k,
     avx512vnni::panel_q6_k},
    {DType::Q5_0, scalar::panel_q5_0, avx2::panel_q5_0, avx2vnni::panel_q5_0, nullptr, avx512vnni::panel_q5_0,
     amx_tile_kernel},
    {DType::Q5_1, scalar::panel_q5_1, avx2::panel_q5_1, avx2vnni::panel_q5_1, nullptr, avx512vnni::panel_q5_1,
     amx_tile_kernel},
    {DType::F32, scalar::panel_f32, nullptr, nullptr, avx512::panel_f32, avx512::panel_f32, avx512::panel_f32},
    {DType::F16, scalar::panel_f16, nullptr, nullptr, avx512::panel_f16, avx512::panel_f16, avx512::panel_f16},
    {DType::BF16, scalar::panel_bf16, nullptr, nullptr, avx512::panel_bf16, avx512::panel_bf16, avx512::panel_bf16},
};

GemmTileFn expected_panel(const PanelSelection& s, IsaLevel level) {
  switch (level) {
    case IsaLevel::Scalar: return nullptr;
    case IsaLevel::Avx2: return s.avx2;
    case IsaLevel::Avx2Vnni: return s.avx2vnni;
    case IsaLevel::Avx512: return s.avx512;
    case IsaLevel::Avx512Vnni: return s.avx512vnni;
    case IsaLevel::Amx: return s.amx;
  }
  return nullptr;
}

TEST(KernelSelection, TablesCoverEveryMatmulWeightType) {
  ASSERT_EQ(std::size(kRowsSelection), static_cast<size_t>(kGemmTypes));
  ASSERT_EQ(std::size(kPanelSelection), static_cast<size_t>(kGemmTypes));
  for (int i = 0; i < kGemmTypes; ++i) {
    EXPECT_EQ(kRowsSelection[i].type, kGemmDTypes[i]);
    EXPECT_EQ(kPanelSelection[i].type, kGemmDTypes[i]);
    EXPECT_EQ(gemm_type_index(kGemmDTypes[i]), i);
  }
  EXPECT_EQ(gemm_type_index(DType::Q2_K), -1);
}

// For every level this CPU runs (building a level's table runs code of that
// level), per weight type: the Rows kernel, whether the type is repacked, and
// the panel kernel that then runs. A level that ran the scalar reference for
// any of them fails here, where the bit-equality tests would pass.
TEST(KernelSelection, MatmulRunsEachLevelsOwnKernelsForEveryWeightType) {
  int levels_checked = 0;
  for (IsaLevel level : kIsaLevels) {
    if (!isa_supported(level)) continue;
    ++levels_checked;
    const GemmKernels& k = gemm_kernels(level);
    for (int i = 0; i < kGemmTypes; ++i) {
      const DType t = kGemmDTypes[i];
      SCOPED_TRACE(std::string(isa_name(level)) + " " + dtype_name(t));
      const WeightKernels* kernels = weight_kernels(k, t);
      ASSERT_NE(kernels, nullptr);
      EXPECT_EQ(kernels->rows, expected_rows(kRowsSelection[i], level));
      const GemmTileFn panel = expected_panel(kPanelSelection[i], level);
      EXPECT_EQ(prefers_packed(t, level), panel != nullptr);
      EXPECT_NE(kernels->panel.gemm, nullptr) << "every Panels16 copy stays computable";
      if (level != IsaLevel::Scalar) {
        EXPECT_NE(kernels->rows, kRowsSelection[i].scalar) << "Rows kernel fell back to scalar";
        if (panel != nullptr) {
          EXPECT_NE(kernels->panel.gemm, kPanelSelection[i].scalar) << "panel kernel fell back to scalar";
        }
      }
      if (panel == amx_tile_kernel) {
        EXPECT_NE(kernels->panel.gemm, kPanelSelection[i].avx512vnni) << "AMX runs its tile kernels";
      } else if (panel != nullptr) {
        EXPECT_EQ(kernels->panel.gemm, panel);
      }
      if (panel != nullptr && is_quantized(t)) {
        EXPECT_NE(kernels->panel.swiglu, nullptr) << "no fused gate";
      }
    }
  }
  EXPECT_GE(levels_checked, 1);
}

TEST(KernelSelection, MatmulTileShapeAndActivationQuantizationPerLevel) {
  for (IsaLevel level : kIsaLevels) {
    if (!isa_supported(level)) continue;
    SCOPED_TRACE(isa_name(level));
    const GemmKernels& k = gemm_kernels(level);
    if (level == IsaLevel::Scalar) {
      EXPECT_EQ(k.quantize_q8x32, &quantize_row_q8x32_scalar);
      EXPECT_EQ(k.quantize_q8x256, &quantize_row_q8x256_scalar);
      EXPECT_EQ(k.tile_tokens, kScalarTileTokens);
    } else if (level < IsaLevel::Avx512) {
      EXPECT_EQ(k.quantize_q8x32, &avx2::quantize_row_q8x32);
      EXPECT_EQ(k.quantize_q8x256, &avx2::quantize_row_q8x256);
      EXPECT_EQ(k.tile_tokens, kAvx2TileTokens);
    } else {
      EXPECT_EQ(k.quantize_q8x32, &avx512::quantize_row_q8x32);
      EXPECT_EQ(k.quantize_q8x256, &avx512::quantize_row_q8x256);
      EXPECT_EQ(k.tile_tokens, kAvx512TileTokens);
    }
  }
}
#endif

}  // namespace
}  // namespace db::kernels
