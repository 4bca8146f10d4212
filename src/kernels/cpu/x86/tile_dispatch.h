// Splits a GemmTile into sub-tiles handled by compile-time shaped kernels:
// TR x TT where possible, single rows / single tokens for the remainders.
//
// Included only by ISA-specific files; everything here has internal linkage.
#pragma once
#include "kernels/cpu/gemm_tile.h"

namespace db::kernels {

// A sub-tile: rows [0, NR) from w, tokens [t0, t0 + NT), output at y.
struct SubTile {
  const uint8_t* w;  // first weight row
  int64_t t0;        // first token
  float* y;          // output of (first row, token t0)
};

// K must provide `template <int NR, int NT> static void run(const GemmTile&, const SubTile&)`.
template <class K, int TR, int TT>
static inline void dispatch_tile(const GemmTile& t) {
  for (int r = 0; r < t.nr;) {
    const int nr = t.nr - r >= TR ? TR : 1;
    for (int j = 0; j < t.nt;) {
      const int nt = t.nt - j >= TT ? TT : 1;
      const SubTile s{t.w + r * t.w_stride, t.t0 + j, t.y + j * t.ldy + r};
      if (nr == TR && nt == TT)
        K::template run<TR, TT>(t, s);
      else if (nr == TR)
        K::template run<TR, 1>(t, s);
      else if (nt == TT)
        K::template run<1, TT>(t, s);
      else
        K::template run<1, 1>(t, s);
      j += nt;
    }
    r += nr;
  }
}

}  // namespace db::kernels
