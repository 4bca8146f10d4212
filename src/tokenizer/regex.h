// A compiled PCRE2 pattern (UTF + Unicode properties, JIT when available) that
// behaves like the Oniguruma patterns of Hugging Face tokenizer files: `\s` and
// `\S` are rewritten to the Unicode White_Space set that Oniguruma uses.
// Immutable after construction, so one Regex may be used from many threads.
#pragma once
#include <cstddef>
#include <cstdint>
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

  // Where a search through one subject stands; starts at the subject's beginning.
  struct Cursor {
    size_t pos = 0;      // where the next search starts
    uint32_t extra = 0;  // options for it (after an empty match: no empty match there again)
    bool done = false;   // no match is left
  };
  // The next match of the search `cursor` stands in: the matches find_all appends, one
  // per call, in order. Returns false when none is left.
  bool next_match(std::string_view subject, Cursor& cursor, MatchSpan& out) const;

  const std::string& pattern() const { return pattern_; }

 private:
  struct Impl;
  std::string pattern_;
  std::unique_ptr<Impl> impl_;
};

// The pattern with `\s` / `\S` replaced by explicit White_Space classes (exposed for tests).
std::string rewrite_whitespace_escapes(const std::string& pattern);

}  // namespace db
