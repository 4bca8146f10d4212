// Reads a Hugging Face tokenizer.json with its two bulky members, model.vocab and
// model.merges, streamed into flat vectors instead of a JSON tree (several times
// faster for 100k+ entry vocabularies).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace db {

struct TokenizerJsonFile {
  nlohmann::json rest;                                      // the file without model.vocab / model.merges
  std::vector<std::pair<std::string, int64_t>> vocab;       // model.vocab entries in file order
  std::vector<std::pair<std::string, std::string>> merges;  // model.merges in rank order
};

// Throws db::Error naming `path` when it cannot be read or a vocab/merges entry is malformed.
TokenizerJsonFile read_tokenizer_json(const std::string& path);

// Any JSON file as a tree; throws db::Error naming `path`.
nlohmann::json read_json_file(const std::string& path);

}  // namespace db
