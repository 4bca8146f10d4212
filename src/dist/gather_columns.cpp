#include "dist/gather_columns.h"

#include <algorithm>
#include <cstring>

#include "util/error.h"

namespace db::dist {

void all_gather_columns(Communicator& c, const float* part, int64_t rows, std::span<const int64_t> splits,
                        float* full, std::vector<float>& scratch) {
  const int n = c.size(), me = c.rank();
  DB_CHECK(static_cast<int>(splits.size()) == n + 1, "all_gather_columns needs one split per rank plus the end");
  int64_t widest = 0;
  for (int r = 0; r < n; ++r) widest = std::max(widest, splits[r + 1] - splits[r]);
  const int64_t total = splits.back(), mine = splits[me + 1] - splits[me], block = rows * widest;
  scratch.resize(static_cast<size_t>(block * (n + 1)));
  float* send = scratch.data() + block * n;  // after the receive area
  for (int64_t t = 0; t < rows; ++t) {
    std::memcpy(send + t * widest, part + t * mine, static_cast<size_t>(mine) * sizeof(float));
    std::fill(send + t * widest + mine, send + (t + 1) * widest, 0.0f);
  }
  c.all_gather(std::as_bytes(std::span<const float>(send, static_cast<size_t>(block))),
               std::as_writable_bytes(std::span<float>(scratch.data(), static_cast<size_t>(block * n))));
  for (int r = 0; r < n; ++r) {
    const int64_t width = splits[r + 1] - splits[r];
    const float* from = scratch.data() + block * r;
    for (int64_t t = 0; t < rows; ++t)
      std::memcpy(full + t * total + splits[r], from + t * widest, static_cast<size_t>(width) * sizeof(float));
  }
}

}  // namespace db::dist
