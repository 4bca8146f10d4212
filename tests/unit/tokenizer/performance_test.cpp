// Encoding speed: a text of well over 10k tokens must take milliseconds.
#include <gtest/gtest.h>

#include <chrono>

#include "io/gguf.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer_test_util.h"

namespace db {
namespace {

void expect_fast(const Tokenizer& tok, const std::string& label) {
  std::string text;
  const auto corpus = test::load_corpus();
  while (text.size() < 200000)
    for (const auto& s : corpus) text += s + "\n";
  tok.encode(text, false);  // warm up
  const auto t0 = std::chrono::steady_clock::now();
  const auto ids = tok.encode(text, false);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const double ms_per_10k = ms * 10000.0 / static_cast<double>(ids.size());
  std::printf("[ perf ] %s: %zu bytes -> %zu tokens in %.1f ms (%.2f ms per 10k tokens)\n", label.c_str(), text.size(),
              ids.size(), ms, ms_per_10k);
  EXPECT_GT(ids.size(), 10000u);
  // Generous bound so that sanitizer and debug builds pass; Release is far below it.
  EXPECT_LT(ms_per_10k, 250.0) << label;
  EXPECT_EQ(tok.decode(ids), text);
}

TEST(TokenizerPerformance, SmolLM2) {
  const std::string path = test::smollm2_gguf_path();
  if (path.empty()) return;
  auto f = GGUFFile::open(path);
  expect_fast(*Tokenizer::from_gguf(*f), "SmolLM2 (GGUF)");
}

TEST(TokenizerPerformance, DeepSeekV3) {
  const std::string dir = test::deepseek_tokenizer_dir();
  if (dir.empty()) return;
  const auto t0 = std::chrono::steady_clock::now();
  const auto tok = Tokenizer::from_hf_dir(dir);
  std::printf("[ perf ] DeepSeek-V3 tokenizer.json loaded in %.0f ms\n",
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  expect_fast(*tok, "DeepSeek-V3 (tokenizer.json)");
}

}  // namespace
}  // namespace db
