// How the engine speculates (off by default).
#pragma once
#include <cstdint>
#include <string>

namespace db {

struct SpeculativeConfig {
  // "" (off), "ngram" (prompt lookup), "draft_model" or "mtp" (the model's own
  // multi-token-prediction layer, DeepSeek-V3's nextn tensors)
  std::string method;
  std::string model;            // draft_model: the draft's GGUF file or checkpoint directory
  int32_t num_tokens = 5;       // draft tokens per sequence and step at most (K)
  int32_t ngram_min = 2;        // prompt lookup: shortest n-gram matched
  int32_t ngram_max = 4;        // ... and longest (tried first)
  // Drafts only while they pay (draft_governor.h); false: every decode drafts
  // num_tokens whenever the proposer has them (for tests and measurements).
  bool adaptive = true;

  bool enabled() const { return !method.empty(); }
  // Throws db::Error for an unknown method or bad sizes.
  void validate() const;
};

}  // namespace db
