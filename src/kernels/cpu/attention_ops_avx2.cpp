// The AVX2 level's attention ops: the dedicated tile kernel and store_row
// (x86/attention_ops_avx2_tile.cpp, compiled with AVX2 + FMA + F16C). The per-query loops of attention_tile_by_query() are not
// needed, so they are left null.
#include "kernels/cpu/attention_ops.h"

namespace db::kernels {

const AttentionOps& attention_ops_avx2() {
  static const AttentionOps ops{nullptr, nullptr, nullptr, nullptr, &attention_tile_avx2, &store_row_avx2};
  return ops;
}

}  // namespace db::kernels
