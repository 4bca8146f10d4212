// UTF-8 helpers and the incremental detokenizer.
#include <gtest/gtest.h>

#include <random>

#include "io/gguf.h"
#include "tokenizer/detokenizer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"
#include "tokenizer_test_util.h"

namespace db {
namespace {

const std::string kFFFD = "\xEF\xBF\xBD";

TEST(Utf8, RepairReplacesMaximalSubparts) {
  EXPECT_EQ(utf8::repair("abc"), "abc");
  EXPECT_EQ(utf8::repair("\xF0\x9F\x98"), kFFFD);                   // one cut-short character
  EXPECT_EQ(utf8::repair("\xE0\x80" "a"), kFFFD + kFFFD + "a");    // E0 80 is never valid
  EXPECT_EQ(utf8::repair("\xED\xA0\x80"), kFFFD + kFFFD + kFFFD);  // surrogate
  EXPECT_EQ(utf8::repair("\xC3\xA9\xFF"), "\xC3\xA9" + kFFFD);
  EXPECT_TRUE(utf8::is_valid("\xF0\x9F\x98\x80"));
  EXPECT_FALSE(utf8::is_valid("\xC0\x80"));
}

TEST(Utf8, IncompleteTail) {
  EXPECT_EQ(utf8::incomplete_tail_length("ab"), 0u);
  EXPECT_EQ(utf8::incomplete_tail_length("a\xF0\x9F\x98"), 3u);
  EXPECT_EQ(utf8::incomplete_tail_length("a\xF0\x9F"), 2u);
  EXPECT_EQ(utf8::incomplete_tail_length("a\xE4"), 1u);
  EXPECT_EQ(utf8::incomplete_tail_length("a\x98"), 0u);       // stray continuation: never completes
  EXPECT_EQ(utf8::incomplete_tail_length("a\xE0\x80"), 0u);   // already ill-formed
  EXPECT_EQ(utf8::incomplete_tail_length("\xF0\x9F\x98\x80"), 0u);
}

// Feeding ids one at a time emits only valid UTF-8, and everything emitted concatenates
// to the full decoded text.
void expect_streams(const Tokenizer& tok, const std::string& text) {
  const auto ids = tok.encode(text, false);
  IncrementalDetokenizer d(tok);
  std::string all;
  size_t held_somewhere = 0;
  for (int32_t id : ids) {
    const std::string chunk = d.feed(id);
    EXPECT_TRUE(utf8::is_valid(chunk)) << "chunk of \"" << text << "\"";
    held_somewhere += d.held_bytes() > 0;
    all += chunk;
  }
  all += d.flush();
  EXPECT_EQ(all, text);
  EXPECT_EQ(d.held_bytes(), 0u);
}

TEST(IncrementalDetokenizer, EmojiAndCjkSplitAcrossTokens) {
  const std::string path = test::smollm2_gguf_path();
  if (path.empty()) return;
  auto f = GGUFFile::open(path);
  const auto tok = Tokenizer::from_gguf(*f);
  // The SmolLM2 vocabulary has few CJK/emoji tokens, so these split inside characters.
  const std::string emoji = "👨‍👩‍👧‍👦 🏳️‍🌈 🧑🏿‍💻";
  const auto ids = tok->encode(emoji, false);
  size_t partial = 0;
  for (int32_t id : ids) partial += !utf8::is_valid(tok->token_to_piece(id));
  EXPECT_GT(partial, 0u) << "the test needs tokens that end inside a character";
  expect_streams(*tok, emoji);
  expect_streams(*tok, "人工智能是计算机科学的一个分支。日本語のテキスト。한국어 텍스트");
  for (const auto& text : test::load_corpus()) expect_streams(*tok, text);
}

TEST(IncrementalDetokenizer, FlushReplacesAnIncompleteTailAndSkipsSpecials) {
  const std::string path = test::smollm2_gguf_path();
  if (path.empty()) return;
  auto f = GGUFFile::open(path);
  const auto tok = Tokenizer::from_gguf(*f);
  const auto ids = tok->encode("a😀", false);
  ASSERT_GE(ids.size(), 2u);
  IncrementalDetokenizer d(*tok);
  std::string out;
  for (size_t i = 0; i + 1 < ids.size(); ++i) out += d.feed(ids[i]);  // stop before the emoji completes
  EXPECT_EQ(out, "a");
  EXPECT_GT(d.held_bytes(), 0u);
  EXPECT_EQ(d.flush(), kFFFD);

  IncrementalDetokenizer skip(*tok, /*skip_special=*/true);
  const auto chat = tok->encode("<|im_start|>user\nhi<|im_end|>", false);
  EXPECT_EQ(skip.feed(chat) + skip.flush(), "user\nhi");
}

TEST(IncrementalDetokenizer, RandomBytesMatchLossyDecode) {
  const std::string dir = test::deepseek_tokenizer_dir();
  if (dir.empty()) return;
  const auto tok = Tokenizer::from_hf_dir(dir);
  std::mt19937 rng(1234);
  for (int round = 0; round < 300; ++round) {
    std::string bytes(rng() % 40, '\0');
    for (auto& c : bytes) c = static_cast<char>(rng() % 4 == 0 ? 0x80 + rng() % 0x80 : rng() % 256);
    const auto ids = tok->encode(bytes, false, rng() % 2 == 0);
    ASSERT_EQ(tok->decode_bytes(ids), bytes);  // every byte of the vocabulary exists: exact round trip
    IncrementalDetokenizer d(*tok);
    std::string all;
    for (int32_t id : ids) {
      const std::string chunk = d.feed(id);
      ASSERT_TRUE(utf8::is_valid(chunk));
      all += chunk;
    }
    all += d.flush();
    EXPECT_EQ(all, tok->decode(ids));
  }
}

}  // namespace
}  // namespace db
