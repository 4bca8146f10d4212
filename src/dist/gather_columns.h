// All-gather of a row-major matrix split by columns: rank r holds columns
// [splits[r], splits[r + 1]) of every row, and every rank gets the whole matrix.
// Parts may differ in width (they are padded to the widest for the collective).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "dist/communicator.h"

namespace db::dist {

// full[t][splits[r] + j] = rank r's part[t][j] for t < rows, on every rank. `part`
// is this rank's [rows][splits[rank + 1] - splits[rank]] floats; `full` holds
// rows x splits.back() floats; splits has size() + 1 ascending entries from 0;
// `scratch` is reused across calls. Throws CollectiveError as all_gather does.
void all_gather_columns(Communicator& c, const float* part, int64_t rows, std::span<const int64_t> splits,
                        float* full, std::vector<float>& scratch);

}  // namespace db::dist
