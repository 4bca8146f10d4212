// The panel_k_avx2.cpp kernels built for AVX-VNNI (namespace avx2vnni; the scheme:
// panel_avx2.h). This file only selects the variant: the code is panel_k_avx2.cpp's.
#define DB_PANEL_AVX_VNNI 1
#include "kernels/cpu/x86/panel_k_avx2.cpp"
