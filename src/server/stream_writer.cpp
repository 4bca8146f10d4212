#include "server/stream_writer.h"

#include "api/stream_chunk.h"
#include "api/timeout_error.h"

namespace db::server {

using OJson = nlohmann::ordered_json;

StreamWriter::StreamWriter(const api::ApiRequest& req, const api::PreparedRequest& prepared, const Tokenizer& tok,
                           api::ResponseMeta meta, std::shared_ptr<http::Responder> res)
    : chat_(std::holds_alternative<api::ChatCompletionRequest>(req)),
      tok_(tok),
      meta_(std::move(meta)),
      res_(std::move(res)),
      result_(prepared) {
  if (chat_) {
    want_logprobs_ = std::get<api::ChatCompletionRequest>(req).logprobs;
  } else {
    want_logprobs_ = std::get<api::CompletionRequest>(req).logprobs.has_value();
    echo_scored_ = want_logprobs_ && std::get<api::CompletionRequest>(req).echo;
  }
  include_usage_ = api::common_fields(req).stream_include_usage;
  timeout_ = api::common_fields(req).timeout;
  for (size_t p = 0; p < prepared.parts.size(); ++p) {
    first_choice_.push_back(echo_.size());
    const std::string echo = p < prepared.echo_texts.size() ? prepared.echo_texts[p] : "";
    for (int32_t s = 0; s < prepared.parts[p].n; ++s) echo_.push_back(echo);
    part_n_.push_back(prepared.parts[p].n);
  }
  prompt_offset_.assign(echo_.size(), 0);
  for (const std::string& e : echo_) text_offset_.push_back(e.size());
  if (chat_ && meta_.split_reasoning) reasoning_.resize(echo_.size());
  if (chat_ && std::get<api::ChatCompletionRequest>(req).tools.active())
    tools_.assign(echo_.size(), api::ToolCallExtractor(std::get<api::ChatCompletionRequest>(req).tools, meta_.tool_format));
}

void StreamWriter::begin() {
  std::lock_guard<std::mutex> lock(mu_);
  res_->begin_stream(200, {{"Content-Type", "text/event-stream"}, {"Cache-Control", "no-cache"}});
  for (size_t i = 0; i < echo_.size(); ++i) {
    OJson chunk;
    if (chat_)
      chunk = api::chat_chunk(meta_, i, {{"role", "assistant"}, {"content", ""}}, nullptr, FinishReason::None);
    else if (!echo_[i].empty() && !echo_scored_)
      chunk = api::completion_chunk(meta_, i, echo_[i], nullptr, FinishReason::None);
    else
      continue;
    if (include_usage_) chunk["usage"] = nullptr;
    res_->write(api::sse_data(chunk));
  }
}

OJson StreamWriter::logprobs_delta(size_t choice, const SampleOutput& out) {
  if (!want_logprobs_ || out.new_token_ids.empty()) return nullptr;
  api::ChoiceOutput piece;
  piece.token_ids = out.new_token_ids;
  piece.logprobs = out.new_logprobs;
  piece.top_logprobs = out.new_top_logprobs;
  if (chat_) return api::chat_logprobs(piece, tok_);
  OJson lp = api::completion_logprobs(piece, text_offset_[choice], tok_);
  for (const auto& t : lp["tokens"]) text_offset_[choice] += t.get_ref<const std::string&>().size();
  return lp;
}

OJson StreamWriter::chat_delta(size_t choice, const SampleOutput& out) {
  const bool end = out.finish != FinishReason::None;
  OJson delta = OJson::object();
  if (reasoning_.empty() && tools_.empty()) {
    if (!out.new_text.empty() || !end) delta["content"] = out.new_text;
    return delta;
  }
  // Text that may be the start of a tag is held back and comes with a later chunk.
  chat::ReasoningStreamSplitter::Delta d;
  if (!reasoning_.empty()) {
    d = reasoning_[choice].push(out.new_text);
    if (end) {
      chat::ReasoningStreamSplitter::Delta rest = reasoning_[choice].flush();
      d.reasoning += rest.reasoning;
      d.content += rest.content;
    }
  } else {
    d.content = out.new_text;
  }
  if (!d.reasoning.empty()) delta["reasoning_content"] = std::move(d.reasoning);
  if (tools_.empty()) {
    if (!d.content.empty()) delta["content"] = std::move(d.content);
    return delta;
  }
  api::ToolCallOutput t = tools_[choice].push(d.content);
  if (end) {
    api::ToolCallOutput rest = tools_[choice].flush();
    t.content += rest.content;
    for (api::ToolCallDelta& c : rest.calls) t.calls.push_back(std::move(c));
  }
  if (!t.content.empty()) delta["content"] = std::move(t.content);
  if (!t.calls.empty()) delta["tool_calls"] = api::tool_call_deltas_json(t.calls);
  return delta;
}

void StreamWriter::write_choice_chunk(size_t choice, const SampleOutput& out) {
  const bool has_tokens = want_logprobs_ && !out.new_token_ids.empty();
  if (out.new_text.empty() && !has_tokens && out.finish == FinishReason::None) return;
  OJson lp = logprobs_delta(choice, out);
  OJson chunk;
  if (chat_) {
    OJson delta = chat_delta(choice, out);
    if (delta.empty() && lp.is_null() && out.finish == FinishReason::None) return;  // all of it held back
    const bool made_calls = !tools_.empty() && tools_[choice].calls() > 0;
    chunk = api::chat_chunk(meta_, choice, std::move(delta), std::move(lp), out.finish, made_calls);
  } else {
    chunk = api::completion_chunk(meta_, choice, out.new_text, std::move(lp), out.finish);
  }
  if (include_usage_) chunk["usage"] = nullptr;
  res_->write(api::sse_data(chunk));
}

void StreamWriter::write_prompt_chunks(size_t part, const SampleOutput& out) {
  api::ChoiceOutput piece;
  piece.prompt_token_ids = out.prompt_token_ids;
  piece.prompt_logprobs = out.prompt_logprobs;
  piece.prompt_top_logprobs = out.prompt_top_logprobs;
  for (int32_t k = 0; k < part_n_[part]; ++k) {
    const size_t choice = first_choice_[part] + static_cast<size_t>(k);
    OJson lp = api::completion_logprobs(piece, 0, tok_, prompt_offset_[choice]);
    for (const auto& t : lp["tokens"]) prompt_offset_[choice] += t.get_ref<const std::string&>().size();
    OJson chunk = api::completion_chunk(meta_, choice, echo_[choice], std::move(lp), FinishReason::None);
    echo_[choice].clear();  // the echo text goes with the first piece only
    if (include_usage_) chunk["usage"] = nullptr;
    res_->write(api::sse_data(chunk));
  }
}

void StreamWriter::finish_stream() {
  if (include_usage_)
    res_->write(api::sse_data(api::usage_chunk(chat_ ? api::kChatChunkObject : api::kCompletionChunkObject, meta_,
                                               api::usage_json(result_))));
  // The 200 went out with the headers: a request ended for time says so in an error event.
  if (std::optional<api::ApiError> timed_out = api::timeout_error(result_, timeout_))
    res_->write(api::sse_data(api::error_body(*timed_out)));
  res_->write(std::string(api::kSseDone));
  res_->end();
  ended_ = true;
}

bool StreamWriter::add(size_t part, const SampleOutput& out, const RequestStats& stats, bool final) {
  std::lock_guard<std::mutex> lock(mu_);
  if (ended_) return true;
  const bool done = result_.add(part, out, stats, final);
  if (echo_scored_ && !out.prompt_token_ids.empty()) write_prompt_chunks(part, out);
  write_choice_chunk(first_choice_[part] + static_cast<size_t>(out.index), out);
  if (done) finish_stream();
  return done;
}

}  // namespace db::server
