// Ids identical to the Hugging Face tokenizers library (fixtures made by
// scripts/gen_tokenizer_fixtures.py) for every corpus string, through every
// loading path: the real SmolLM2 GGUF, tokenizer.json files, and GGUF files
// rebuilt from a vocabulary with each supported "tokenizer.ggml.pre" name.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>

#include "io/gguf.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer_test_util.h"

namespace db {
namespace {

using nlohmann::json;

std::string show(const std::vector<int32_t>& ids) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? "," : "") + std::to_string(ids[i]);
  return s + "]";
}

// Compares every corpus string; reports each mismatch and the agreement count.
void expect_fixture(const Tokenizer& tok, const std::string& fixture_name, const std::string& path_label) {
  const auto texts = test::load_corpus();
  const auto random_texts = test::load_random_corpus();
  const json fx = test::load_fixture(fixture_name);
  for (const char* key : {"ids", "ids_specials_as_text", "random_ids"}) {
    const bool parse_special = std::string(key) != "ids_specials_as_text";
    const auto& corpus = std::string(key) == "random_ids" ? random_texts : texts;
    const auto expected = test::fixture_ids(fx, key);
    ASSERT_EQ(expected.size(), corpus.size()) << fixture_name << " is stale: regenerate the fixtures";
    size_t agree = 0;
    for (size_t i = 0; i < corpus.size(); ++i) {
      const auto got = tok.encode(corpus[i], /*add_special=*/false, parse_special);
      if (got == expected[i]) {
        ++agree;
        continue;
      }
      ADD_FAILURE() << fixture_name << " via " << path_label << " (" << key << "), corpus[" << i << "] = \""
                    << corpus[i] << "\"\n  expected " << show(expected[i]) << "\n  got      " << show(got);
    }
    EXPECT_EQ(agree, corpus.size()) << fixture_name << " via " << path_label << " (" << key << "): " << agree << "/"
                                    << corpus.size() << " strings agree";
  }
}

const test::GGUFVocab& deepseek_vocab() {
  static const test::GGUFVocab v = [] {
    const std::string dir = test::deepseek_tokenizer_dir();
    auto vocab = dir.empty() ? test::GGUFVocab{} : test::vocab_from_tokenizer_json(dir + "/tokenizer.json");
    vocab.bos = 0;
    vocab.eos = 1;
    vocab.add_bos = true;
    return vocab;
  }();
  return v;
}

std::unique_ptr<Tokenizer> load_gguf(const std::string& path) {
  auto f = GGUFFile::open(path);
  return Tokenizer::from_gguf(*f);
}

TEST(TokenizerConformance, SmolLM2FromItsGGUF) {
  const std::string path = test::smollm2_gguf_path();
  if (path.empty()) return;
  expect_fixture(*load_gguf(path), "smollm2", "SmolLM2 GGUF (pre smollm)");
}

TEST(TokenizerConformance, SmolLM2FromTokenizerJson) {
  const std::string path = test::smollm2_gguf_path();
  if (path.empty()) return;
  const json fx = test::load_fixture("smollm2");
  const auto json_path = test::write_tokenizer_json(test::vocab_from_gguf(path), fx.at("pre_tokenizer"),
                                                    fx.at("ignore_merges"), "smollm2_tokenizer.json");
  expect_fixture(*Tokenizer::from_hf(json_path), "smollm2", "tokenizer.json");
}

TEST(TokenizerConformance, SmolLM2VocabWithGpt2Preset) {
  const std::string path = test::smollm2_gguf_path();
  if (path.empty()) return;
  const auto gguf = test::write_tokenizer_gguf(test::vocab_from_gguf(path), "gpt-2", "smollm2_gpt2.gguf");
  expect_fixture(*load_gguf(gguf), "smollm2_gpt2", "GGUF (pre gpt-2)");
}

TEST(TokenizerConformance, DeepSeekV3FromItsTokenizerJson) {
  const std::string dir = test::deepseek_tokenizer_dir();
  if (dir.empty()) return;
  expect_fixture(*Tokenizer::from_hf_dir(dir), "deepseek_v3", "tokenizer.json");
}

// Each fixture made with a DeepSeek-V3-vocabulary tokenizer, through a GGUF file naming
// the preset and through a tokenizer.json holding the fixture's pre_tokenizer.
TEST(TokenizerConformance, DeepSeekVocabPresetsFromGGUFAndJson) {
  if (test::deepseek_tokenizer_dir().empty()) return;
  for (const std::string name : {"deepseek_v3", "deepseek_v3_qwen2", "deepseek_v3_llama3"}) {
    const json fx = test::load_fixture(name);
    for (const auto& pre : fx.at("gguf_pre")) {
      const auto gguf = test::write_tokenizer_gguf(deepseek_vocab(), pre, name + "_" + pre.get<std::string>() + ".gguf");
      expect_fixture(*load_gguf(gguf), name, "GGUF (pre " + pre.get<std::string>() + ")");
    }
    const auto json_path =
        test::write_tokenizer_json(deepseek_vocab(), fx.at("pre_tokenizer"), fx.at("ignore_merges"), name + ".json");
    expect_fixture(*Tokenizer::from_hf(json_path), name, "tokenizer.json with the fixture's pre_tokenizer");
  }
}

