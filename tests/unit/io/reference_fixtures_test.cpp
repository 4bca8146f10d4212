// Files written by the reference Python writers (scripts/gen_io_fixtures.py).
#include <gtest/gtest.h>

#include <cstring>

#include "io/gguf.h"
#include "io/safetensors.h"

namespace db {
namespace {

template <class T>
std::vector<T> values(const TensorView& v) {
  std::vector<T> out(static_cast<size_t>(v.numel()));
  std::memcpy(out.data(), v.data, out.size() * sizeof(T));
  return out;
}

TEST(ReferenceFixtures, GGUFFromPythonWriter) {
  auto f = GGUFFile::open(DB_TEST_DATA "/io/reference.gguf");
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->get_string("general.architecture"), "llama");
  EXPECT_EQ(f->get_uint("test.u32"), 123456u);
  EXPECT_EQ(f->get_int("test.i32"), -42);
  EXPECT_EQ(f->get_float("test.f32"), 0.125);
  EXPECT_TRUE(f->get_bool("test.bool"));
  EXPECT_EQ(f->get_string("test.str"), "hello gguf");
  EXPECT_EQ(f->get_string_array("test.strs"), (std::vector<std::string>{"a", "bc", ""}));
  EXPECT_EQ(f->get_int_array("test.ints"), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(f->get_float_array("test.floats"), (std::vector<double>{0.5, 1.5}));

  auto w = f->tensor("f32.weight");
  EXPECT_EQ(w.dtype, DType::F32);
  EXPECT_EQ(w.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values<float>(w), (std::vector<float>{0, 1, 2, 3, 4, 5}));

  auto h = f->tensor("f16.weight");
  EXPECT_EQ(h.dtype, DType::F16);
  EXPECT_EQ(h.shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(values<uint16_t>(h), (std::vector<uint16_t>{0x3c00, 0xc000, 0x3800, 0x4400}));

  auto q = f->tensor("q8.weight");
  EXPECT_EQ(q.dtype, DType::Q8_0);
  EXPECT_EQ(q.shape, (std::vector<int64_t>{1, 32}));
  ASSERT_EQ(q.nbytes(), 34u);
  const auto* b = static_cast<const uint8_t*>(q.data);
  EXPECT_EQ(b[0], 0x00);
  EXPECT_EQ(b[1], 0x3c);
  for (int k = 0; k < 32; ++k) EXPECT_EQ(b[2 + k], k);
}

TEST(ReferenceFixtures, SafetensorsFromPythonWriter) {
  auto f = SafetensorsFile::open(DB_TEST_DATA "/io/reference.safetensors");
  EXPECT_EQ(f->tensor_names(), (std::vector<std::string>{"a.weight", "b.bias", "c.ids"}));
  auto a = f->tensor("a.weight");
  EXPECT_EQ(a.dtype, DType::F32);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values<float>(a), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  auto b = f->tensor("b.bias");
  EXPECT_EQ(b.dtype, DType::F16);
  EXPECT_EQ(values<uint16_t>(b), (std::vector<uint16_t>{0x3c00, 0x4000, 0x4200, 0xc400}));
  auto c = f->tensor("c.ids");
  EXPECT_EQ(c.dtype, DType::I64);
  EXPECT_EQ(values<int64_t>(c), (std::vector<int64_t>{7, -8}));
}

}  // namespace
}  // namespace db
