#include "grammar/constraint_compiler.h"

#include <dlpack/dlpack.h>
#include <xgrammar/xgrammar.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <regex>

#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace db {

namespace {

// A sequence's walk through a compiled grammar.
class XGrammarState final : public TokenConstraintState {
 public:
  explicit XGrammarState(const xgrammar::CompiledGrammar& g) : matcher_(g) {}

  void fill_mask(std::span<uint32_t> mask) override {
    int64_t shape[1] = {static_cast<int64_t>(mask.size())};
    DLTensor t{};
    t.data = mask.data();
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = 1;
    t.dtype = DLDataType{kDLInt, 32, 1};
    t.shape = shape;
    if (!matcher_.FillNextTokenBitmask(&t)) std::fill(mask.begin(), mask.end(), ~0u);  // "all allowed"
  }
  bool accept(int32_t token) override { return matcher_.AcceptToken(token); }
  bool terminated() const override { return matcher_.IsTerminated(); }

 private:
  xgrammar::GrammarMatcher matcher_;
};

class XGrammarConstraint final : public TokenConstraint {
 public:
  XGrammarConstraint(xgrammar::CompiledGrammar g, std::string kind) : grammar_(std::move(g)), kind_(std::move(kind)) {}
  std::unique_ptr<TokenConstraintState> start() const override { return std::make_unique<XGrammarState>(grammar_); }
  std::string describe() const override { return kind_; }

 private:
  xgrammar::CompiledGrammar grammar_;
  std::string kind_;
};

// The bytes each id stands for; "" for special and control tokens, which XGrammar
// then never allows inside the grammar (the end-of-generation ids are its stop tokens).
std::vector<std::string> vocabulary_bytes(const Tokenizer& tok) {
  std::vector<std::string> v(tok.vocab_size());
  for (size_t id = 0; id < v.size(); ++id) {
    const auto i = static_cast<int32_t>(id);
    if (tok.kind(i) == TokenKind::Normal || tok.kind(i) == TokenKind::Added)
      v[id] = tok.token_to_piece(i);
  }
  return v;
}

// XGrammar's message without its log prefix ("[hh:mm:ss] /path/file.cc:123: "), which
// names files of its build, not anything of the request.
std::string reason_of(const std::exception& e) {
  static const std::regex kPrefix(R"(^\[[0-9:]+\] \S+:[0-9]+: )");
  std::string m = std::regex_replace(e.what(), kPrefix, "");
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  return m;
}

std::string escape_literal(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);  // UTF-8 passes through
    }
  }
  return out + "\"";
}

}  // namespace

struct ConstraintCompiler::Engine {
  xgrammar::TokenizerInfo info;
  xgrammar::GrammarCompiler compiler;
  Engine(const Tokenizer& tok, int32_t vocab)
      : info(vocabulary_bytes(tok), xgrammar::VocabType::RAW, vocab, tok.eos_ids()),
        compiler(info, /*max_threads=*/2, /*cache_enabled=*/false) {}
};

std::string choice_grammar(const std::vector<std::string>& choices) {
  if (choices.empty()) throw Error("a choice constraint needs at least one string");
  std::string g = "root ::= ";
  for (size_t i = 0; i < choices.size(); ++i) {
    if (choices[i].empty()) throw Error("a choice must not be an empty string");
    g += (i ? " | " : "") + escape_literal(choices[i]);
  }
  return g;
}

ConstraintCompiler::ConstraintCompiler(const Tokenizer& tokenizer, int32_t vocab, size_t cache_entries,
                                       int64_t cache_bytes)
    : vocab_(vocab), cache_entries_(std::max<size_t>(1, cache_entries)), cache_bytes_(cache_bytes) {
  if (vocab < static_cast<int32_t>(tokenizer.vocab_size()))
    throw Error("the model's vocabulary (" + std::to_string(vocab) + ") is smaller than its tokenizer's (" +
                std::to_string(tokenizer.vocab_size()) + ")");
  engine_ = std::make_unique<Engine>(tokenizer, vocab);
}

ConstraintCompiler::~ConstraintCompiler() = default;

std::shared_ptr<const TokenConstraint> ConstraintCompiler::compile(const GrammarSpec& spec) {
  const std::string key = spec.cache_key();
  std::lock_guard lock(mu_);  // XGrammar compiles on its own threads; one compilation at a time here
  if (auto it = cache_.find(key); it != cache_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second.position);
    ++stats_.cache_hits;
    return it->second.constraint;
  }
  const auto t0 = std::chrono::steady_clock::now();
  // Compact JSON. Strict: properties and items the schema does not name are not written.
  const auto json_schema = [&](const std::string& schema, bool strict) {
    return engine_->compiler.CompileJSONSchema(schema, /*any_whitespace=*/false, std::nullopt,
                                               std::make_pair(std::string(","), std::string(":")), strict);
  };
  std::optional<xgrammar::CompiledGrammar> g;
  try {
    switch (spec.kind) {
      case GrammarSpec::Kind::JsonObject:  // an object (OpenAI's json_object mode), with any properties
        g = json_schema(R"({"type": "object"})", /*strict=*/false);
        break;
      case GrammarSpec::Kind::JsonSchema: g = json_schema(spec.text, /*strict=*/true); break;
      case GrammarSpec::Kind::Regex: g = engine_->compiler.CompileRegex(spec.text); break;
      case GrammarSpec::Kind::Ebnf: g = engine_->compiler.CompileGrammar(spec.text, "root"); break;
      case GrammarSpec::Kind::Choice: g = engine_->compiler.CompileGrammar(choice_grammar(spec.choices), "root"); break;
    }
  } catch (const Error&) {
    ++stats_.errors;
    throw;
  } catch (const std::exception& e) {
    ++stats_.errors;
    throw Error(std::string("invalid ") + spec.kind_name() + ": " + reason_of(e));
  }
  stats_.compile_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ++stats_.compiled;
  const auto bytes = static_cast<int64_t>(g->MemorySizeBytes());
  auto constraint = std::make_shared<XGrammarConstraint>(std::move(*g), spec.kind_name());
  lru_.push_front(key);
  cache_.emplace(key, Entry{constraint, bytes, lru_.begin()});
  stats_.cache_bytes += bytes;
  while (cache_.size() > 1 && (cache_.size() > cache_entries_ || stats_.cache_bytes > cache_bytes_)) {
    const auto oldest = cache_.find(lru_.back());
    stats_.cache_bytes -= oldest->second.bytes;
    cache_.erase(oldest);
    lru_.pop_back();
  }
  return constraint;
}

ConstraintCompilerStats ConstraintCompiler::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace db
