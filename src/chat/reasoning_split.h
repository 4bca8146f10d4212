// Reasoning models (DeepSeek-R1 and its distills) think first: "<think> ...
// </think> answer". As DeepSeek's own API and vLLM's deepseek_r1 parser do, the
// text before "</think>" is the reasoning (a leading "<think>" dropped) and the
// rest is the answer; with no "</think>" yet, everything is reasoning (R1's
// template opens the thinking in the prompt).
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace db::chat {

inline constexpr std::string_view kThinkOpen = "<think>";
inline constexpr std::string_view kThinkClose = "</think>";

struct ReasoningParts {
  std::string reasoning;
  std::optional<std::string> content;  // none until "</think>" was written
};

ReasoningParts split_reasoning(std::string_view text);

// True when a chat template shows the model thinks (it handles "</think>").
bool template_thinks(std::string_view template_source);

// The same split over streamed text: each push returns what can be told apart so
// far; a piece that may be the start of a tag is held back until it is decided.
// Concatenating every delta's parts (flush included) gives split_reasoning's.
class ReasoningStreamSplitter {
 public:
  struct Delta {
    std::string reasoning, content;
  };
  Delta push(std::string_view text);
  Delta flush();  // the end of the output: what was held back

 private:
  std::string pending_;
  bool at_start_ = true;     // nothing emitted yet: a leading "<think>" is dropped
  bool in_content_ = false;  // "</think>" seen
};

}  // namespace db::chat
