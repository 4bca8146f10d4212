// Pre-tokenizer steps against results of the Hugging Face tokenizers library.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tokenizer/byte_level.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/regex.h"
#include "util/error.h"

namespace db {
namespace {

using Pieces = std::vector<std::string>;

Pieces split(const PreTokenizer& p, const std::string& text) {
  Pieces out;
  p.split(text, out);
  return out;
}

PreTokenizer literal_split(SplitBehavior b, bool invert) {
  PreTokenizer p;
  p.add_split("-", /*literal=*/true, b, invert);
  p.add_byte_level(false, false);
  return p;
}

TEST(PreTokenizer, SplitBehaviorsMatchHuggingFace) {
  const std::string text = "a-b--c-";
  EXPECT_EQ(split(literal_split(SplitBehavior::Removed, false), text), (Pieces{"a", "b", "c"}));
  EXPECT_EQ(split(literal_split(SplitBehavior::Removed, true), text), (Pieces{"-", "-", "-", "-"}));
  EXPECT_EQ(split(literal_split(SplitBehavior::Isolated, false), text), (Pieces{"a", "-", "b", "-", "-", "c", "-"}));
  EXPECT_EQ(split(literal_split(SplitBehavior::MergedWithPrevious, false), text), (Pieces{"a-", "b-", "-", "c-"}));
  EXPECT_EQ(split(literal_split(SplitBehavior::MergedWithPrevious, true), text),
            (Pieces{"a", "-b", "-", "-c", "-"}));
  EXPECT_EQ(split(literal_split(SplitBehavior::MergedWithNext, false), text), (Pieces{"a", "-b", "-", "-c", "-"}));
  EXPECT_EQ(split(literal_split(SplitBehavior::MergedWithNext, true), text), (Pieces{"a-", "b-", "-", "c-"}));
  EXPECT_EQ(split(literal_split(SplitBehavior::Contiguous, false), text), (Pieces{"a", "-", "b", "--", "c", "-"}));
}

TEST(PreTokenizer, ByteLevelGpt2Regex) {
  PreTokenizer p;
  p.add_byte_level(false, true);
  EXPECT_EQ(split(p, "Hello world's  123 !!\n\n x"),
            (Pieces{"Hello", " world", "'s", " ", " 123", " !!", "\n\n", " x"}));
}

TEST(PreTokenizer, DigitsRunsAndPrefixSpacePerPiece) {
  PreTokenizer digits;
  digits.add_digits(false);
  digits.add_byte_level(false, false);
  EXPECT_EQ(split(digits, "ab123c4"), (Pieces{"ab", "123", "c", "4"}));
  PreTokenizer prefixed;
  prefixed.add_split("[a-z]+", false, SplitBehavior::Isolated, false);
  prefixed.add_byte_level(true, false);
  EXPECT_EQ(split(prefixed, "ab12 cd"), (Pieces{" ab", " 12 ", " cd"}));
}

TEST(PreTokenizer, WhiteSpaceEscapesFollowOniguruma) {
  // U+0085 (NEL) is White_Space for Oniguruma's \s but not for PCRE2's.
  Regex r("\\s+");
  std::vector<MatchSpan> m;
  r.find_all("a\xC2\x85" "b", m);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0], (MatchSpan{1, 3}));
  EXPECT_EQ(rewrite_whitespace_escapes("[^\\s\\p{L}]"),
            "[^\\x{9}-\\x{d}\\x{20}\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}"
            "\\x{3000}\\p{L}]");
  EXPECT_EQ(rewrite_whitespace_escapes("[\\]\\s]"), "[\\]\\x{9}-\\x{d}\\x{20}\\x{85}\\x{a0}\\x{1680}\\x{2000}-"
                                                    "\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}]");
}

TEST(PreTokenizer, HugeWhitespaceRunDoesNotFail) {
  PreTokenizer p;
  p.add_byte_level(false, true);
  const std::string text = std::string(1 << 20, ' ') + "x";
  const auto pieces = split(p, text);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[0].size(), (1u << 20) - 1);
  EXPECT_EQ(pieces[1], " x");
}

TEST(PreTokenizer, FromJsonAndErrors) {
  const auto j = nlohmann::json::parse(R"({"type": "Sequence", "pretokenizers": [
      {"type": "Split", "pattern": {"Regex": "\\p{N}{1,3}"}, "behavior": "Isolated", "invert": false},
      {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]})");
  const auto p = PreTokenizer::from_json(j, "test");
  EXPECT_EQ(p.num_steps(), 2u);
  EXPECT_EQ(split(p, "x12345y"), (Pieces{"x", "123", "45", "y"}));
  EXPECT_THROW(PreTokenizer::from_json(nlohmann::json::parse(R"({"type": "Metaspace"})"), "t"), Error);
  EXPECT_THROW(PreTokenizer::from_json(
                   nlohmann::json::parse(R"({"type": "Split", "pattern": {"Regex": "("}, "behavior": "Isolated"})"),
                   "t"),
               Error);
  EXPECT_THROW(PreTokenizer::from_json(
                   nlohmann::json::parse(R"({"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Sideways"})"),
                   "t"),
               Error);
}

TEST(PreTokenizer, GGUFNames) {
  for (const auto& name : PreTokenizer::gguf_names())
    EXPECT_TRUE(PreTokenizer::from_gguf_name(name).ends_with_byte_level()) << name;
  EXPECT_THROW(PreTokenizer::from_gguf_name("no-such-model"), Error);
  EXPECT_TRUE(PreTokenizer::gguf_name_ignores_merges("llama-bpe"));
  EXPECT_FALSE(PreTokenizer::gguf_name_ignores_merges("qwen2"));
  // DeepSeek-V3: 1-3 digit groups, CJK runs isolated, letters after punctuation kept apart.
  EXPECT_EQ(split(PreTokenizer::from_gguf_name("deepseek-v3"), "abc12345 中文x.yz"),
            (Pieces{"abc", "123", "45", " ", "中文", "x", ".yz"}));
}

TEST(ByteLevel, MappingIsABijection) {
  for (int b = 0; b < 256; ++b) {
    const std::string c = byte_level::char_of_byte(static_cast<uint8_t>(b));
    const auto back = byte_level::decode(c);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, std::string(1, static_cast<char>(b)));
  }
  EXPECT_EQ(byte_level::char_of_byte(' '), "\xC4\xA0");  // Ġ
  EXPECT_EQ(byte_level::char_of_byte('\n'), "\xC4\x8A");  // Ċ
  EXPECT_EQ(byte_level::char_of_byte('A'), "A");
  EXPECT_FALSE(byte_level::decode("\xEF\xBD\x9C").has_value());  // ｜ stands for no byte
}

}  // namespace
}  // namespace db
