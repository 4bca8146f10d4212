#include "model/weight_slices.h"

#include <cstring>

#include "util/error.h"

namespace db {

namespace {

void check_rows_layout(const std::string& name, const TensorView& w) {
  if (w.layout != TensorLayout::Rows)
    throw Error(name + ": tensor parallelism splits matrices stored row after row; this one is pre-packed into "
                "panels (a file of `deepbatch convert --pack` or --pack): load the unpacked file");
  if (w.shape.size() != 2) throw Error(name + ": tensor parallelism splits 2-D matrices, this one is " + w.shape_str());
}

}  // namespace

TensorView row_slice(const std::string& name, const TensorView& w, int64_t begin, int64_t end) {
  check_rows_layout(name, w);
  if (begin < 0 || end > w.rows() || begin >= end)
    throw Error(name + ": rows [" + std::to_string(begin) + ", " + std::to_string(end) + ") are outside its " +
                w.shape_str());
  TensorView out = w;
  out.shape = {end - begin, w.cols()};
  out.data = w.row(begin);
  return out;
}

TensorView column_slice(const std::string& name, const TensorView& w, int64_t begin, int64_t end,
                        std::vector<uint8_t>& bytes) {
  check_rows_layout(name, w);
  if (begin < 0 || end > w.cols() || begin >= end)
    throw Error(name + ": columns [" + std::to_string(begin) + ", " + std::to_string(end) + ") are outside its " +
                w.shape_str());
  const int64_t block = block_size(w.dtype);
  if (begin % block != 0 || end % block != 0)
    throw Error(name + ": tensor parallelism would split its rows at columns " + std::to_string(begin) + " and " +
                std::to_string(end) + ", inside its " + dtype_name(w.dtype) + " blocks of " + std::to_string(block) +
                " values: choose another --tensor-parallel-size (or a file of another type)");
  const size_t skip = row_bytes(w.dtype, begin), keep = row_bytes(w.dtype, end - begin);
  bytes.resize(keep * static_cast<size_t>(w.rows()));
  for (int64_t r = 0; r < w.rows(); ++r) std::memcpy(bytes.data() + r * keep, w.row(r) + skip, keep);
  TensorView out = w;
  out.shape = {w.rows(), end - begin};
  out.data = bytes.data();
  return out;
}

}  // namespace db
