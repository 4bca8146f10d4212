// Turns a GrammarSpec into a TokenConstraint for one model's vocabulary, with
// XGrammar as the engine. The vocabulary (each token's bytes; special tokens
// excluded, the end-of-generation ids as the grammar's stop tokens) is handed
// to XGrammar once, at construction. Compiled constraints are cached by spec
// (least recently used first out), so a batch of requests sharing one schema
// compiles it once. Thread-safe.
#pragma once
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "grammar/grammar_spec.h"
#include "sample/token_constraint.h"

namespace db {

class Tokenizer;

struct ConstraintCompilerStats {
  int64_t compiled = 0, cache_hits = 0, errors = 0;
  double compile_seconds = 0;  // summed over compilations
};

class ConstraintCompiler {
 public:
  // `vocab`: the model's logits width (>= the tokenizer's vocabulary).
  ConstraintCompiler(const Tokenizer& tokenizer, int32_t vocab, size_t cache_entries = 256);
  ~ConstraintCompiler();

  // Throws db::Error with XGrammar's reason when the spec is invalid or cannot be honoured.
  std::shared_ptr<const TokenConstraint> compile(const GrammarSpec& spec);
  ConstraintCompilerStats stats() const;
  int32_t vocab() const { return vocab_; }

 private:
  struct Engine;
  std::unique_ptr<Engine> engine_;
  int32_t vocab_;
  size_t cache_entries_;
  mutable std::mutex mu_;
  std::list<std::string> lru_;  // most recent first
  struct Entry {
    std::shared_ptr<const TokenConstraint> constraint;
    std::list<std::string>::iterator position;
  };
  std::unordered_map<std::string, Entry> cache_;
  ConstraintCompilerStats stats_;
};

// An EBNF grammar whose root matches exactly one of `choices` (each a literal).
std::string choice_grammar(const std::vector<std::string>& choices);

}  // namespace db
