// Fill-in-the-middle tokens are found by their spellings: DeepSeek-V3's vocabulary has
// them, SmolLM2's does not; the prompt joins prefix and suffix in PSM order and
// encodes each marker as its single token.
#include "tokenizer/fim_tokens.h"

#include <gtest/gtest.h>

#include "io/gguf.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer_test_util.h"

namespace db {
namespace {

TEST(FimTokens, DeepSeekHasThemSmolLM2DoesNot) {
  const std::string dir = test::deepseek_tokenizer_dir();
  ASSERT_FALSE(dir.empty());
  const auto ds = Tokenizer::from_hf_dir(dir);
  const std::optional<FimTokens> fim = find_fim_tokens(*ds);
  ASSERT_TRUE(fim);
  EXPECT_EQ(fim->prefix, "<｜fim▁begin｜>");
  EXPECT_EQ(fim->suffix, "<｜fim▁hole｜>");
  EXPECT_EQ(fim->middle, "<｜fim▁end｜>");
  const std::string prompt = fim->prompt("def add(a, b):\n", "\n    return c\n");
  EXPECT_EQ(prompt, "<｜fim▁begin｜>def add(a, b):\n<｜fim▁hole｜>\n    return c\n<｜fim▁end｜>");
  const std::vector<int32_t> ids = ds->encode(prompt, /*add_special=*/false);
  EXPECT_EQ(ids.front(), ds->token_id(fim->prefix));
  EXPECT_EQ(ids.back(), ds->token_id(fim->middle));

  const std::string smol = test::smollm2_gguf_path();
  ASSERT_FALSE(smol.empty());
  EXPECT_FALSE(find_fim_tokens(*Tokenizer::from_gguf(*GGUFFile::open(smol))));
}

}  // namespace
}  // namespace db
