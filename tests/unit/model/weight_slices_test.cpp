// Row and column slices of stored matrices for tensor-parallel shards: rows are
// views, columns are copied as whole quantization blocks, and a split inside a
// block is refused with the tensor's name.
#include "model/weight_slices.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "util/error.h"

namespace db {
namespace {

// A {rows, cols} matrix of `dtype` whose bytes are 0, 1, 2, ... (mod 256).
TensorView matrix(DType dtype, int64_t rows, int64_t cols, std::vector<uint8_t>& bytes) {
  TensorView t;
  t.dtype = dtype;
  t.shape = {rows, cols};
  bytes.resize(t.nbytes());
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i);
  t.data = bytes.data();
  return t;
}

TEST(WeightSlices, ARowSliceIsAViewOfTheStoredRows) {
  std::vector<uint8_t> bytes;
  const TensorView w = matrix(DType::Q8_0, 6, 64, bytes);
  const TensorView s = row_slice("blk.0.attn_q.weight", w, 2, 5);
  EXPECT_EQ(s.shape, (std::vector<int64_t>{3, 64}));
  EXPECT_EQ(s.data, w.row(2));
}

TEST(WeightSlices, AColumnSliceCopiesTheBlocksOfEveryRow) {
  std::vector<uint8_t> bytes, copy;
  const TensorView w = matrix(DType::Q8_0, 3, 128, bytes);  // 4 blocks of 34 bytes per row
  const TensorView s = column_slice("blk.0.ffn_down.weight", w, 32, 96, copy);
  EXPECT_EQ(s.shape, (std::vector<int64_t>{3, 64}));
  EXPECT_EQ(s.data, copy.data());
  const size_t block = block_bytes(DType::Q8_0);
  for (int64_t r = 0; r < 3; ++r) EXPECT_EQ(std::memcmp(s.row(r), w.row(r) + block, 2 * block), 0) << "row " << r;
}

TEST(WeightSlices, ASplitInsideAQuantBlockIsRefusedWithTheTensorName) {
  std::vector<uint8_t> bytes, copy;
  const TensorView w = matrix(DType::Q4_1, 2, 96, bytes);
  try {
    column_slice("blk.3.ffn_down.weight", w, 0, 48, copy);
    FAIL() << "a split at column 48 of Q4_1 blocks of 32 was accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("blk.3.ffn_down.weight"), std::string::npos) << m;
    EXPECT_NE(m.find("inside its Q4_1 blocks of 32 values"), std::string::npos) << m;
  }
}

TEST(WeightSlices, PlainTypesSplitAnywhere) {
  std::vector<uint8_t> bytes, copy;
  const TensorView w = matrix(DType::F32, 2, 10, bytes);
  const TensorView s = column_slice("x", w, 3, 7, copy);
  EXPECT_EQ(std::memcmp(s.row(1), w.row(1) + 12, 16), 0);
}

TEST(WeightSlices, PrePackedMatricesAndOutOfRangeSlicesAreRefused) {
  std::vector<uint8_t> bytes, copy;
  TensorView w = matrix(DType::Q8_0, 4, 64, bytes);
  EXPECT_THROW(row_slice("x", w, 2, 5), Error);
  EXPECT_THROW(column_slice("x", w, 0, 96, copy), Error);
  w.layout = TensorLayout::Panels16;
  EXPECT_THROW(row_slice("x", w, 0, 2), Error);
}

}  // namespace
}  // namespace db
