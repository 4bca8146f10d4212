// Tokenizer::encode_bounded on the default model's tokenizer: the same ids as encode()
// whenever they fit the limit, nullopt as soon as they do not, and texts far longer than
// the limit refused without being encoded in full. PreTokenizer::split_each gives the
// pieces split() gives, for every split behavior.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/gguf.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer_test_util.h"

namespace db {
namespace {

std::unique_ptr<Tokenizer> smollm2() {
  const std::string path = test::smollm2_gguf_path();
  if (path.empty()) return nullptr;
  auto f = GGUFFile::open(path);
  return Tokenizer::from_gguf(*f);
}

std::vector<std::string> texts() {
  std::vector<std::string> out = test::load_corpus();
  const std::vector<std::string> random = test::load_random_corpus();
  out.insert(out.end(), random.begin(), random.end());
  out.push_back("<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n");
  out.push_back("<|im_end|><|im_end|>   trailing spaces   \n\n\t tabs \xff\xfe stray bytes 12345");
  return out;
}

// encode_bounded at `limit` must be encode()'s ids when they number at most `limit`, else nullopt.
void expect_bounded_matches(const Tokenizer& tok, const std::string& text, bool add_special, bool parse_special) {
  const std::vector<int32_t> full = tok.encode(text, add_special, parse_special);
  std::vector<size_t> limits = {0, full.size(), full.size() + 1, 2 * full.size() + 7};
  if (!full.empty()) limits.push_back(full.size() - 1);
  if (full.size() > 2) limits.push_back(full.size() / 2);
  for (size_t limit : limits) {
    const auto bounded = tok.encode_bounded(text, limit, add_special, parse_special);
    if (full.size() <= limit) {
      ASSERT_TRUE(bounded.has_value()) << "limit " << limit << ", " << full.size() << " ids: \"" << text << "\"";
      EXPECT_EQ(*bounded, full) << "limit " << limit << ": \"" << text << "\"";
    } else {
      EXPECT_FALSE(bounded.has_value()) << "limit " << limit << ", " << full.size() << " ids: \"" << text << "\"";
    }
  }
}

TEST(BoundedEncode, SameIdsAsEncodeWithinTheLimitOnTheDefaultModel) {
  auto tok = smollm2();
  ASSERT_TRUE(tok);
  for (const std::string& text : texts()) {
    expect_bounded_matches(*tok, text, /*add_special=*/true, /*parse_special=*/true);
    expect_bounded_matches(*tok, text, /*add_special=*/false, /*parse_special=*/false);
  }
}

TEST(BoundedEncode, LongTextsAreRefusedWithoutEncodingThemInFull) {
  auto tok = smollm2();
  ASSERT_TRUE(tok);
  ASSERT_GT(tok->max_token_bytes(), 0u);
  std::string words;
  for (int i = 0; i < 2000000; ++i) words += "hello ";  // 12 MB, 2 M tokens
  const std::string one_piece(12 << 20, 'a');        // a single pre-tokenizer piece
  std::string specials;
  for (int i = 0; i < 1000000; ++i) specials += "<|im_end|>";
  // Encoding any of them in full takes seconds; stopping at the limit takes a small fraction of that.
  for (const std::string* text : {&std::as_const(words), &one_piece, &std::as_const(specials)}) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(tok->encode_bounded(*text, 8191, true).has_value());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 0.5) << "a text of " << text->size() << " bytes starting \"" << text->substr(0, 20) << "\"";
  }
  // The prefix up to the limit is what encode() gives for it.
  const std::string head = words.substr(0, 600);
  EXPECT_EQ(*tok->encode_bounded(head, 8191, true), tok->encode(head, true));
}

TEST(BoundedEncode, EachIdStandsForAtMostMaxTokenBytes) {
  auto tok = smollm2();
  ASSERT_TRUE(tok);
  size_t longest = 0;
  for (size_t id = 0; id < tok->vocab_size(); ++id)
    longest = std::max(longest, tok->token_to_piece(static_cast<int32_t>(id)).size());
  EXPECT_EQ(longest, tok->max_token_bytes());
  EXPECT_LT(tok->max_token_bytes(), 1024u);  // so a string cap derived from it stays small
}

PreTokenizer bounded_literal_split(SplitBehavior b, bool invert) {
  PreTokenizer p;
  p.add_split("-", true, b, invert);
  p.add_byte_level(false, false);
  return p;
}

std::vector<std::string> each(const PreTokenizer& p, const std::string& text) {
  std::vector<std::string> out;
  EXPECT_TRUE(p.split_each(text, [&](std::string_view piece) {
    out.emplace_back(piece);
    return true;
  }));
  return out;
}

TEST(BoundedEncode, SplitEachGivesThePiecesOfSplit) {
  const SplitBehavior behaviors[] = {SplitBehavior::Removed, SplitBehavior::Isolated,
                                     SplitBehavior::MergedWithPrevious, SplitBehavior::MergedWithNext,
                                     SplitBehavior::Contiguous};
  const char* cases[] = {"a-b--c-", "-", "--", "abc", "-a-", "a", "---x---y"};
  for (SplitBehavior b : behaviors)
    for (bool invert : {false, true})
      for (const char* text : cases) {
        const PreTokenizer p = bounded_literal_split(b, invert);
        std::vector<std::string> expected;
        p.split(text, expected);
        EXPECT_EQ(each(p, text), expected) << "behavior " << static_cast<int>(b) << " invert " << invert << ": "
                                           << text;
      }
  // Stopping: the sink's false ends the split at once.
  const PreTokenizer p = bounded_literal_split(SplitBehavior::Isolated, false);
  int calls = 0;
  EXPECT_FALSE(p.split_each("a-b-c", [&](std::string_view) { return ++calls < 2; }));
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace db
