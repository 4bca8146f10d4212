// UTF-8 helpers shared by the tokenizer: strict decoding, splitting text into
// valid runs and stray bytes, lossy repair, and the Unicode White_Space set.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace db::utf8 {

// Length of the well-formed UTF-8 sequence starting at `pos` (1..4), or 0 when the
// bytes there are not a complete well-formed sequence (Unicode Table 3-7).
size_t valid_sequence_length(std::string_view s, size_t pos);

// Decodes the well-formed sequence at `pos`; returns its length (0 when ill-formed).
size_t decode(std::string_view s, size_t pos, uint32_t& codepoint);

// Appends the UTF-8 encoding of `cp` (which must be a Unicode scalar value).
void append(std::string& out, uint32_t cp);

// End of the longest prefix of `s` that is well-formed UTF-8.
size_t valid_prefix_length(std::string_view s);

// Length of the longest suffix of `s` that is a proper prefix of some well-formed
// sequence (a character cut short, 0..3 bytes); more bytes could still complete it.
size_t incomplete_tail_length(std::string_view s);

// `s` with each maximal ill-formed subpart replaced by U+FFFD (Unicode "best
// practice", the same replacement as Rust's from_utf8_lossy and Python's "replace").
std::string repair(std::string_view s);

// Whether `s` is entirely well-formed UTF-8.
bool is_valid(std::string_view s);

// Unicode White_Space property (what Rust's char::is_whitespace and Oniguruma's \s match).
bool is_white_space(uint32_t cp);

// Walks `text` as maximal runs of valid UTF-8 and the stray bytes between them, in order:
// valid(run) for each non-empty run, stray(one-byte view) for each invalid byte. Either
// callback may return false to stop; returns false when one did.
template <class OnValid, class OnStray>
bool for_each_run(std::string_view text, OnValid&& valid, OnStray&& stray) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t run_end = pos;
    while (run_end < text.size()) {
      const size_t n = valid_sequence_length(text, run_end);
      if (n == 0) break;
      run_end += n;
    }
    if (run_end > pos && !valid(text.substr(pos, run_end - pos))) return false;
    if (run_end < text.size() && !stray(text.substr(run_end, 1))) return false;
    pos = run_end + 1;
  }
  return true;
}

}  // namespace db::utf8
