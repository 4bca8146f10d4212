// Tokenizers written as GGUF keys (tokenizer/tokenizer_gguf_keys.h) and read
// back: the real DeepSeek-V3 tokenizer, and its vocabulary behind the Qwen2
// and Llama-3 pre-tokenizers, come back encoding the corpus to the same ids
// under the pre-tokenizer name llama.cpp gives them; what the keys cannot
// hold is refused by name.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "io/gguf.h"
#include "io/gguf_writer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_gguf_keys.h"
#include "tokenizer_test_util.h"
#include "util/error.h"

namespace db {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The tokenizer of `parts` written as GGUF keys into a file and read back.
std::unique_ptr<Tokenizer> through_gguf(const TokenizerParts& parts, const std::string& file_name,
                                        std::string* pre = nullptr) {
  GGUFWriter w;
  w.add_string("general.architecture", "llama");
  add_tokenizer_gguf_keys(parts, w);
  const std::string path = test::scratch_dir() + "/" + file_name;
  w.write(path);
  const auto f = GGUFFile::open(path);
  if (pre != nullptr) *pre = f->get_string("tokenizer.ggml.pre");
  return Tokenizer::from_gguf(*f);
}

void expect_same_ids(const Tokenizer& a, const Tokenizer& b) {
  EXPECT_EQ(tokenizer_difference(a, b), "");
  for (const std::string& text : test::load_corpus()) {
    ASSERT_EQ(b.encode(text, true, true), a.encode(text, true, true)) << text;
    ASSERT_EQ(b.encode(text, false, false), a.encode(text, false, false)) << text;
  }
}

TEST(TokenizerGgufKeys, DeepSeekV3TokenizerRoundTrips) {
  const std::string dir = test::deepseek_tokenizer_dir();
  if (dir.empty()) return;
  const TokenizerParts parts = Tokenizer::hf_dir_parts(dir);
  std::string pre;
  const auto back = through_gguf(parts, "v3_keys.gguf", &pre);
  EXPECT_EQ(pre, "deepseek-v3");
  const auto want = Tokenizer::from_parts(parts);
  expect_same_ids(*want, *back);
  EXPECT_EQ(back->bos_id(), want->bos_id());
  EXPECT_EQ(back->add_bos(), want->add_bos());
}

// The fixtures' pre_tokenizer objects are those of Qwen2's and Llama-3's tokenizer.json files.
TEST(TokenizerGgufKeys, QwenAndLlamaPreTokenizersGetTheirNames) {
  const std::string dir = test::deepseek_tokenizer_dir();
  if (dir.empty()) return;
  const test::GGUFVocab vocab = test::vocab_from_tokenizer_json(dir + "/tokenizer.json");
  for (const auto& [fixture, name] : {std::pair{"deepseek_v3_qwen2", "qwen2"}, {"deepseek_v3_llama3", "llama-bpe"}}) {
    SCOPED_TRACE(fixture);
    const json fx = test::load_fixture(fixture);
    fs::create_directories(test::scratch_dir() + "/" + fixture);
    test::write_tokenizer_json(vocab, fx.at("pre_tokenizer"), fx.at("ignore_merges"),
                               std::string(fixture) + "/tokenizer.json");
    const TokenizerParts parts = Tokenizer::hf_dir_parts(test::scratch_dir() + "/" + fixture);
    std::string pre;
    const auto back = through_gguf(parts, std::string(fixture) + ".gguf", &pre);
    EXPECT_EQ(pre, name);
    expect_same_ids(*Tokenizer::from_parts(parts), *back);
  }
}

TEST(TokenizerGgufKeys, WhatTheKeysCannotHoldIsRefused) {
  TokenizerParts p;
  p.tokens = {"a", "b", "ab"};
  p.merges = {{"a", "b"}};
  p.pre_tokenizer.add_split("x+", false, SplitBehavior::Isolated, false);
  p.pre_tokenizer.add_byte_level(false, false);
  p.source = "t.json";
  GGUFWriter w;
  try {
    add_tokenizer_gguf_keys(p, w);
    FAIL() << "expected db::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("t.json: cannot be written as GGUF tokenizer keys: its pre_tokenizer"),
              std::string::npos)
        << e.what();
  }
  p.pre_tokenizer = PreTokenizer::from_gguf_name("gpt-2");
  p.end_of_generation = {0, 1, 2};
  try {
    add_tokenizer_gguf_keys(p, w);
    FAIL() << "expected db::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("3 ids besides EOS end generation"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace db
