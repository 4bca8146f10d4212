// Shared helpers of the tokenizer tests: the corpus and fixtures in
// tests/data/tokenizer, the tokenizer files they need, and GGUF/JSON files
// rebuilt from a vocabulary so that every loading path can be compared.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace db::test {

// The corpus strings (tests/data/tokenizer/corpus.json).
std::vector<std::string> load_corpus();
// The generated random corpus (tests/data/tokenizer/corpus_random.json).
std::vector<std::string> load_random_corpus();
// tests/data/tokenizer/expected_<name>.json.
nlohmann::json load_fixture(const std::string& name);
std::vector<std::vector<int32_t>> fixture_ids(const nlohmann::json& fixture, const char* key);

// The SmolLM2 GGUF (models/...); fails the test (ADD_FAILURE) and returns "" when missing.
std::string smollm2_gguf_path();
// Directory holding DeepSeek-V3's tokenizer.json and tokenizer_config.json: the
// environment variable DB_DEEPSEEK_TOKENIZER_DIR, else tests/data/tokenizer/deepseek-v3.
// Fails the test and returns "" when tokenizer.json is missing.
std::string deepseek_tokenizer_dir();

// A byte-level BPE vocabulary in the form GGUF stores it.
struct GGUFVocab {
  std::vector<std::string> tokens;
  std::vector<int32_t> types;  // GGUF token types (1 normal, 3 control, 4 user-defined, 5 unused)
  std::vector<std::string> merges;  // "left right"
  int32_t bos = -1, eos = -1;
  bool add_bos = false;
};
// The vocabulary of a tokenizer.json (special added tokens -> control, others -> user-defined).
GGUFVocab vocab_from_tokenizer_json(const std::string& path);
// The vocabulary of a GGUF file.
GGUFVocab vocab_from_gguf(const std::string& path);
// Writes a metadata-only GGUF with `vocab` and tokenizer.ggml.pre = `pre`; returns its path.
std::string write_tokenizer_gguf(const GGUFVocab& vocab, const std::string& pre, const std::string& file_name);
// Writes a tokenizer.json with `vocab` (control tokens as special added tokens) and the
// given pre_tokenizer; returns its path.
std::string write_tokenizer_json(const GGUFVocab& vocab, const nlohmann::json& pre_tokenizer, bool ignore_merges,
                                 const std::string& file_name);

// A fresh scratch directory for files a test writes.
std::string scratch_dir();

}  // namespace db::test
