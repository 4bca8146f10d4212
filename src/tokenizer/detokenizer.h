// Streaming detokenization: token ids go in one at a time, and only text that is
// complete, well-formed UTF-8 comes out. Bytes that may still become a character
// (an incomplete sequence at the end) are held back until the next token or flush().
// The concatenation of everything returned equals Tokenizer::decode of all ids.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace db {

class Tokenizer;

class IncrementalDetokenizer {
 public:
  // `tokenizer` must outlive this object. `skip_special`: special tokens produce no text.
  explicit IncrementalDetokenizer(const Tokenizer& tokenizer, bool skip_special = false);

  // Adds one token; returns the newly completed text (possibly empty). Ill-formed
  // bytes that no later byte can complete come out as U+FFFD.
  std::string feed(int32_t id);
  // Adds several tokens; same contract as feeding them one by one and concatenating.
  std::string feed(const std::vector<int32_t>& ids);
  // Ends the stream: returns the held-back bytes, an incomplete character as U+FFFD.
  std::string flush();

  size_t held_bytes() const { return pending_.size(); }

 private:
  std::string take_complete();

  const Tokenizer* tokenizer_;
  bool skip_special_;
  std::string pending_;  // bytes not yet returned (only ever an incomplete tail between calls)
};

}  // namespace db
