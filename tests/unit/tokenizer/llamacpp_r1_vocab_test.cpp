// DeepSeek-R1-Distill-Qwen's real vocabulary (GGUF metadata, qwen2 architecture,
// pre-tokenizer "deepseek-r1-qwen"): token ids identical to llama.cpp's on prompts
// with digits, CJK, emoji, whitespace runs, code and R1 chat markers.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "io/gguf.h"
#include "tokenizer/tokenizer.h"

namespace db {
namespace {

TEST(R1DistillQwenVocab, TokenIdsEqualLlamaCpp) {
  auto gguf = GGUFFile::open(DB_TEST_DATA "/tokenizer/deepseek-r1-distill-qwen/vocab.gguf");
  auto tok = Tokenizer::from_gguf(*gguf);
  std::ifstream in(DB_TEST_DATA "/reference/r1_qwen7b_tokenize.json");
  ASSERT_TRUE(in.good()) << "missing tests/data/reference/r1_qwen7b_tokenize.json";
  const auto ref = nlohmann::json::parse(in);
  size_t n = 0;
  for (const auto& c : ref.at("cases")) {
    const std::string prompt = c.at("prompt");
    const std::vector<int32_t> expected = c.at("prompt_ids");
    EXPECT_EQ(tok->encode(prompt, /*add_special=*/true, /*parse_special=*/true), expected)
        << "case " << c.at("id").get<std::string>();
    ++n;
  }
  EXPECT_GE(n, 10u);
  EXPECT_EQ(tok->bos_id(), 151646);
  EXPECT_TRUE(tok->is_eos(151643));
}

}  // namespace
}  // namespace db
