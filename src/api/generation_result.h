// Collects the engine's streamed outputs of one API request (one or more engine
// requests, n samples each) into its choices. Not thread-safe: the caller
// serializes add() calls (outputs of one engine request arrive in order).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/prepare.h"
#include "engine/engine_types.h"

namespace db::api {

struct ChoiceOutput {
  std::string text;                  // echo text (if any) + generated text
  size_t echo_bytes = 0;             // length of the echo text at the start of `text`
  std::vector<int32_t> token_ids;    // generated tokens
  std::vector<float> logprobs;       // per generated token (when requested)
  std::vector<std::vector<std::pair<int32_t, float>>> top_logprobs;  // per generated token (when requested)
  // The prompt scored (SamplingParams::prompt_logprobs; the first token has no logprob),
  // the same for every choice of a prompt.
  std::vector<int32_t> prompt_token_ids;
  std::vector<std::optional<float>> prompt_logprobs;
  std::vector<std::vector<std::pair<int32_t, float>>> prompt_top_logprobs;
  FinishReason finish = FinishReason::None;  // None until the sample finished
  std::string stop_reason;           // the stop string or token that ended it, if any
};

class GenerationResult {
 public:
  // Shapes the result after `prepared`: parts[i].n choices per part, in part order.
  explicit GenerationResult(const PreparedRequest& prepared);

  // Adds one engine output of part `part`. Returns true when every part has had its final output.
  bool add(size_t part, const SampleOutput& out, const RequestStats& stats, bool final);
  // Marks part `part` as finished without further outputs (e.g. it was never submitted).
  void close_part(size_t part);

  bool done() const { return open_parts_ == 0; }
  const std::vector<ChoiceOutput>& choices() const { return choices_; }
  int64_t prompt_tokens() const { return prompt_tokens_; }        // over parts, each prompt counted once
  int64_t cached_prompt_tokens() const { return cached_tokens_; }  // served by the prefix cache
  int64_t completion_tokens() const;                              // generated tokens over all choices
  // True when some choice ended other than by Stop or Length: Error, Abort, Timeout,
  // QueueTimeout, or never finished.
  bool failed() const;
  // What went wrong for the first failed choice (the engine's message, or the finish reason).
  std::string failure_message() const;

 private:
  std::vector<size_t> first_choice_;  // per part: index of its first choice
  std::vector<int32_t> n_;            // per part: samples
  std::vector<bool> part_done_;       // per part: final output seen (or closed)
  std::vector<ChoiceOutput> choices_;
  int64_t prompt_tokens_ = 0, cached_tokens_ = 0;
  size_t open_parts_ = 0;
};

}  // namespace db::api
