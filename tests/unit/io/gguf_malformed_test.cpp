// Corrupt GGUF files: built with the writer, then patched or truncated. Every one
// must be rejected with a db::Error naming the file and the offending key/tensor.
#include <gtest/gtest.h>

#include <filesystem>

#include "io/gguf.h"
#include "io/gguf_writer.h"
#include "io_test_util.h"

namespace db {
namespace {

using test::expect_error;
using test::patch;

// Byte positions of one tensor info's fields in the file.
struct InfoPos {
  size_t name, n_dims, dims, type, offset;
};

class Malformed : public ::testing::Test {
 protected:
  void SetUp() override {
    GGUFWriter w(alignment_);
    w.add_string("general.architecture", "llama");
    w.add_uint32("dup.a", 1);
    w.add_uint32("dup.b", 2);
    w.add_string_array("vocab", {"a", "bb", "ccc"});
    w.add_int_array("types", GGUFType::INT32, {1, 2, 3});
    w.add_float32("eps", 1e-5f);
    std::vector<float> alpha(8, 1.0f);
    std::vector<uint8_t> beta(34, 7);
    w.add_tensor("alpha.weight", DType::F32, {2, 4}, alpha.data(), 32);
    w.add_tensor("beta.weight", DType::Q8_0, {1, 32}, beta.data(), 34);
    bytes_ = w.to_bytes();
    path_ = dir_.file("bad.gguf");
  }

  InfoPos info(const std::string& name, uint32_t n_dims) {
    size_t p = test::find_bytes(bytes_, name);
    size_t dims = p + name.size() + 4;
    return {p, p + name.size(), dims, dims + 8 * n_dims, dims + 8 * n_dims + 4};
  }
  // Position of the value type field of a key (the key text is unique in the file).
  size_t value_type_pos(const std::string& key) { return test::find_bytes(bytes_, key) + key.size(); }

  // Writes the (patched) bytes and expects opening to fail with the path and `parts` in the message.
  std::string expect_open_error(std::vector<std::string> parts) {
    test::write_bytes(path_, bytes_);
    parts.push_back(path_);
    return expect_error([&] { GGUFFile::open(path_); }, parts);
  }

