// GGUFWriter -> GGUFFile round trips: every metadata type, nested arrays, tensors
// of several dtypes, several alignments; and the typed getters' conversions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "io/gguf.h"
#include "io/gguf_writer.h"
#include "io_test_util.h"

namespace db {
namespace {

using test::expect_error;
using test::ScratchDir;

GGUFValue u(GGUFType t, uint64_t x) { return GGUFValue{t, x, GGUFType::UINT8}; }
GGUFValue i(GGUFType t, int64_t x) { return GGUFValue{t, x, GGUFType::UINT8}; }
GGUFValue str(const std::string& s) { return GGUFValue{GGUFType::STRING, s, GGUFType::UINT8}; }
GGUFValue arr(GGUFType elem, std::vector<GGUFValue> items) {
  return GGUFValue{GGUFType::ARRAY, std::move(items), elem};
}

// Structural equality: type, element type, and value (recursively).
bool same(const GGUFValue& a, const GGUFValue& b) {
  if (a.type != b.type || a.v.index() != b.v.index()) return false;
  if (const auto* x = std::get_if<uint64_t>(&a.v)) return *x == std::get<uint64_t>(b.v);
  if (const auto* x = std::get_if<int64_t>(&a.v)) return *x == std::get<int64_t>(b.v);
  if (const auto* x = std::get_if<double>(&a.v)) return *x == std::get<double>(b.v);
  if (const auto* x = std::get_if<bool>(&a.v)) return *x == std::get<bool>(b.v);
  if (const auto* x = std::get_if<std::string>(&a.v)) return *x == std::get<std::string>(b.v);
  if (a.array_type != b.array_type) return false;
  const auto& x = std::get<std::vector<GGUFValue>>(a.v);
  const auto& y = std::get<std::vector<GGUFValue>>(b.v);
  if (x.size() != y.size()) return false;
  for (size_t k = 0; k < x.size(); ++k)
    if (!same(x[k], y[k])) return false;
  return true;
}

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> b(n);
  for (size_t k = 0; k < n; ++k) b[k] = static_cast<uint8_t>(seed + k * 31 + (k >> 8));
  return b;
}

struct TensorCase {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  size_t nbytes;
};

const std::vector<TensorCase> kTensors = {
    {"f32.matrix", DType::F32, {2, 3}, 24},
    {"f16.vector", DType::F16, {4}, 8},
    {"empty.f32", DType::F32, {0, 4}, 0},
    {"bf16.cube", DType::BF16, {1, 2, 2}, 8},
    {"q4_1.rows", DType::Q4_1, {2, 64}, 2 * 2 * 20},
    {"q8_0.rows", DType::Q8_0, {3, 32}, 3 * 34},
    {"q4_k.row", DType::Q4_K, {1, 256}, 144},
    {"i32.vec", DType::I32, {5}, 20},
    {"f32.4d", DType::F32, {1, 2, 1, 3}, 24},
};

// Metadata covering every value type; `expected` receives what the reader must return.
void add_all_metadata(GGUFWriter& w, std::map<std::string, GGUFValue>& expected) {
  auto add = [&](const std::string& key, GGUFValue v) {
    w.add_value(key, v);
    expected[key] = std::move(v);
  };
  add("t.u8", u(GGUFType::UINT8, 255));
  add("t.i8", i(GGUFType::INT8, -128));
  add("t.u16", u(GGUFType::UINT16, 65535));
  add("t.i16", i(GGUFType::INT16, -32768));
  add("t.u32", u(GGUFType::UINT32, 4000000000u));
  add("t.i32", i(GGUFType::INT32, -2000000000));
  add("t.u64", u(GGUFType::UINT64, std::numeric_limits<uint64_t>::max()));
  add("t.i64", i(GGUFType::INT64, std::numeric_limits<int64_t>::min()));
  add("t.f32", GGUFValue{GGUFType::FLOAT32, 1.5, GGUFType::UINT8});
  add("t.f64", GGUFValue{GGUFType::FLOAT64, M_PI, GGUFType::UINT8});
  add("t.true", GGUFValue{GGUFType::BOOL, true, GGUFType::UINT8});
  add("t.false", GGUFValue{GGUFType::BOOL, false, GGUFType::UINT8});
  add("t.str", str("héllo \xe2\x9c\x93"));
  add("t.str.nul", str(std::string("a\0b", 3)));
  add("t.str.empty", str(""));
  add("t.arr.empty", arr(GGUFType::INT32, {}));
  add("t.arr.bool", arr(GGUFType::BOOL, {GGUFValue{GGUFType::BOOL, true, GGUFType::UINT8},
                                         GGUFValue{GGUFType::BOOL, false, GGUFType::UINT8}}));
  add("t.arr.nested", arr(GGUFType::ARRAY, {arr(GGUFType::INT32, {i(GGUFType::INT32, 1), i(GGUFType::INT32, -2)}),
                                            arr(GGUFType::INT32, {}),
                                            arr(GGUFType::INT32, {i(GGUFType::INT32, 3)})}));
  add("t.arr.nested.str", arr(GGUFType::ARRAY, {arr(GGUFType::STRING, {str("x"), str("")}),
                                                arr(GGUFType::STRING, {str("yz")})}));

  w.add_string_array("t.arr.str", {"a", "", "ccc"});
  expected["t.arr.str"] = arr(GGUFType::STRING, {str("a"), str(""), str("ccc")});
  w.add_int_array("t.arr.i64", GGUFType::INT64, {std::numeric_limits<int64_t>::min(), 0, 7});
  expected["t.arr.i64"] = arr(GGUFType::INT64, {i(GGUFType::INT64, std::numeric_limits<int64_t>::min()),
                                                i(GGUFType::INT64, 0), i(GGUFType::INT64, 7)});
  for (GGUFType t : {GGUFType::UINT8, GGUFType::INT8, GGUFType::UINT16, GGUFType::INT16, GGUFType::UINT32,
                     GGUFType::INT32, GGUFType::UINT64}) {
    std::string key = "t.arr.int." + gguf_type_name(t);
    w.add_int_array(key, t, {0, 1, 100});
    bool is_signed = t == GGUFType::INT8 || t == GGUFType::INT16 || t == GGUFType::INT32;
    std::vector<GGUFValue> items;
    for (int64_t x : {0, 1, 100}) items.push_back(is_signed ? i(t, x) : u(t, static_cast<uint64_t>(x)));
    expected[key] = arr(t, std::move(items));
  }
  w.add_float_array("t.arr.f32", GGUFType::FLOAT32, {0.25, -3.0});
  expected["t.arr.f32"] = arr(GGUFType::FLOAT32, {GGUFValue{GGUFType::FLOAT32, 0.25, GGUFType::UINT8},
                                                  GGUFValue{GGUFType::FLOAT32, -3.0, GGUFType::UINT8}});
  w.add_float_array("t.arr.f64", GGUFType::FLOAT64, {1e300, 1e-300});
  expected["t.arr.f64"] = arr(GGUFType::FLOAT64, {GGUFValue{GGUFType::FLOAT64, 1e300, GGUFType::UINT8},
                                                  GGUFValue{GGUFType::FLOAT64, 1e-300, GGUFType::UINT8}});
}

class RoundTrip : public ::testing::TestWithParam<uint64_t> {};

TEST_P(RoundTrip, MetadataAndTensorsSurvive) {
  const uint64_t alignment = GetParam();
  ScratchDir dir{"io"};
  GGUFWriter w(alignment);
  std::map<std::string, GGUFValue> expected;
  add_all_metadata(w, expected);
  if (alignment != 32) expected["general.alignment"] = u(GGUFType::UINT32, alignment);
  std::map<std::string, std::vector<uint8_t>> bytes;
  uint8_t seed = 1;
  for (const auto& t : kTensors) {
    bytes[t.name] = pattern(t.nbytes, seed++);
    w.add_tensor(t.name, t.dtype, t.shape, bytes[t.name].data(), t.nbytes);
  }
  const std::string path = dir.file("rt.gguf");
  w.write(path);
  EXPECT_EQ(test::read_bytes(path), w.to_bytes());

  auto f = GGUFFile::open(path);
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->alignment(), alignment);
  EXPECT_EQ(f->data_offset() % alignment, 0u);
  ASSERT_EQ(f->metadata().size(), expected.size());
  for (const auto& [key, value] : expected) {
    const GGUFValue* got = f->find(key);
    ASSERT_NE(got, nullptr) << key;
    EXPECT_TRUE(same(*got, value)) << key << ": " << gguf_value_type_name(*got);
  }

