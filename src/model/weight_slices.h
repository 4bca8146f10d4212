// Slices of a stored weight matrix for one rank of a tensor-parallel group
// (dist/shard_plan.h): a run of rows is a view of the stored bytes, a run of columns
// is copied row by row as whole quantization blocks.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace db {

// Rows [begin, end) of the Rows-layout matrix w (`name`, its tensor name, for
// errors): a view into w's bytes, no copy. Throws db::Error for a pre-packed matrix
// (Panels16: its rows are interleaved) or rows outside w.
TensorView row_slice(const std::string& name, const TensorView& w, int64_t begin, int64_t end);

// Columns [begin, end) of every row of the Rows-layout matrix w, copied into `bytes`
// (resized; the view points into it, so it must outlive the view). Throws
// db::Error naming the tensor when begin or end is not on a boundary of w's
// quantization blocks (a block cannot be split), for a pre-packed matrix, or for
// columns outside w.
TensorView column_slice(const std::string& name, const TensorView& w, int64_t begin, int64_t end,
                        std::vector<uint8_t>& bytes);

}  // namespace db
