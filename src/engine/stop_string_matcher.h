// Finds stop strings in streamed text. Text that could still be the start of a
// stop string is held back until the next piece shows whether it is; text
// before a match is released and the match itself (and anything after it) is
// dropped.
//
//   stops {"END"}:  push("abc E") -> "abc "   (holds "E")
//                   push("NX")    -> "ENX"    (no match: released)
//                   push("xEND!") -> "x", matched "END"
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace db {

class StopStringMatcher {
 public:
  // Empty strings in `stops` are ignored.
  explicit StopStringMatcher(std::vector<std::string> stops);

  struct Result {
    std::string text;               // text safe to release now
    std::optional<size_t> matched;  // index in `stops` of the stop string that ended the text
  };
  // Adds text. After a match, the matcher is spent: later pushes return nothing.
  Result push(std::string_view text);
  // The held-back text, released when the stream ends without a match.
  std::string flush();
  bool matched() const { return matched_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;      // tail that is a proper prefix of some stop string
  bool matched_ = false;  // a stop string was found
};

}  // namespace db
