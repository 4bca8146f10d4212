// A compiled PCRE2 pattern (UTF + Unicode properties, JIT when available) that
// behaves like the Oniguruma patterns of Hugging Face tokenizer files: `\s` and
// `\S` are rewritten to the Unicode White_Space set that Oniguruma uses.
// Immutable after construction, so one Regex may be used from many threads.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace db {

// Byte offsets [first, second) of one match within the subject.
using MatchSpan = std::pair<size_t, size_t>;

class Regex {
 public:
  // `literal`: match `pattern` as plain text. Throws db::Error naming the pattern,
  // the offset and PCRE2's message when the pattern does not compile.
  explicit Regex(const std::string& pattern, bool literal = false);
  ~Regex();
  Regex(Regex&&) noexcept;
  Regex& operator=(Regex&&) noexcept;

  // Appends every non-overlapping match of the pattern in `subject`, left to right
  // (empty matches included, as split points). `subject` must be valid UTF-8.
  // A match that exhausts PCRE2's resources ends the search (the rest stays unmatched).
  void find_all(std::string_view subject, std::vector<MatchSpan>& out) const;

  const std::string& pattern() const { return pattern_; }

 private:
  struct Impl;
  std::string pattern_;
  std::unique_ptr<Impl> impl_;
};

// The pattern with `\s` / `\S` replaced by explicit White_Space classes (exposed for tests).
std::string rewrite_whitespace_escapes(const std::string& pattern);

}  // namespace db
