// Repacking weights at load (kernels/packed_weights.h): packing on a thread pool
// writes the same bytes as packing on the calling thread, and a file mapping
// whose pages were handed back (io/mapped_range.h) still reads the file's bytes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/mapped_file.h"
#include "io/mapped_range.h"
#include "kernels/cpu/panels.h"
#include "kernels/packed_weights.h"
#include "test_weights.h"
#include "util/cpu_features.h"

namespace db::kernels {
namespace {

// The packed bytes of a view prepare() returned.
std::vector<uint8_t> packed_bytes(const TensorView& v) {
  EXPECT_EQ(v.layout, TensorLayout::Panels16);
  const auto* p = static_cast<const uint8_t*>(v.data);
  return std::vector<uint8_t>(p, p + panel_matrix_bytes(v.dtype, v.rows(), v.cols()));
}

class PackedWeightsTest : public ::testing::TestWithParam<DType> {};

// Packing itself runs on any CPU; the level only says which layout to pack into.
TEST_P(PackedWeightsTest, PoolPacksTheSameBytesAsOneThread) {
  const DType dtype = GetParam();
  // Fewer rows than one group, a partial last group, more groups than threads.
  for (int64_t rows : {5, 16, 37, 597})
    for (int64_t cols : {32, 576}) {
      SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols));
      const auto w = testing::make_weights(dtype, rows, cols, 11);
      PackedWeightStore serial_store;
      const std::vector<uint8_t> want = packed_bytes(serial_store.prepare(w.view(), IsaLevel::Avx512Vnni));
      for (int threads : {2, 3, 7}) {
        ThreadPool pool(threads);
        PackedWeightStore store;
        const TensorView v = store.prepare(w.view(), IsaLevel::Avx512Vnni, &pool);
        ASSERT_EQ(packed_bytes(v), want) << threads << " threads";
        EXPECT_EQ(store.bytes(), serial_store.bytes());
      }
    }
}

// The overload at the process-wide level (which packs only some formats at some levels).
TEST_P(PackedWeightsTest, ProcessLevelPassesThePoolOn) {
  const DType dtype = GetParam();
  if (!prefers_packed(dtype, cpu_features().level))
    GTEST_SKIP() << dtype_name(dtype) << " weights are not repacked at this CPU's matmul level";
  const auto w = testing::make_weights(dtype, 301, 576, 5);
  PackedWeightStore serial_store, store;
  ThreadPool pool(2);
  EXPECT_EQ(packed_bytes(store.prepare(w.view(), &pool)), packed_bytes(serial_store.prepare(w.view())));
}

// A pre-packed matrix (from a file of `deepbatch convert --pack`) is used where
// it lies at a level that prefers panels, and unpacked back into the original
// rows at one that does not (AVX-512 without VNNI keeps quantized rows).
TEST_P(PackedWeightsTest, PrePackedMatricesStayOrComeBackAsRows) {
  const DType dtype = GetParam();
  const auto w = testing::make_weights(dtype, 37, 576, 9);
  TensorView packed = w.view();
  packed.layout = TensorLayout::Panels16;
  std::vector<uint8_t> panels(packed.nbytes());
  pack_matrix(w.view(), panels.data());
  packed.data = panels.data();

  PackedWeightStore store;
  EXPECT_EQ(store.prepare(packed, IsaLevel::Avx512Vnni).data, panels.data());
  EXPECT_EQ(store.bytes(), 0u);
  for (IsaLevel rows_level : {IsaLevel::Avx512, IsaLevel::Scalar}) {
    const TensorView rows = store.prepare(packed, rows_level);
    ASSERT_EQ(rows.layout, TensorLayout::Rows);
    const auto* p = static_cast<const uint8_t*>(rows.data);
    EXPECT_EQ(std::vector<uint8_t>(p, p + rows.nbytes()), w.bytes) << isa_name(rows_level);
  }
  EXPECT_EQ(store.counts().in_place, 1);
  EXPECT_EQ(store.counts().unpacked, 2);
  EXPECT_EQ(store.counts().packed, 0);
}

INSTANTIATE_TEST_SUITE_P(PanelDtypes, PackedWeightsTest,
                         ::testing::Values(DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// A file of n bytes whose byte i is a function of i, removed with the object.
struct TempFile {
  std::filesystem::path path;
  std::vector<uint8_t> bytes;
  explicit TempFile(size_t n) : bytes(n) {
    path = std::filesystem::temp_directory_path() / ("db_mapped_range_test_" + std::to_string(::getpid()));
    for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(n));
  }
  ~TempFile() { std::filesystem::remove(path); }
};

TEST(MappedRange, ReleasedPagesReadBackTheFile) {
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const TempFile file(16 * page + 123);
  auto map = MappedFile::open(file.path.string());
  ASSERT_EQ(map->size(), file.bytes.size());
  ASSERT_EQ(0, std::memcmp(map->data(), file.bytes.data(), file.bytes.size()));  // every page resident now
  // Unaligned ranges (only the pages wholly inside go), an aligned one, less than a page, the whole file.
  const std::pair<size_t, size_t> ranges[] = {
      {100, 5 * page}, {3 * page, 4 * page}, {9 * page + 7, 20}, {page - 1, 2 * page + 2}, {0, file.bytes.size()}};
  for (const auto& [offset, n] : ranges) {
    release_mapped_range(map->data() + offset, n);
    ASSERT_EQ(0, std::memcmp(map->data(), file.bytes.data(), file.bytes.size()))
        << "after releasing " << n << " bytes at " << offset;
  }
  release_mapped_range(map->data(), 0);  // nothing to release
  release_mapped_range(nullptr, 0);
  EXPECT_EQ(0, std::memcmp(map->data(), file.bytes.data(), file.bytes.size()));
}

}  // namespace
}  // namespace db::kernels
