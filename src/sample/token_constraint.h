// A constraint on which tokens a sequence may sample next (a compiled grammar,
// a JSON schema, a regular expression), seen by the sampler as a bitmask over
// the vocabulary. The constraint itself is immutable and shared by every
// request that uses it; each sequence walks it with its own TokenConstraintState.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace db {

// Words of a bitmask over `vocab` tokens: bit (id % 32) of word (id / 32) set = allowed.
inline constexpr int32_t token_mask_words(int32_t vocab) { return (vocab + 31) / 32; }
inline bool token_allowed(std::span<const uint32_t> mask, int32_t id) {
  return (mask[static_cast<size_t>(id) / 32] >> (static_cast<uint32_t>(id) % 32)) & 1u;
}

// One sequence's position in a constraint. Not thread-safe; one per sequence.
class TokenConstraintState {
 public:
  virtual ~TokenConstraintState() = default;
  // Writes the tokens allowed next into `mask` (token_mask_words(vocab) words).
  virtual void fill_mask(std::span<uint32_t> mask) = 0;
  // Advances past `token`; false (state unchanged) when the constraint forbids it.
  virtual bool accept(int32_t token) = 0;
  // True once the constraint is complete and its stop token was accepted:
  // nothing more may follow.
  virtual bool terminated() const = 0;
};

class TokenConstraint {
 public:
  virtual ~TokenConstraint() = default;
  // A state at the constraint's start.
  virtual std::unique_ptr<TokenConstraintState> start() const = 0;
  // What it is, for logs and errors (e.g. "json_schema").
  virtual std::string describe() const = 0;
};

}  // namespace db
