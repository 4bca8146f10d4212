#include "io/safetensors.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "io_test_util.h"

namespace db {
namespace {

using json = nlohmann::json;
using test::expect_error;

// A safetensors file: 8-byte header length, the header text (space-padded to 8 bytes), the data.
std::vector<uint8_t> make_file(const std::string& header, const std::vector<uint8_t>& data) {
  std::string h = header;
  while (h.size() % 8) h += ' ';
  const uint64_t n = h.size();
  std::vector<uint8_t> out(8 + h.size() + data.size());
  std::memcpy(out.data(), &n, 8);
  std::memcpy(out.data() + 8, h.data(), h.size());
  if (!data.empty()) std::memcpy(out.data() + 8 + h.size(), data.data(), data.size());
  return out;
}

std::vector<uint8_t> iota_bytes(size_t n) {
  std::vector<uint8_t> b(n);
  for (size_t k = 0; k < n; ++k) b[k] = static_cast<uint8_t>(k);
  return b;
}

class Safetensors : public ::testing::Test {
 protected:
  std::string write(const std::string& header, const std::vector<uint8_t>& data) {
    test::write_bytes(path_, make_file(header, data));
    return path_;
  }
  std::string write_json(const json& header, const std::vector<uint8_t>& data) { return write(header.dump(), data); }
  // A valid header with one F32 tensor "w" of shape {2, 2} (16 bytes), with one field replaced.
  json one_tensor(const std::string& field, json value) {
    json t = {{"dtype", "F32"}, {"shape", {2, 2}}, {"data_offsets", {0, 16}}};
    t[field] = std::move(value);
    return json{{"w", t}};
  }
  void expect_open_error(const std::vector<std::string>& parts) {
    std::vector<std::string> all = parts;
    all.push_back(path_);
    expect_error([&] { SafetensorsFile::open(path_); }, all);
  }
  test::ScratchDir dir_{"io"};
  std::string path_ = dir_.file("model.safetensors");
};

TEST_F(Safetensors, ReadsEveryDtype) {
  json h = {
      {"__metadata__", {{"format", "pt"}}},
      {"f32", {{"dtype", "F32"}, {"shape", {2, 3}}, {"data_offsets", {0, 24}}}},
      {"f16", {{"dtype", "F16"}, {"shape", {4}}, {"data_offsets", {24, 32}}}},
      {"bf16", {{"dtype", "BF16"}, {"shape", {1, 2}}, {"data_offsets", {32, 36}}}},
      {"i32", {{"dtype", "I32"}, {"shape", {1}}, {"data_offsets", {36, 40}}}},
      {"i64", {{"dtype", "I64"}, {"shape", json::array()}, {"data_offsets", {40, 48}}}},
      {"empty", {{"dtype", "F32"}, {"shape", {0, 5}}, {"data_offsets", {48, 48}}}},
  };
  auto data = iota_bytes(48);
  auto f = SafetensorsFile::open(write_json(h, data));
  EXPECT_EQ(f->path(), path_);
  EXPECT_EQ(f->tensor_names(), (std::vector<std::string>{"bf16", "empty", "f16", "f32", "i32", "i64"}));
  struct Want {
    const char* name;
    DType dtype;
    std::vector<int64_t> shape;
    size_t begin, nbytes;
  };
  for (const Want& w : std::vector<Want>{{"f32", DType::F32, {2, 3}, 0, 24},
                                         {"f16", DType::F16, {4}, 24, 8},
                                         {"bf16", DType::BF16, {1, 2}, 32, 4},
                                         {"i32", DType::I32, {1}, 36, 4},
                                         {"i64", DType::I64, {}, 40, 8},
                                         {"empty", DType::F32, {0, 5}, 48, 0}}) {
    auto v = f->tensor(w.name);
    EXPECT_EQ(v.dtype, w.dtype) << w.name;
    EXPECT_EQ(v.shape, w.shape) << w.name;
    ASSERT_EQ(v.nbytes(), w.nbytes) << w.name;
    const auto* p = static_cast<const uint8_t*>(v.data);
    EXPECT_EQ(std::vector<uint8_t>(p, p + w.nbytes),
              std::vector<uint8_t>(data.begin() + w.begin, data.begin() + w.begin + w.nbytes))
        << w.name;
  }
  EXPECT_FALSE(f->find("__metadata__").has_value());
  EXPECT_FALSE(f->find("missing").has_value());
  expect_error([&] { f->tensor("missing"); }, {path_, "'missing'"});
}

TEST_F(Safetensors, EmptyHeaderObject) {
  auto f = SafetensorsFile::open(write(std::string("{}"), {}));
  EXPECT_TRUE(f->tensor_names().empty());
}

TEST_F(Safetensors, FileTooShort) {
  test::write_bytes(path_, {1, 2, 3});
  expect_open_error({"header length", "a file of 3 bytes"});
}

TEST_F(Safetensors, HeaderLengthBeyondFile) {
  auto bytes = make_file("{}", {});
  test::patch<uint64_t>(bytes, 0, 1000);
  test::write_bytes(path_, bytes);
  expect_open_error({"header length", "expected at most 8", "got 1000"});
}

TEST_F(Safetensors, HugeHeaderLength) {
  auto bytes = make_file("{}", {});
  test::patch<uint64_t>(bytes, 0, ~uint64_t{0});
  test::write_bytes(path_, bytes);
  expect_open_error({"header length", "got 18446744073709551615"});
}

TEST_F(Safetensors, BadJson) {
  write(std::string("{\"w\": {\"dtype\": "), {});
  expect_open_error({"header", "valid JSON"});
}

TEST_F(Safetensors, HeaderNotAnObject) {
  write(std::string("[1, 2]"), {});
  expect_open_error({"header", "expected a JSON object", "got array"});
}

TEST_F(Safetensors, DuplicateTensor) {
  std::string t = R"({"dtype":"F32","shape":[1],"data_offsets":[0,4]})";
  write("{\"w\":" + t + ",\"w\":" + t + "}", iota_bytes(4));
  expect_open_error({"'w' twice"});
}

TEST_F(Safetensors, EntryNotAnObject) {
  write_json(json{{"w", 3}}, {});
  expect_open_error({"'w'", "expected an object"});
}

TEST_F(Safetensors, MissingDtype) {
  json h = one_tensor("dtype", nullptr);
  h["w"].erase("dtype");
  write_json(h, iota_bytes(16));
  expect_open_error({"'w'", "dtype", "got none"});
}

TEST_F(Safetensors, ReadsFp8AsStorageTypes) {
  json h = {{"a", {{"dtype", "F8_E4M3"}, {"shape", {2, 3}}, {"data_offsets", {0, 6}}}},
            {"b", {{"dtype", "F8_E5M2"}, {"shape", {2}}, {"data_offsets", {6, 8}}}}};
  write_json(h, iota_bytes(8));
  auto f = SafetensorsFile::open(path_);
  const TensorView a = f->tensor("a"), b = f->tensor("b");
  EXPECT_EQ(a.dtype, DType::F8_E4M3);
  EXPECT_EQ(a.nbytes(), 6u);
  EXPECT_EQ(static_cast<const uint8_t*>(a.data)[5], 5);
  EXPECT_EQ(b.dtype, DType::F8_E5M2);
  EXPECT_EQ(static_cast<const uint8_t*>(b.data)[0], 6);
  // One byte per element: a size for two-byte elements is rejected.
  write_json(one_tensor("dtype", "F8_E4M3"), iota_bytes(16));
  expect_open_error({"'w'", "data size", "expected 4 bytes"});
}

TEST_F(Safetensors, UnsupportedDtype) {
  write_json(one_tensor("dtype", "U8"), iota_bytes(16));
  expect_open_error({"'w'", "dtype", "got U8"});
}

TEST_F(Safetensors, BadShape) {
  write_json(one_tensor("shape", {2, -2}), iota_bytes(16));
  expect_open_error({"'w'", "shape", "non-negative"});
  write_json(one_tensor("shape", {2.5}), iota_bytes(16));
  expect_open_error({"'w'", "shape"});
  write_json(one_tensor("shape", "2x2"), iota_bytes(16));
  expect_open_error({"'w'", "shape"});
  write_json(one_tensor("shape", {uint64_t{1} << 40, uint64_t{1} << 40}), iota_bytes(16));
  expect_open_error({"'w'", "shape"});
}

TEST_F(Safetensors, OffsetsOutOfRange) {
  write_json(one_tensor("data_offsets", {0, 16}), iota_bytes(15));
  expect_open_error({"'w'", "data_offsets out of range", "<= 15", "got [0, 16]"});
  write_json(one_tensor("data_offsets", {16, 0}), iota_bytes(16));
  expect_open_error({"'w'", "data_offsets out of range"});
  write_json(one_tensor("data_offsets", {~uint64_t{0}, ~uint64_t{0}}), iota_bytes(16));
  expect_open_error({"'w'", "data_offsets out of range"});
}

TEST_F(Safetensors, MalformedOffsets) {
  write_json(one_tensor("data_offsets", {0}), iota_bytes(16));
  expect_open_error({"'w'", "data_offsets", "[begin, end]"});
  write_json(one_tensor("data_offsets", {0, -16}), iota_bytes(16));
  expect_open_error({"'w'", "data_offsets"});
}

TEST_F(Safetensors, SizeDoesNotMatchDtypeAndShape) {
  write_json(one_tensor("dtype", "F16"), iota_bytes(16));  // 2x2 F16 is 8 bytes, offsets cover 16
  expect_open_error({"'w'", "expected 8 bytes for F16 [2,2]", "got 16"});
}

}  // namespace
}  // namespace db
