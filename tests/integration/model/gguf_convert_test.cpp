// `deepbatch convert` on the default model: to F32 every weight keeps its value
// exactly, vectors and metadata are copied (general.file_type renamed), and a
// Q8_0 copy loads as the same network; unknown types are refused by name.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "default_model.h"
#include "io/gguf.h"
#include "kernels/dequantize.h"
#include "model/gguf_convert.h"
#include "model/model.h"
#include "scratch_dir.h"
#include "util/error.h"

namespace db::test {
namespace {

std::vector<float> values(const GGUFFile& f, const GGUFTensorInfo& t) {
  const int64_t n = t.shape.back();
  const size_t rows = t.nbytes / row_bytes(t.dtype, n);
  std::vector<float> out(rows * static_cast<size_t>(n));
  const uint8_t* src = f.mapping().data() + f.data_offset() + t.offset;
  for (size_t r = 0; r < rows; ++r)
    kernels::dequantize_row_data(t.dtype, src + r * row_bytes(t.dtype, n), out.data() + r * static_cast<size_t>(n), n);
  return out;
}

TEST(GgufConvert, ToF32KeepsEveryWeightAndTheMetadata) {
  const ScratchDir dir("convert");
  const std::string out = dir.file("f32.gguf");
  const GgufConvertReport r = convert_gguf(kDefaultModelPath, out, DType::F32);
  const auto a = GGUFFile::open(kDefaultModelPath), b = GGUFFile::open(out);
  ASSERT_EQ(a->tensor_infos().size(), b->tensor_infos().size());
  EXPECT_EQ(r.converted + r.copied, static_cast<int64_t>(a->tensor_infos().size()));
  EXPECT_GT(r.converted, 100);
  for (size_t i = 0; i < a->tensor_infos().size(); ++i) {
    const GGUFTensorInfo &ta = a->tensor_infos()[i], &tb = *b->find_tensor(ta.name);
    ASSERT_EQ(ta.shape, tb.shape) << ta.name;
    if (ta.shape.size() >= 2) {
      EXPECT_EQ(tb.dtype, DType::F32) << ta.name;
      EXPECT_EQ(values(*a, ta), values(*b, tb)) << ta.name;
    } else {
      EXPECT_EQ(tb.dtype, ta.dtype) << ta.name;
      EXPECT_EQ(0, std::memcmp(a->mapping().data() + a->data_offset() + ta.offset,
                               b->mapping().data() + b->data_offset() + tb.offset, ta.nbytes))
          << ta.name;
    }
  }
  for (const auto& [key, value] : a->metadata()) {
    if (key == "general.file_type") continue;
    ASSERT_TRUE(b->has(key)) << key;
    EXPECT_EQ(gguf_value_type_name(*b->find(key)), gguf_value_type_name(value)) << key;
  }
  EXPECT_EQ(b->get_string_array("tokenizer.ggml.tokens"), a->get_string_array("tokenizer.ggml.tokens"));
  EXPECT_EQ(b->get_uint("general.file_type"), 0u);
}

TEST(GgufConvert, AQ8CopyLoadsAsTheSameNetwork) {
  const ScratchDir dir("convert");
  const std::string out = dir.file("q8_0.gguf");
  convert_gguf(kDefaultModelPath, out, convert_type_from_name("Q8_0"));
  const auto q8 = load_model(out), q4 = load_model(kDefaultModelPath);
  EXPECT_EQ(q8->config().vocab, q4->config().vocab);
  EXPECT_EQ(q8->config().n_layers, q4->config().n_layers);
  EXPECT_EQ(GGUFFile::open(out)->find_tensor("blk.0.attn_q.weight")->dtype, DType::Q8_0);
}

TEST(GgufConvert, RefusesTypesItCannotWrite) {
  EXPECT_THROW(convert_type_from_name("q4_k"), Error);
  const ScratchDir dir("convert");
  EXPECT_THROW(convert_gguf(kDefaultModelPath, dir.file("never.gguf"), DType::Q6_K), Error);
  try {
    convert_type_from_name("int3");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("f16"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace db::test