  uint64_t alignment_ = 64;
  test::ScratchDir dir_{"io"};
  std::vector<uint8_t> bytes_;
  std::string path_;
};

TEST_F(Malformed, TheUnpatchedFileOpens) {
  test::write_bytes(path_, bytes_);
  auto f = GGUFFile::open(path_);
  EXPECT_EQ(f->alignment(), 64u);
  EXPECT_EQ(f->tensor("beta.weight").dtype, DType::Q8_0);
}

TEST_F(Malformed, EmptyFile) {
  bytes_.clear();
  expect_open_error({"not a GGUF file", "a file of 0 bytes"});
}

TEST_F(Malformed, BadMagic) {
  bytes_[0] = 'G'; bytes_[1] = 'G'; bytes_[2] = 'M'; bytes_[3] = 'L';
  expect_open_error({"magic", "expected \"GGUF\"", "got \"GGML\""});
}

TEST_F(Malformed, Version1) {
  patch<uint32_t>(bytes_, 4, 1);
  expect_open_error({"version", "expected version 2 or 3, got 1"});
}

TEST_F(Malformed, Version99) {
  patch<uint32_t>(bytes_, 4, 99);
  expect_open_error({"unsupported GGUF version", "expected version 2 or 3, got 99"});
}

TEST_F(Malformed, BigEndian) {
  patch<uint32_t>(bytes_, 4, 0x03000000);
  expect_open_error({"big-endian"});
}

TEST_F(Malformed, TruncatedAtEveryByte) {
  const std::vector<uint8_t> full = bytes_;
  for (size_t n = 0; n < full.size(); ++n) {
    bytes_.assign(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    std::string msg = expect_open_error({});
    if (msg.empty()) FAIL() << "truncation at " << n << " of " << full.size() << " bytes was accepted";
  }
}

TEST_F(Malformed, HugeKeyLength) {
  patch<uint64_t>(bytes_, 24, uint64_t{1} << 62);
  expect_open_error({"metadata key #0: key length", "expected at most", "got 4611686018427387904"});
}

TEST_F(Malformed, HugeStringValueLength) {
  patch<uint64_t>(bytes_, test::find_bytes(bytes_, "llama") - 8, ~uint64_t{0});
  expect_open_error({"'general.architecture'", "string length", "got 18446744073709551615"});
}

TEST_F(Malformed, HugeArrayCount) {
  patch<uint64_t>(bytes_, value_type_pos("vocab") + 8, uint64_t{1} << 60);
  expect_open_error({"'vocab'", "array element count", "expected at most"});
}

TEST_F(Malformed, ArrayCountPastTheHeader) {
  // Plausible for the file size, but the elements then run into other data.
  patch<uint64_t>(bytes_, value_type_pos("types") + 8, 60);
  expect_open_error({});
}

TEST_F(Malformed, HugeTensorCount) {
  patch<uint64_t>(bytes_, 8, uint64_t{1} << 60);
  expect_open_error({"tensor count", "got 1152921504606846976"});
}

TEST_F(Malformed, HugeKeyCount) {
  patch<uint64_t>(bytes_, 16, ~uint64_t{0});
  expect_open_error({"metadata key count", "got 18446744073709551615"});
}

TEST_F(Malformed, UnknownValueType) {
  patch<uint32_t>(bytes_, value_type_pos("eps"), 13);
  expect_open_error({"'eps'", "value type", "got 13"});
}

TEST_F(Malformed, UnknownArrayElementType) {
  patch<uint32_t>(bytes_, value_type_pos("types") + 4, 99);
  expect_open_error({"'types'", "array element type", "got 99"});
}

TEST_F(Malformed, DuplicateKey) {
  bytes_[test::find_bytes(bytes_, "dup.b") + 4] = 'a';
  expect_open_error({"'dup.a'", "duplicate key"});
}

TEST_F(Malformed, DuplicateTensorName) {
  GGUFWriter w;
  float x[4] = {};
  w.add_tensor("t.one", DType::F32, {4}, x, 16);
  w.add_tensor("t.two", DType::F32, {4}, x, 16);
  bytes_ = w.to_bytes();
  std::memcpy(bytes_.data() + test::find_bytes(bytes_, "t.two"), "t.one", 5);
  expect_open_error({"'t.one'", "duplicate tensor name"});
}

TEST_F(Malformed, HugeTensorNameLength) {
  patch<uint64_t>(bytes_, info("alpha.weight", 2).name - 8, uint64_t{1} << 50);
  expect_open_error({"tensor info 0", "name length"});
}

TEST_F(Malformed, TooManyDims) {
  patch<uint32_t>(bytes_, info("alpha.weight", 2).n_dims, 7);
  expect_open_error({"'alpha.weight'", "n_dims", "expected at most 4, got 7"});
}

TEST_F(Malformed, UnknownGgmlType) {
  patch<uint32_t>(bytes_, info("beta.weight", 2).type, 1000);
  expect_open_error({"'beta.weight'", "ggml type", "got 1000"});
}

TEST_F(Malformed, RemovedGgmlType) {
  patch<uint32_t>(bytes_, info("beta.weight", 2).type, 4);  // the long-gone Q4_2
  expect_open_error({"'beta.weight'", "ggml type", "got 4"});
}

TEST_F(Malformed, RowNotAMultipleOfTheBlock) {
  patch<uint64_t>(bytes_, info("beta.weight", 2).dims, 33);
  expect_open_error({"'beta.weight'", "block size 32", "got 33"});
}

TEST_F(Malformed, OverflowingDims) {
  patch<uint64_t>(bytes_, info("alpha.weight", 2).dims + 8, uint64_t{1} << 62);
  expect_open_error({"'alpha.weight'", "ne[1]"});
}

TEST_F(Malformed, OverflowingByteSize) {
  // 2^62 F32 elements fit the element count but not a 64-bit byte count.
  patch<uint64_t>(bytes_, info("alpha.weight", 2).dims, uint64_t{1} << 62);
  patch<uint64_t>(bytes_, info("alpha.weight", 2).dims + 8, 1);
  expect_open_error({"'alpha.weight'", "data size", "below 2^64 bytes"});
}

TEST_F(Malformed, MisalignedTensorOffset) {
  patch<uint64_t>(bytes_, info("beta.weight", 2).offset, 8);
  expect_open_error({"'beta.weight'", "multiple of the alignment 64", "got 8"});
}

TEST_F(Malformed, TensorOffsetOutOfRange) {
  patch<uint64_t>(bytes_, info("beta.weight", 2).offset, uint64_t{1} << 40);
  expect_open_error({"'beta.weight'", "out of range"});
}

TEST_F(Malformed, TensorOffsetNearTwoToThe64) {
  patch<uint64_t>(bytes_, info("beta.weight", 2).offset, ~uint64_t{63});
  expect_open_error({"'beta.weight'", "out of range", "beyond 2^64"});
}

TEST_F(Malformed, TensorSizePastTheEnd) {
  patch<uint64_t>(bytes_, info("alpha.weight", 2).dims + 8, 1000);
  expect_open_error({"'alpha.weight'", "out of range"});
}

TEST_F(Malformed, AlignmentNotAPowerOfTwo) {
  patch<uint32_t>(bytes_, value_type_pos("general.alignment") + 4, 48);
  expect_open_error({"'general.alignment'", "power of two", "got 48"});
}

TEST_F(Malformed, AlignmentZero) {
  patch<uint32_t>(bytes_, value_type_pos("general.alignment") + 4, 0);
  expect_open_error({"'general.alignment'", "nonzero power of two", "got 0"});
}

TEST_F(Malformed, AlignmentWrongType) {
  patch<uint32_t>(bytes_, value_type_pos("general.alignment"), static_cast<uint32_t>(GGUFType::FLOAT32));
  expect_open_error({"'general.alignment'", "expected an integer", "got FLOAT32"});
}

TEST(GGUFMalformed, TooManyArrayElements) {
  // A count the file could hold (it is padded with a hole) but beyond the metadata element limit.
  GGUFWriter w;
  w.add_int_array("bytes", GGUFType::UINT8, {});
  auto bytes = w.to_bytes();
  const uint64_t count = (uint64_t{1} << 23) + 1;
  patch<uint64_t>(bytes, test::find_bytes(bytes, "bytes") + 5 + 4 + 4, count);
  test::ScratchDir dir{"io"};
  const std::string path = dir.file("many.gguf");
  test::write_bytes(path, bytes);
  std::filesystem::resize_file(path, bytes.size() + count);
  expect_error([&] { GGUFFile::open(path); }, {path, "'bytes'", "array element count", "got 8388609"});
}

TEST(GGUFMalformed, TooDeeplyNestedArray) {
  GGUFValue v{GGUFType::ARRAY, std::vector<GGUFValue>{}, GGUFType::INT32};
  for (int d = 0; d < 20; ++d) v = GGUFValue{GGUFType::ARRAY, std::vector<GGUFValue>{v}, GGUFType::ARRAY};
  GGUFWriter w;
  w.add_value("deep", v);
  test::ScratchDir dir{"io"};
  w.write(dir.file("deep.gguf"));
  expect_error([&] { GGUFFile::open(dir.file("deep.gguf")); }, {dir.file("deep.gguf"), "'deep'", "nesting"});
}

}  // namespace
}  // namespace db
