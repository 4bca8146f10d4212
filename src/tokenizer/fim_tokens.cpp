#include "tokenizer/fim_tokens.h"

#include "tokenizer/tokenizer.h"

namespace db {

std::optional<FimTokens> find_fim_tokens(const Tokenizer& tok) {
  static const FimTokens kKnown[] = {
      {"<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"},
      {"<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"},
      {"<fim_prefix>", "<fim_suffix>", "<fim_middle>"},
  };
  for (const FimTokens& f : kKnown)
    if (tok.token_id(f.prefix) >= 0 && tok.token_id(f.suffix) >= 0 && tok.token_id(f.middle) >= 0) return f;
  return std::nullopt;
}

}  // namespace db
