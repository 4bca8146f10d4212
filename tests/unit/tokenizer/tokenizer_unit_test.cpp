// Tokenizer behaviour on a small hand-made vocabulary: merge order, ignore_merges,
// added-token matching, invalid input and validation errors.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer_test_util.h"
#include "util/error.h"

namespace db {
namespace {

using Ids = std::vector<int32_t>;

// Ids 0..255: the byte characters; then the merged tokens and added tokens below.
struct Tiny {
  TokenizerParts parts;
  int32_t add(const std::string& text, TokenKind kind = TokenKind::Normal) {
    parts.tokens.push_back(text);
    parts.kinds.push_back(kind);
    return static_cast<int32_t>(parts.tokens.size() - 1);
  }
  Tiny() {
    for (int b = 0; b < 256; ++b) add(byte_level::char_of_byte(static_cast<uint8_t>(b)));
    parts.pre_tokenizer.add_byte_level(false, true);
  }
  int32_t special(const std::string& text, bool is_special = true, bool lstrip = false, bool rstrip = false) {
    const int32_t id = add(text, is_special ? TokenKind::Special : TokenKind::Added);
    AddedToken a;
    a.id = id;
    a.content = text;
    a.special = is_special;
    a.lstrip = lstrip;
    a.rstrip = rstrip;
    parts.added.push_back(a);
    return id;
  }
};

TEST(TokenizerUnit, MergesByRankThenLeftmost) {
  Tiny t;
  const int32_t bc = t.add("bc"), ab = t.add("ab"), aa = t.add("aa"), abc = t.add("abc");
  t.parts.merges = {{"b", "c"}, {"a", "b"}, {"a", "a"}, {"a", "bc"}};
  const auto tok = Tokenizer::from_parts(t.parts);
  EXPECT_EQ(tok->encode("abc", false), (Ids{abc}));           // b+c (rank 0) first, then a+bc
  EXPECT_EQ(tok->encode("ab", false), (Ids{ab}));
  EXPECT_EQ(tok->encode("aaa", false), (Ids{aa, 'a'}));       // leftmost pair of equal rank
  EXPECT_EQ(tok->encode("abab", false), (Ids{ab, ab}));
  EXPECT_EQ(tok->encode("bcx", false), (Ids{bc, 'x'}));
}

TEST(TokenizerUnit, IgnoreMergesLooksUpWholePieces) {
  Tiny t;
  const int32_t xyz = t.add("xyz");
  t.parts.merges = {};
  EXPECT_EQ(Tokenizer::from_parts(t.parts)->encode("xyz", false), (Ids{'x', 'y', 'z'}));
  t.parts.ignore_merges = true;
  EXPECT_EQ(Tokenizer::from_parts(t.parts)->encode("xyz", false), (Ids{xyz}));
}

TEST(TokenizerUnit, AddedTokensLeftmostLongest) {
  Tiny t;
  const int32_t s = t.special("<s>"), sx = t.special("<s>x"), tool = t.special("<tool>", /*is_special=*/false);
  const auto tok = Tokenizer::from_parts(t.parts);
  EXPECT_EQ(tok->encode("<s>x<s>", false), (Ids{sx, s}));
  EXPECT_EQ(tok->encode("a<tool>b", false), (Ids{'a', tool, 'b'}));
  // Specials as text: "<s>" is encoded from its bytes, the non-special "<tool>" is still parsed.
  EXPECT_EQ(tok->encode("<s><tool>", false, /*parse_special=*/false), (Ids{'<', 's', '>', tool}));
  EXPECT_EQ(tok->decode({'a', s, 'b'}, /*skip_special=*/true), "ab");
  EXPECT_EQ(tok->decode({'a', s, 'b'}), "a<s>b");
}

TEST(TokenizerUnit, AddedTokenStripFlags) {
  Tiny t;
  const int32_t mask = t.special("<mask>", true, /*lstrip=*/true, /*rstrip=*/true);
  const auto tok = Tokenizer::from_parts(t.parts);
  EXPECT_EQ(tok->encode("a  <mask>  b", false), (Ids{'a', mask, 'b'}));
}

TEST(TokenizerUnit, BosEosAndEndMarkers) {
  Tiny t;
  const int32_t bos = t.special("<|begin|>"), eos = t.special("<|end|>"), im_end = t.special("<|im_end|>");
  t.parts.bos_id = bos;
  t.parts.eos_id = eos;
  t.parts.add_bos = true;
  const auto tok = Tokenizer::from_parts(t.parts);
  EXPECT_EQ(tok->encode("a", true), (Ids{bos, 'a'}));
  EXPECT_EQ(tok->encode("a", false), (Ids{'a'}));
  EXPECT_EQ(tok->eos_ids(), (Ids{eos, im_end}));
  EXPECT_TRUE(tok->is_eos(im_end));
  EXPECT_FALSE(tok->is_eos(bos));
}

TEST(TokenizerUnit, InvalidUtf8BecomesByteTokens) {
  Tiny t;
  const auto tok = Tokenizer::from_parts(t.parts);
  const std::string bad = "a\xFF\xC3(\xE2\x82 \xF0\x9F\x98";
  const auto ids = tok->encode(bad, false);
  EXPECT_EQ(tok->decode_bytes(ids), bad);
  EXPECT_EQ(tok->decode(ids), "a\xEF\xBF\xBD\xEF\xBF\xBD(\xEF\xBF\xBD \xEF\xBF\xBD");
  // Unknown ids decode to nothing rather than failing.
  EXPECT_EQ(tok->decode({-5, 'a', 1 << 30}), "a");
  EXPECT_EQ(tok->token_to_piece(-1), "");
}

TEST(TokenizerUnit, ValidationErrors) {
  {
    Tiny t;
    t.parts.bos_id = 100000;
    EXPECT_THROW(Tokenizer::from_parts(t.parts), Error);
  }
  {
    Tiny t;
    t.parts.add_bos = true;  // but no BOS id
    EXPECT_THROW(Tokenizer::from_parts(t.parts), Error);
  }
  {
    Tiny t;
    t.parts.pre_tokenizer = PreTokenizer();  // not byte-level
    EXPECT_THROW(Tokenizer::from_parts(t.parts), Error);
  }
  {
    Tiny t;
    t.parts.kinds.pop_back();
    EXPECT_THROW(Tokenizer::from_parts(t.parts), Error);
  }
  EXPECT_THROW(Tokenizer::from_hf(DB_TEST_DATA "/tokenizer/no-such-file.json"), Error);
  EXPECT_THROW(Tokenizer::from_hf(DB_TEST_DATA "/tokenizer/corpus.json"), Error);  // JSON, but not a tokenizer
}

// A small tokenizer.json: byte characters, one merge in the [a, b] form, a template
// post-processor that adds <s>, and `extra` merged into the top level.
std::string write_small_tokenizer_json(const std::string& name, const nlohmann::json& extra) {
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) vocab[byte_level::char_of_byte(static_cast<uint8_t>(b))] = b;
  vocab["ab"] = 256;
  nlohmann::json j = {
      {"added_tokens", {{{"id", 257}, {"content", "<s>"}, {"special", true}, {"normalized", false}}}},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
      {"post_processor",
       {{"type", "TemplateProcessing"},
        {"single", {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}}}},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", nlohmann::json::array({nlohmann::json::array({"a", "b"})})}}}};
  j.update(extra);
  const std::string path = test::scratch_dir() + "/" + name;
  std::ofstream(path) << j.dump();
  return path;
}

TEST(TokenizerUnit, HuggingFaceFileVariants) {
  const auto tok = Tokenizer::from_hf(write_small_tokenizer_json("small.json", nlohmann::json::object()));
  EXPECT_EQ(tok->vocab_size(), 258u);
  EXPECT_TRUE(tok->add_bos());  // from the template post-processor
  EXPECT_EQ(tok->encode("ab<s>", true), (Ids{257, 256, 257}));

  const std::string config = test::scratch_dir() + "/config.json";
  std::ofstream(config) << R"({"bos_token": {"content": "<nope>"}, "add_bos_token": true})";
  EXPECT_THROW(Tokenizer::from_hf(write_small_tokenizer_json("small2.json", nlohmann::json::object()), config), Error);
  std::ofstream(config) << R"({"add_bos_token": false, "eos_token": "<s>"})";
  const auto no_bos = Tokenizer::from_hf(write_small_tokenizer_json("small3.json", nlohmann::json::object()), config);
  EXPECT_FALSE(no_bos->add_bos());
  EXPECT_EQ(no_bos->eos_id(), 257);

  EXPECT_THROW(Tokenizer::from_hf(write_small_tokenizer_json("bad_norm.json", {{"normalizer", {{"type", "Lowercase"}}}})),
               Error);
  EXPECT_THROW(Tokenizer::from_hf(write_small_tokenizer_json("bad_pre.json", {{"pre_tokenizer", {{"type", "Whitespace"}}}})),
               Error);
  EXPECT_THROW(Tokenizer::from_hf(write_small_tokenizer_json("bad_model.json", {{"model", {{"type", "Unigram"}}}})),
               Error);
  nlohmann::json object_merges = {{"type", "BPE"}, {"vocab", {{"a", 0}}}, {"merges", {{"a", "b"}}}};  // an object
  EXPECT_THROW(Tokenizer::from_hf(write_small_tokenizer_json("bad_merges.json", {{"model", object_merges}})), Error);
}

}  // namespace
}  // namespace db
