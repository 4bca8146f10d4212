// Tokenizer::from_gguf: the "tokenizer.ggml.*" metadata of a GGUF file.
#include <cstdint>

#include "io/gguf.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace db {

namespace {

// GGUF token types (llama.cpp's llama_token_type).
enum GGUFTokenType : int64_t { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };

TokenKind kind_of(int64_t type, const std::string& where) {
  switch (type) {
    case kNormal:
    case kByte:
      return TokenKind::Normal;
    case kUnknown:
    case kControl:
      return TokenKind::Special;
    case kUserDefined:
      return TokenKind::Added;
    case kUnused:
      return TokenKind::Unused;
    default:
      throw Error(where + ": unknown token type " + std::to_string(type) + " (expected 1..6)");
  }
}

int32_t optional_id(const GGUFFile& f, const std::string& key) {
  const auto v = f.opt_int(key);
  if (!v) return -1;
  if (*v < -1 || *v > INT32_MAX) throw Error(f.path() + ": " + key + ": id " + std::to_string(*v) + " is invalid");
  return static_cast<int32_t>(*v);
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::from_gguf(const GGUFFile& f) {
  const std::string model = f.get_string("tokenizer.ggml.model");
  if (model != "gpt2")
    throw Error(f.path() + ": tokenizer.ggml.model is \"" + model +
                "\"; only \"gpt2\" (byte-level BPE) is supported");
  TokenizerParts p;
  p.source = f.path();
  p.tokens = f.get_string_array("tokenizer.ggml.tokens");
  const size_t n = p.tokens.size();
  if (f.has("tokenizer.ggml.token_type")) {
    const auto types = f.get_int_array("tokenizer.ggml.token_type");
    if (types.size() != n)
      throw Error(f.path() + ": tokenizer.ggml.token_type has " + std::to_string(types.size()) +
                  " entries, expected one per token (" + std::to_string(n) + ")");
    p.kinds.reserve(n);
    for (size_t i = 0; i < n; ++i)
      p.kinds.push_back(kind_of(types[i], f.path() + ": tokenizer.ggml.token_type[" + std::to_string(i) + "]"));
  } else {
    p.kinds.assign(n, TokenKind::Normal);
  }
  for (size_t i = 0; i < n; ++i) {
    if ((p.kinds[i] == TokenKind::Special || p.kinds[i] == TokenKind::Added) && !p.tokens[i].empty()) {
      AddedToken a;
      a.id = static_cast<int32_t>(i);
      a.content = p.tokens[i];
      a.special = p.kinds[i] == TokenKind::Special;
      p.added.push_back(std::move(a));
    }
  }
  const auto merges = f.get_string_array("tokenizer.ggml.merges");
  p.merges.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const size_t space = merges[i].size() > 1 ? merges[i].find(' ', 1) : std::string::npos;
    if (space == std::string::npos)
      throw Error(f.path() + ": tokenizer.ggml.merges[" + std::to_string(i) + "] = \"" + merges[i] +
                  "\" is not two tokens separated by a space");
    p.merges.emplace_back(merges[i].substr(0, space), merges[i].substr(space + 1));
  }
  const std::string pre = f.opt_string("tokenizer.ggml.pre").value_or("default");
  p.pre_tokenizer = PreTokenizer::from_gguf_name(pre);
  p.ignore_merges = PreTokenizer::gguf_name_ignores_merges(pre);
  p.bos_id = optional_id(f, "tokenizer.ggml.bos_token_id");
  p.eos_id = optional_id(f, "tokenizer.ggml.eos_token_id");
  p.unk_id = optional_id(f, "tokenizer.ggml.unknown_token_id");
  p.pad_id = optional_id(f, "tokenizer.ggml.padding_token_id");
  for (const char* key : {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"}) {
    const int32_t id = optional_id(f, key);
    if (id >= 0) p.end_of_generation.push_back(id);
  }
  // Llama-3 style files add BOS unless they say otherwise; the rest only when told to.
  p.add_bos = f.opt_bool("tokenizer.ggml.add_bos_token").value_or(p.ignore_merges && p.bos_id >= 0);
  p.add_eos = f.opt_bool("tokenizer.ggml.add_eos_token").value_or(false);
  return from_parts(std::move(p));
}

}  // namespace db
