// Token-count dispatch shared by the vector Panels16 kernels: a tile of 1..16
// tokens runs as one or two calls of shapes compiled ahead. Plain templates, no
// intrinsics: ISA-specific files include it and instantiate it with their own
// kernels (internal linkage).
#pragma once
#include "kernels/cpu/panels.h"

namespace db::kernels {
namespace {

// Calls f.template operator()<NT>(tile) for the tile's t.nt tokens: once for
// nt in 1..8, 12 or 16 (the shapes compiled), else for its first 12 or 8
// tokens and then for the rest (f: a lambda with a template parameter int NT).
template <class F>
void with_tokens(const GemmTile& t, const F& f) {
  static_assert(kPanelTileTokens == 16);
  switch (t.nt) {
    case 1: return f.template operator()<1>(t);
    case 2: return f.template operator()<2>(t);
    case 3: return f.template operator()<3>(t);
    case 4: return f.template operator()<4>(t);
    case 5: return f.template operator()<5>(t);
    case 6: return f.template operator()<6>(t);
    case 7: return f.template operator()<7>(t);
    case 8: return f.template operator()<8>(t);
    case 12: return f.template operator()<12>(t);
    case 16: return f.template operator()<16>(t);
    default: {
      const int head = t.nt > 12 ? 12 : 8;
      GemmTile first = t, rest = t;
      first.nt = head;
      rest.t0 += head;
      rest.y += head * t.ldy;
      rest.nt -= head;
      with_tokens(first, f);
      return with_tokens(rest, f);
    }
  }
}

}  // namespace
}  // namespace db::kernels
