#include "api/generation_result.h"

#include "util/error.h"

namespace db::api {

GenerationResult::GenerationResult(const PreparedRequest& prepared) {
  for (size_t p = 0; p < prepared.parts.size(); ++p) {
    const EngineRequest& e = prepared.parts[p];
    first_choice_.push_back(choices_.size());
    n_.push_back(e.n);
    prompt_tokens_ += static_cast<int64_t>(e.prompt.size());
    for (int32_t s = 0; s < e.n; ++s) {
      ChoiceOutput c;
      if (p < prepared.echo_texts.size()) c.text = prepared.echo_texts[p];
      c.echo_bytes = c.text.size();
      choices_.push_back(std::move(c));
    }
  }
  part_done_.assign(prepared.parts.size(), false);
  open_parts_ = prepared.parts.size();
}

bool GenerationResult::add(size_t part, const SampleOutput& out, const RequestStats& stats, bool final) {
  DB_CHECK(part < n_.size(), "output for an unknown part " + std::to_string(part));
  DB_CHECK(out.index >= 0 && out.index < n_[part], "sample index " + std::to_string(out.index) + " out of range");
  for (int32_t k = 0; k < n_[part] && !out.prompt_token_ids.empty(); ++k) {  // every choice echoes the prompt
    ChoiceOutput& pc = choices_[first_choice_[part] + static_cast<size_t>(k)];
    pc.prompt_token_ids.insert(pc.prompt_token_ids.end(), out.prompt_token_ids.begin(), out.prompt_token_ids.end());
    pc.prompt_logprobs.insert(pc.prompt_logprobs.end(), out.prompt_logprobs.begin(), out.prompt_logprobs.end());
    pc.prompt_top_logprobs.insert(pc.prompt_top_logprobs.end(), out.prompt_top_logprobs.begin(),
                                  out.prompt_top_logprobs.end());
  }
  ChoiceOutput& c = choices_[first_choice_[part] + static_cast<size_t>(out.index)];
  c.text += out.new_text;
  c.token_ids.insert(c.token_ids.end(), out.new_token_ids.begin(), out.new_token_ids.end());
  c.logprobs.insert(c.logprobs.end(), out.new_logprobs.begin(), out.new_logprobs.end());
  c.top_logprobs.insert(c.top_logprobs.end(), out.new_top_logprobs.begin(), out.new_top_logprobs.end());
  if (out.finish != FinishReason::None) {
    c.finish = out.finish;
    c.stop_reason = out.stop_reason;
  }
  if (final && !part_done_[part]) {
    cached_tokens_ += stats.cached_prompt_tokens;
    close_part(part);
  }
  return done();
}

void GenerationResult::close_part(size_t part) {
  DB_CHECK(part < part_done_.size(), "unknown part " + std::to_string(part));
  if (part_done_[part]) return;
  part_done_[part] = true;
  --open_parts_;
}

int64_t GenerationResult::completion_tokens() const {
  int64_t n = 0;
  for (const ChoiceOutput& c : choices_) n += static_cast<int64_t>(c.token_ids.size());
  return n;
}

bool GenerationResult::failed() const {
  for (const ChoiceOutput& c : choices_)
    if (c.finish != FinishReason::Stop && c.finish != FinishReason::Length) return true;
  return false;
}

std::string GenerationResult::failure_message() const {
  for (size_t i = 0; i < choices_.size(); ++i) {
    const ChoiceOutput& c = choices_[i];
    const std::string where = "choice " + std::to_string(i) + ": ";
    if (c.finish == FinishReason::Error)
      return where + (c.stop_reason.empty() ? "the engine reported an error" : c.stop_reason);
    if (c.finish == FinishReason::Abort) return where + "aborted";
    if (c.finish == FinishReason::Timeout)
      return where + (c.stop_reason.empty() ? "the request's deadline passed" : c.stop_reason);
    if (c.finish == FinishReason::QueueTimeout)
      return where + (c.stop_reason.empty() ? "waited in the queue past its limit" : c.stop_reason);
    if (c.finish == FinishReason::None) return where + "never finished";
  }
  return "";
}

}  // namespace db::api
