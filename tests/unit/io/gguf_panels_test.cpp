// Pre-packed tensors in GGUF files (io/gguf.h, tensor/panel_layout.h): a
// Panels16 tensor written by GGUFWriter::reserve_tensor reads back with its
// layout, its dtype and the panel size; the reader refuses one without this
// build's layout version, of a type with no panel layout, or of one dimension.
#include <gtest/gtest.h>

#include <string>

#include "io/gguf.h"
#include "io/gguf_writer.h"
#include "io_test_util.h"
#include "tensor/panel_layout.h"

namespace db::test {
namespace {

GGUFWriter panel_file_writer(bool with_version) {
  GGUFWriter w(4096);
  if (with_version) w.add_uint32(kGGUFPanelVersionKey, kPanelLayoutVersion);
  return w;
}

TEST(GGUFPanels, APackedStackReadsBackWithItsLayoutAndSize) {
  const ScratchDir dir("gguf_panels");
  GGUFWriter w = panel_file_writer(true);
  w.add_zero_tensor("norm", DType::F32, {64});
  const uint64_t at = w.reserve_tensor("experts", DType::Q4_0, {3, 20, 64}, TensorLayout::Panels16);
  w.write(dir.file("p.gguf"));

  const auto f = GGUFFile::open(dir.file("p.gguf"));
  const GGUFTensorInfo* t = f->find_tensor("experts");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->offset, at);
  EXPECT_EQ(t->dtype, DType::Q4_0);
  EXPECT_EQ(t->layout, TensorLayout::Panels16);
  // Each expert's 20 rows take two 16-row groups of two 32-element blocks.
  const size_t per_expert = 2 * panel_group_bytes(DType::Q4_0, 64);
  EXPECT_EQ(t->nbytes, 3 * per_expert);
  EXPECT_EQ(f->tensor("experts").nbytes(), t->nbytes);
  EXPECT_EQ(f->tensor("experts").layout, TensorLayout::Panels16);
  EXPECT_EQ(f->find_tensor("norm")->layout, TensorLayout::Rows);
}

TEST(GGUFPanels, RefusesPackedTensorsItCannotRead) {
  const ScratchDir dir("gguf_panels");
  {
    GGUFWriter w = panel_file_writer(false);
    w.reserve_tensor("m", DType::Q8_0, {16, 32}, TensorLayout::Panels16);
    w.write(dir.file("no_version.gguf"));
    expect_error([&] { GGUFFile::open(dir.file("no_version.gguf")); },
                 {"tensor 'm'", "panel layout version", "no version key", "convert --pack"});
  }
  {
    GGUFWriter w = panel_file_writer(true);
    const std::string name = "packed_q8_matrix";
    w.reserve_tensor(name, DType::Q8_0, {16, 32}, TensorLayout::Panels16);
    std::vector<uint8_t> bytes = w.to_bytes();
    // Q8_0's panel type id becomes Q2_K's, a type with no panel layout. After
    // the name: n_dims (4 bytes), two dimensions (8 each), the type.
    const size_t type_at = find_bytes(bytes, name) + name.size() + 4 + 2 * 8;
    patch<uint32_t>(bytes, type_at, kGGUFPanelTypeBase + 10);
    write_bytes(dir.file("q2k.gguf"), bytes);
    expect_error([&] { GGUFFile::open(dir.file("q2k.gguf")); },
                 {"tensor 'packed_q8_matrix'", "pre-packed matrix", "1034"});
  }
  GGUFWriter w = panel_file_writer(true);
  EXPECT_THROW(w.reserve_tensor("v", DType::Q8_0, {32}, TensorLayout::Panels16), Error);
  EXPECT_THROW(w.reserve_tensor("k", DType::Q2_K, {16, 256}, TensorLayout::Panels16), Error);
}

}  // namespace
}  // namespace db::test
