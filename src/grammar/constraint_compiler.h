// Turns a GrammarSpec into a TokenConstraint for one model's vocabulary, with
// XGrammar as the engine. The vocabulary (each token's bytes; special tokens
// excluded, the end-of-generation ids as the grammar's stop tokens) is handed
// to XGrammar once, at construction. Compiled constraints are cached by spec
// (least recently used first out), so a batch of requests sharing one schema
// compiles it once. The cache holds at most `cache_entries` constraints and
// `cache_bytes` of compiled grammar (XGrammar's own accounting; the newest entry
// always stays), so clients sending ever new schemas cannot grow it without bound;
// an evicted constraint lives on while requests use it. Thread-safe.
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
  int64_t cache_bytes = 0;     // compiled grammars the cache holds now
  double compile_seconds = 0;  // summed over compilations
};

class ConstraintCompiler {
 public:
  // `vocab`: the model's logits width (>= the tokenizer's vocabulary).
  ConstraintCompiler(const Tokenizer& tokenizer, int32_t vocab, size_t cache_entries = 256,
                     int64_t cache_bytes = int64_t{256} << 20);
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
  int64_t cache_bytes_;
  mutable std::mutex mu_;
  std::list<std::string> lru_;  // most recent first
  struct Entry {
    std::shared_ptr<const TokenConstraint> constraint;
    int64_t bytes = 0;
    std::list<std::string>::iterator position;
  };
  std::unordered_map<std::string, Entry> cache_;
  ConstraintCompilerStats stats_;
};

// An EBNF grammar whose root matches exactly one of `choices` (each a literal).
std::string choice_grammar(const std::vector<std::string>& choices);

}  // namespace db