TEST(TokenizerConformance, RoundTripsTheCorpus) {
  std::vector<std::unique_ptr<Tokenizer>> toks;
  if (const auto p = test::smollm2_gguf_path(); !p.empty()) toks.push_back(load_gguf(p));
  if (const auto d = test::deepseek_tokenizer_dir(); !d.empty()) toks.push_back(Tokenizer::from_hf_dir(d));
  for (const auto& tok : toks)
    for (const auto& text : test::load_corpus()) {
      EXPECT_EQ(tok->decode(tok->encode(text, false, true)), text) << tok->source();
      EXPECT_EQ(tok->decode(tok->encode(text, false, false)), text) << tok->source();
    }
  for (const auto& tok : toks)
    for (const auto& text : test::load_random_corpus()) EXPECT_EQ(tok->decode(tok->encode(text, false)), text);
}

TEST(TokenizerConformance, SmolLM2SpecialTokensAndMetadata) {
  const std::string path = test::smollm2_gguf_path();
  if (path.empty()) return;
  const auto tok = load_gguf(path);
  EXPECT_EQ(tok->vocab_size(), 49152u);
  EXPECT_EQ(tok->bos_id(), 1);
  EXPECT_EQ(tok->eos_id(), 2);
  EXPECT_FALSE(tok->add_bos());
  EXPECT_EQ(tok->eos_ids(), (std::vector<int32_t>{0, 2}));  // <|endoftext|>, <|im_end|>
  EXPECT_TRUE(tok->is_special(1));
  EXPECT_FALSE(tok->is_special(100));
  EXPECT_EQ(tok->token_id("<|im_start|>"), 1);
  EXPECT_EQ(tok->encode("<|im_start|>", true), (std::vector<int32_t>{1}));
  EXPECT_GT(tok->encode("<|im_start|>", true, /*parse_special=*/false).size(), 1u);
  const auto ids = tok->encode("<|im_start|>user\nHi<|im_end|>", false);
  EXPECT_EQ(tok->decode(ids, /*skip_special=*/true), "user\nHi");
  EXPECT_EQ(tok->token_to_piece(tok->token_id("\xC4\xA0the")), " the");  // stored "Ġthe"
}

TEST(TokenizerConformance, DeepSeekV3SpecialTokensAndBos) {
  const std::string dir = test::deepseek_tokenizer_dir();
  if (dir.empty()) return;
  const auto tok = Tokenizer::from_hf_dir(dir);
  EXPECT_EQ(tok->vocab_size(), 128815u);
  EXPECT_EQ(tok->bos_id(), 0);
  EXPECT_EQ(tok->eos_id(), 1);
  EXPECT_TRUE(tok->add_bos());  // tokenizer_config.json: add_bos_token
  EXPECT_EQ(tok->eos_ids(), (std::vector<int32_t>{1}));
  const auto plain = tok->encode("Hello", false);
  auto with_bos = plain;
  with_bos.insert(with_bos.begin(), 0);
  EXPECT_EQ(tok->encode("Hello", true), with_bos);
  // <｜User｜> is an added token that is not special: parsed even when specials are text.
  const int32_t user = tok->token_id("<｜User｜>");
  ASSERT_GE(user, 0);
  EXPECT_FALSE(tok->is_special(user));
  EXPECT_EQ(tok->encode("<｜User｜>", false, false), (std::vector<int32_t>{user}));
  EXPECT_EQ(tok->encode("<｜begin▁of▁sentence｜>", false, true), (std::vector<int32_t>{0}));
  EXPECT_GT(tok->encode("<｜begin▁of▁sentence｜>", false, false).size(), 1u);
}

// One tokenizer used from several threads gives every thread the single-threaded ids.
TEST(TokenizerConformance, ConcurrentEncodingIsConsistent) {
  const std::string path = test::smollm2_gguf_path();
  if (path.empty()) return;
  const auto tok = load_gguf(path);
  const auto corpus = test::load_random_corpus();
  std::vector<std::vector<int32_t>> expected;
  for (const auto& text : corpus) expected.push_back(tok->encode(text, false));
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round)
        for (size_t i = 0; i < corpus.size(); ++i) {
          const size_t k = (i + static_cast<size_t>(t) * 37) % corpus.size();
          if (tok->encode(corpus[k], false) != expected[k]) ++mismatches;
        }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace db
