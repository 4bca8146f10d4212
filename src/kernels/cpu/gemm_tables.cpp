// The kernel table of each ISA level.
#include "kernels/cpu/matmul_dispatch.h"
#include "kernels/cpu/panels.h"

namespace db::kernels {

namespace {

GemmKernels scalar_kernels() {
  GemmKernels k{};
  k.f32 = scalar::gemm_f32;
  k.f16 = scalar::gemm_f16;
  k.bf16 = scalar::gemm_bf16;
  k.q4_0 = scalar::gemm_q4_0;
  k.q4_1 = scalar::gemm_q4_1;
  k.q8_0 = scalar::gemm_q8_0;
  k.q4_k = scalar::gemm_q4_k;
  k.q5_k = scalar::gemm_q5_k;
  k.q6_k = scalar::gemm_q6_k;
  scalar::panel_kernels(k.panel);
  k.tile_rows = kScalarTileRows;
  k.tile_tokens = kScalarTileTokens;
  k.quantize_q8x32 = quantize_row_q8x32_scalar;
  k.quantize_q8x256 = quantize_row_q8x256_scalar;
  return k;
}

#if defined(__x86_64__)
GemmKernels avx2_kernels() {
  GemmKernels k{};
  k.f32 = avx2::gemm_f32;
  k.f16 = avx2::gemm_f16;
  k.bf16 = avx2::gemm_bf16;
  k.q4_0 = avx2::gemm_q4_0;
  k.q4_1 = avx2::gemm_q4_1;
  k.q8_0 = avx2::gemm_q8_0;
  k.q4_k = avx2::gemm_q4_k;
  k.q5_k = avx2::gemm_q5_k;
  k.q6_k = avx2::gemm_q6_k;
  scalar::panel_kernels(k.panel);  // Q8_0 and float panels are not packed at this level; these keep them computable
  avx2::panel_kernels(k.panel);
  k.tile_rows = kAvx2TileRows;
  k.tile_tokens = kAvx2TileTokens;
  k.quantize_q8x32 = avx2::quantize_row_q8x32;
  k.quantize_q8x256 = avx2::quantize_row_q8x256;
  return k;
}

GemmKernels avx2vnni_kernels() {
  GemmKernels k = avx2_kernels();
  avx2vnni::panel_kernels(k.panel);
  return k;
}

GemmKernels avx512_kernels() {
  GemmKernels k{};
  k.f32 = avx512::gemm_f32;
  k.f16 = avx512::gemm_f16;
  k.bf16 = avx512::gemm_bf16;
  k.q4_0 = avx512::gemm_q4_0;
  k.q4_1 = avx512::gemm_q4_1;
  k.q8_0 = avx512::gemm_q8_0;
  k.q4_k = avx512::gemm_q4_k;
  k.q5_k = avx512::gemm_q5_k;
  k.q6_k = avx512::gemm_q6_k;
  scalar::panel_kernels(k.panel);  // quantized panels are packed only for VNNI; these keep them computable
  avx512::float_panel_kernels(k.panel);
  k.tile_rows = kAvx512TileRows;
  k.tile_tokens = kAvx512TileTokens;
  k.quantize_q8x32 = avx512::quantize_row_q8x32;
  k.quantize_q8x256 = avx512::quantize_row_q8x256;
  return k;
}

GemmKernels avx512vnni_kernels() {
  GemmKernels k = avx512_kernels();
  k.q4_0 = avx512vnni::gemm_q4_0;
  k.q4_1 = avx512vnni::gemm_q4_1;
  k.q8_0 = avx512vnni::gemm_q8_0;
  k.q4_k = avx512vnni::gemm_q4_k;
  k.q5_k = avx512vnni::gemm_q5_k;
  k.q6_k = avx512vnni::gemm_q6_k;
  avx512vnni::panel_kernels(k.panel);
  return k;
}

GemmKernels amx_kernels() {
  GemmKernels k = avx512vnni_kernels();
  amx::panel_kernels(k.panel);
  return k;
}
#endif

}  // namespace

// Each level's table is built on first use only: filling it runs code of that
// level (its files are compiled for its instruction set, and the compiler may
// use those instructions anywhere in them), and callers ask only for levels
// this CPU supports.
const GemmKernels& gemm_kernels(IsaLevel level) {
#if defined(__x86_64__)
  switch (level) {
    case IsaLevel::Scalar: break;
    case IsaLevel::Avx2: {
      static const GemmKernels avx2 = avx2_kernels();
      return avx2;
    }
    case IsaLevel::Avx2Vnni: {
      static const GemmKernels avx2vnni = avx2vnni_kernels();
      return avx2vnni;
    }
    case IsaLevel::Avx512: {
      static const GemmKernels avx512 = avx512_kernels();
      return avx512;
    }
    case IsaLevel::Avx512Vnni: {
      static const GemmKernels avx512vnni = avx512vnni_kernels();
      return avx512vnni;
    }
    case IsaLevel::Amx: {
      static const GemmKernels amx = amx_kernels();
      return amx;
    }
  }
#endif
  static const GemmKernels scalar = scalar_kernels();
  return scalar;
}

}  // namespace db::kernels
