// Added tokens (special and user-defined) are found in the text before
// pre-tokenization: leftmost match first, the longest token at that position,
// as Hugging Face tokenizers do. Tokens that tokenizer.json marks "normalized"
// are searched in a second pass over the text the first pass left.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace db {

struct AddedToken {
  int32_t id = -1;
  std::string content;       // the exact text that stands for the token
  bool special = false;      // control token: matched only when parsing specials; skippable on decode
  bool lstrip = false;       // also swallows white space before the match
  bool rstrip = false;       // also swallows white space after the match
  bool single_word = false;  // matches only when not inside a word
  bool normalized = false;   // searched in the second pass
};

// One stretch of the input: an added token (id >= 0) or plain text (id == -1).
struct TextSegment {
  size_t begin = 0, end = 0;  // byte offsets [begin, end) in the input
  int32_t id = -1;
};

class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  explicit AddedTokenMatcher(const std::vector<AddedToken>& tokens);

  // Cuts `text` into plain-text stretches and added tokens, in order. With
  // parse_special == false, special tokens are not searched (their text stays text).
  // Stops once more than `max_tokens` added tokens are found and returns false then
  // (`out` holds a part of the segments); returns true when `out` holds them all.
  bool split(std::string_view text, bool parse_special, std::vector<TextSegment>& out,
             size_t max_tokens = SIZE_MAX) const;

  bool empty() const { return tokens_.empty(); }

 private:
  struct Node {
    std::vector<std::pair<uint8_t, int32_t>> children;  // sorted by byte
    int32_t token = -1;                                  // index into tokens_ ending here
  };
  struct Trie {
    std::vector<Node> nodes{Node{}};
    bool first_byte[256] = {};
    void insert(const std::string& s, int32_t token_index);
  };
  // Longest allowed token starting at `pos`; returns its index or -1 and its end.
  int32_t longest_at(const Trie& trie, std::string_view text, size_t pos, bool parse_special, size_t& end) const;
  // One pass over [begin, end); `budget`: added tokens it may still find (false: it found more).
  bool split_pass(const Trie& trie, std::string_view text, size_t begin, size_t end, bool parse_special,
                  std::vector<TextSegment>& out, size_t& budget) const;

  std::vector<AddedToken> tokens_;
  Trie raw_;         // tokens with normalized == false
  Trie normalized_;  // tokens with normalized == true
};

}  // namespace db
