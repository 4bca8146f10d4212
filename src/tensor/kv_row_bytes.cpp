#include "tensor/kv_row_bytes.h"

namespace db {

size_t kv_row_bytes(DType t, int64_t n) {
  const int64_t block = block_size(t);
  return static_cast<size_t>((n + block - 1) / block) * block_bytes(t);
}

}  // namespace db
