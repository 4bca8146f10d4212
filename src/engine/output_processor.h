// The output side of the engine (runs on the output thread): per sample an
// incremental detokenizer and a stop-string matcher, per request its stats,
// and the caller's callback. Single-threaded: one thread calls handle().
//
// Stop strings: text is matched after detokenization; text that might start
// a stop string is held back; on a match the sample ends with Stop, the text
// before the match is delivered, and finish_sequence(sequence id) asks the
// step side to stop computing it (tokens it already sampled past the stop are
// dropped here). A stop token (EOS or stop_token_ids) is delivered as a token
// but adds no text.
#pragma once
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "engine/output_event.h"
#include "engine/stop_string_matcher.h"
#include "tokenizer/detokenizer.h"
#include "tokenizer/tokenizer.h"

namespace db {

class OutputProcessor {
 public:
  // finish_sequence: stops a sequence on the step side (thread-safe, non-blocking).
  // group_done: called after a request's final callback returned.
  OutputProcessor(const Tokenizer& tokenizer, std::function<void(RequestId)> finish_sequence,
                  std::function<void()> group_done);

  void handle(const OutputEvent& e);
  // Requests whose final output has not been delivered yet.
  size_t num_groups() const { return groups_.size(); }

 private:
  struct Sample {
    IncrementalDetokenizer detok;
    StopStringMatcher matcher;
    bool finished = false;
  };
  struct Group {
    std::shared_ptr<const GroupInfo> info;
    std::vector<Sample> samples;
    RequestStats stats;
    int32_t finished = 0;       // samples whose final output went out
    bool scheduled = false;     // queue_seconds is set
    bool has_token = false;     // ttft_seconds is set
    int32_t prompt_scored = 0;  // prompt positions whose logprobs went out (a recomputed prefill repeats them)
  };

  void on_tokens(Group& g, const OutputEvent& e);
  void on_prompt_logprobs(Group& g, const OutputEvent& e);
  void finish_unfinished(Group& g, const OutputEvent& e, FinishReason reason);
  // Calls the callback; removes the group after its final output.
  void deliver(RequestId id, Group& g, Sample& s, SampleOutput& out, EngineClock::time_point now);

  const Tokenizer& tokenizer_;
  std::function<void(RequestId)> finish_sequence_;
  std::function<void()> group_done_;
  std::unordered_map<RequestId, Group> groups_;
};

}  // namespace db
