// Reads the default model file (produced by llama.cpp's converter) and checks
// values known from its published configuration.
#include <gtest/gtest.h>

#include "default_model.h"
#include "io/gguf.h"

namespace db {
namespace {

class RealModel : public test::DefaultModelSuite<GGUFFile> {};

TEST_F(RealModel, Header) {
  EXPECT_EQ(model_->version(), 3u);
  EXPECT_EQ(model_->alignment(), 32u);
  EXPECT_EQ(model_->tensor_infos().size(), 272u);
  EXPECT_EQ(model_->data_offset() % 32, 0u);
}

TEST_F(RealModel, Metadata) {
  EXPECT_EQ(model_->get_string("general.architecture"), "llama");
  EXPECT_EQ(model_->get_int("llama.block_count"), 30);
  EXPECT_EQ(model_->get_uint("llama.embedding_length"), 576u);
  EXPECT_EQ(model_->get_int("llama.attention.head_count"), 9);
  EXPECT_EQ(model_->get_int("llama.attention.head_count_kv"), 3);
  EXPECT_NEAR(model_->get_float("llama.attention.layer_norm_rms_epsilon"), 1e-5, 1e-9);
  EXPECT_EQ(model_->get_string("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(model_->get_string("tokenizer.ggml.pre"), "smollm");
  EXPECT_TRUE(model_->opt_string("tokenizer.chat_template").has_value());
  EXPECT_FALSE(model_->opt_int("no.such.key").has_value());
  EXPECT_EQ(gguf_value_type_name(*model_->find("tokenizer.ggml.tokens")), "ARRAY[STRING]");

  auto tokens = model_->get_string_array("tokenizer.ggml.tokens");
  ASSERT_EQ(tokens.size(), 49152u);
  EXPECT_EQ(tokens[0], "<|endoftext|>");
  EXPECT_EQ(tokens[1], "<|im_start|>");
  EXPECT_EQ(model_->get_int_array("tokenizer.ggml.token_type").size(), 49152u);
  EXPECT_FALSE(model_->get_string_array("tokenizer.ggml.merges").empty());
}

TEST_F(RealModel, Tensors) {
  auto embd = model_->tensor("token_embd.weight");
  EXPECT_EQ(embd.dtype, DType::Q8_0);
  EXPECT_EQ(embd.shape, (std::vector<int64_t>{49152, 576}));
  EXPECT_EQ(embd.nbytes(), 49152u * 576 / 32 * 34);

  auto q = model_->tensor("blk.0.attn_q.weight");
  EXPECT_EQ(q.dtype, DType::Q4_1);
  EXPECT_EQ(q.shape, (std::vector<int64_t>{576, 576}));

  auto norm = model_->tensor("output_norm.weight");
  EXPECT_EQ(norm.dtype, DType::F32);
  EXPECT_EQ(norm.shape, (std::vector<int64_t>{576}));

  // Every tensor lies inside the file and the views point into the mapping.
  const uint8_t* begin = model_->mapping().data();
  const uint8_t* end = begin + model_->mapping().size();
  for (const auto& info : model_->tensor_infos()) {
    auto v = model_->tensor(info.name);
    EXPECT_EQ(v.nbytes(), info.nbytes) << info.name;
    const auto* p = static_cast<const uint8_t*>(v.data);
    EXPECT_TRUE(p >= begin && p + v.nbytes() <= end) << info.name;
  }
}

}  // namespace
}  // namespace db
