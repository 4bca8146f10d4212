// Fill-in-the-middle: the three tokens a code model reads a prefix, a suffix and
// the start of the middle by, in prefix-suffix-middle order:
//   <pre> prefix <suf> suffix <mid>   -> the model writes the middle.
// Known spellings: DeepSeek's <｜fim▁begin｜> <｜fim▁hole｜> <｜fim▁end｜>,
// Qwen2.5-Coder's <|fim_prefix|> <|fim_suffix|> <|fim_middle|>, StarCoder's
// <fim_prefix> <fim_suffix> <fim_middle>.
#pragma once
#include <optional>
#include <string>

namespace db {

class Tokenizer;

struct FimTokens {
  std::string prefix, suffix, middle;  // the tokens' texts

  // The prompt that asks for the text between `before` and `after`.
  std::string prompt(const std::string& before, const std::string& after) const {
    return prefix + before + suffix + after + middle;
  }
};

// The first known spelling whose three tokens the vocabulary holds; none otherwise.
std::optional<FimTokens> find_fim_tokens(const Tokenizer& tok);

}  // namespace db