  ASSERT_EQ(f->tensor_infos().size(), kTensors.size());
  for (size_t k = 0; k < kTensors.size(); ++k) {
    const auto& t = kTensors[k];
    const auto& info = f->tensor_infos()[k];
    EXPECT_EQ(info.name, t.name);
    EXPECT_EQ(info.offset % alignment, 0u) << t.name;
    EXPECT_EQ(info.nbytes, t.nbytes) << t.name;
    auto v = f->tensor(t.name);
    EXPECT_EQ(v.dtype, t.dtype) << t.name;
    EXPECT_EQ(v.shape, t.shape) << t.name;
    ASSERT_EQ(v.nbytes(), t.nbytes) << t.name;
    const auto* p = static_cast<const uint8_t*>(v.data);
    EXPECT_EQ(std::vector<uint8_t>(p, p + t.nbytes), bytes[t.name]) << t.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Alignments, RoundTrip, ::testing::Values(32, 1, 8, 64, 4096));

TEST(GGUFRoundTrip, Version2ReadsTheSame) {
  ScratchDir dir{"io"};
  GGUFWriter w;
  w.add_string("general.architecture", "llama");
  float x[4] = {1, 2, 3, 4};
  w.add_tensor("w", DType::F32, {4}, x, sizeof x);
  auto bytes = w.to_bytes();
  test::patch<uint32_t>(bytes, 4, 2);
  test::write_bytes(dir.file("v2.gguf"), bytes);
  auto f = GGUFFile::open(dir.file("v2.gguf"));
  EXPECT_EQ(f->version(), 2u);
  EXPECT_EQ(f->get_string("general.architecture"), "llama");
  EXPECT_EQ(std::memcmp(f->tensor("w").data, x, sizeof x), 0);
}

TEST(GGUFRoundTrip, ZeroTensors) {
  ScratchDir dir{"io"};
  GGUFWriter w(64);
  w.add_zero_tensor("zeros.big", DType::Q8_0, {300, 1024});  // larger than the writer's zero buffer
  uint8_t ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  w.add_tensor("ones", DType::I8, {8}, ones, 8);
  w.add_zero_tensor("zeros.small", DType::F16, {3});
  const auto bytes = w.to_bytes();
  EXPECT_EQ(bytes.size(), w.header_bytes().size() + w.data_size());
  w.write(dir.file("z.gguf"));
  EXPECT_EQ(test::read_bytes(dir.file("z.gguf")), bytes);

  auto f = GGUFFile::open(dir.file("z.gguf"));
  auto big = f->tensor("zeros.big");
  ASSERT_EQ(big.nbytes(), 300u * 1024 / 32 * 34);
  const auto* p = static_cast<const uint8_t*>(big.data);
  EXPECT_TRUE(std::all_of(p, p + big.nbytes(), [](uint8_t b) { return b == 0; }));
  EXPECT_EQ(std::memcmp(f->tensor("ones").data, ones, 8), 0);
  EXPECT_EQ(f->tensor("zeros.small").nbytes(), 6u);
}

TEST(GGUFRoundTrip, NoTensorsNoMetadata) {
  ScratchDir dir{"io"};
  GGUFWriter().write(dir.file("empty.gguf"));
  auto f = GGUFFile::open(dir.file("empty.gguf"));
  EXPECT_TRUE(f->metadata().empty());
  EXPECT_TRUE(f->tensor_infos().empty());
}

TEST(GGUFGetters, ConversionsAndErrors) {
  ScratchDir dir{"io"};
  GGUFWriter w;
  w.add_uint8("u8", 200);
  w.add_int8("i8.neg", -5);
  w.add_uint64("u64.huge", std::numeric_limits<uint64_t>::max());
  w.add_int32("i32", 7);
  w.add_float32("f32", 0.5f);
  w.add_bool("flag", true);
  w.add_string("name", "tiny");
  w.add_string_array("strs", {"a", "b"});
  w.add_int_array("ints", GGUFType::UINT16, {1, 2, 65535});
  w.add_float_array("floats", GGUFType::FLOAT32, {0.5, 1});
  w.add_value("mixed", arr(GGUFType::ARRAY, {arr(GGUFType::INT32, {})}));
  const std::string path = dir.file("g.gguf");
  w.write(path);
  auto f = GGUFFile::open(path);

  EXPECT_EQ(f->get_int("u8"), 200);
  EXPECT_EQ(f->get_uint("u8"), 200u);
  EXPECT_EQ(f->get_int("i8.neg"), -5);
  EXPECT_EQ(f->get_uint("u64.huge"), std::numeric_limits<uint64_t>::max());
  EXPECT_DOUBLE_EQ(f->get_float("i32"), 7.0);
  EXPECT_DOUBLE_EQ(f->get_float("f32"), 0.5);
  EXPECT_TRUE(f->get_bool("flag"));
  EXPECT_EQ(f->get_string("name"), "tiny");
  EXPECT_EQ(f->get_string_array("strs"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(f->get_int_array("ints"), (std::vector<int64_t>{1, 2, 65535}));
  EXPECT_EQ(f->get_float_array("ints"), (std::vector<double>{1, 2, 65535}));
  EXPECT_EQ(f->get_float_array("floats"), (std::vector<double>{0.5, 1}));
  EXPECT_EQ(f->opt_int("i32"), 7);
  EXPECT_EQ(f->opt_string("absent"), std::nullopt);
  EXPECT_EQ(f->opt_bool("flag"), true);
  EXPECT_EQ(f->opt_float("f32"), 0.5);

  expect_error([&] { f->get_int("absent"); }, {path, "'absent'", "no such key"});
  expect_error([&] { f->get_int("name"); }, {path, "'name'", "expected an integer", "got STRING"});
  expect_error([&] { f->get_int("u64.huge"); }, {"'u64.huge'", "fits int64", "UINT64 18446744073709551615"});
  expect_error([&] { f->get_uint("i8.neg"); }, {"'i8.neg'", "non-negative", "INT8 -5"});
  expect_error([&] { f->get_string("i32"); }, {"'i32'", "expected a STRING", "got INT32"});
  expect_error([&] { f->get_bool("u8"); }, {"'u8'", "BOOL", "UINT8"});
  expect_error([&] { f->get_float("strs"); }, {"'strs'", "number", "ARRAY[STRING]"});
  expect_error([&] { f->get_string_array("ints"); }, {"'ints'", "ARRAY of STRING", "ARRAY[UINT16]"});
  expect_error([&] { f->get_int_array("strs"); }, {"'strs'", "element 0", "STRING"});
  expect_error([&] { f->get_float_array("mixed"); }, {"'mixed'", "ARRAY[ARRAY]", "ARRAY[INT32]"});
  expect_error([&] { f->opt_int("name"); }, {"'name'", "got STRING"});
  expect_error([&] { f->tensor("nope"); }, {path, "'nope'"});
  EXPECT_EQ(f->find_tensor("nope"), nullptr);
}

TEST(GGUFWriter, RejectsInconsistentInput) {
  GGUFWriter w;
  w.add_uint32("k", 1);
  expect_error([&] { w.add_uint32("k", 2); }, {"'k'", "second definition"});
  expect_error([&] { w.add_uint32("general.alignment", 64); }, {"general.alignment"});
  expect_error([&] { w.add_value("bad.alt", GGUFValue{GGUFType::UINT32, int64_t{1}, GGUFType::UINT8}); },
               {"'bad.alt'", "UINT32"});
  expect_error([&] { w.add_value("bad.range", u(GGUFType::UINT8, 256)); }, {"'bad.range'", "out of range"});
  expect_error([&] { w.add_value("bad.elem", arr(GGUFType::INT32, {u(GGUFType::UINT8, 1)})); },
               {"'bad.elem'", "INT32", "UINT8"});
  expect_error([&] { w.add_int_array("bad.neg", GGUFType::UINT32, {-1}); }, {"'bad.neg'", "negative"});
  float x[3] = {};
  expect_error([&] { w.add_tensor("t", DType::F32, {4}, x, sizeof x); }, {"'t'", "expected 16 bytes", "got 12"});
  expect_error([&] { w.add_tensor("q", DType::Q4_0, {31}, x, 12); }, {"'q'", "block size"});
  expect_error([&] { w.add_tensor("d", DType::F32, {1, 1, 1, 1, 1}, x, 4); }, {"'d'", "at most 4"});
  expect_error([] { GGUFWriter bad(48); }, {"alignment", "48"});
}

}  // namespace
}  // namespace db
