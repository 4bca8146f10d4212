#include "api/response.h"

#include <algorithm>
#include <chrono>
#include <random>

#include "api/tool_call_output.h"
#include "chat/reasoning_split.h"
#include "engine/engine_types.h"
#include "tokenizer/tokenizer.h"

namespace db::api {

using OJson = nlohmann::ordered_json;

namespace {

std::string token_string(const Tokenizer& tok, int32_t id) { return tok.decode({id}, /*skip_special=*/false); }

OJson token_bytes(const Tokenizer& tok, int32_t id) {
  OJson bytes = OJson::array();
  for (unsigned char b : tok.token_to_piece(id)) bytes.push_back(static_cast<int>(b));
  return bytes;
}

OJson chat_logprob_entry(const Tokenizer& tok, int32_t id, float lp) {
  OJson e;
  e["token"] = token_string(tok, id);
  e["logprob"] = lp;
  e["bytes"] = token_bytes(tok, id);
  return e;
}

}  // namespace

OJson response_envelope(const char* object, const ResponseMeta& meta) {
  OJson body;
  body["id"] = meta.id;
  body["object"] = object;
  body["created"] = meta.created;
  body["model"] = meta.model;
  return body;
}

// Completions' logprobs: {"tokens", "token_logprobs", "top_logprobs", "text_offset"}.
OJson completion_logprobs(const ChoiceOutput& c, size_t first_offset, const Tokenizer& tok, size_t prompt_offset) {
  OJson tokens = OJson::array(), lps = OJson::array(), tops = OJson::array(), offsets = OJson::array();
  for (size_t i = 0; i < c.prompt_token_ids.size(); ++i) {
    const std::string s = token_string(tok, c.prompt_token_ids[i]);
    tokens.push_back(s);
    const std::optional<float> lp = i < c.prompt_logprobs.size() ? c.prompt_logprobs[i] : std::nullopt;
    lps.push_back(lp ? OJson(*lp) : OJson(nullptr));
    OJson top = lp ? OJson::object() : OJson(nullptr);
    if (lp && i < c.prompt_top_logprobs.size())
      for (const auto& [id, v] : c.prompt_top_logprobs[i]) top[token_string(tok, id)] = v;
    tops.push_back(std::move(top));
    offsets.push_back(prompt_offset);
    prompt_offset += s.size();
  }
  size_t offset = first_offset;
  for (size_t i = 0; i < c.token_ids.size(); ++i) {
    const std::string s = token_string(tok, c.token_ids[i]);
    tokens.push_back(s);
    lps.push_back(i < c.logprobs.size() ? OJson(c.logprobs[i]) : OJson(nullptr));
    OJson top = OJson::object();
    if (i < c.top_logprobs.size())
      for (const auto& [id, lp] : c.top_logprobs[i]) top[token_string(tok, id)] = lp;
    tops.push_back(std::move(top));
    offsets.push_back(offset);
    offset += s.size();
  }
  OJson out;
  out["tokens"] = std::move(tokens);
  out["token_logprobs"] = std::move(lps);
  out["top_logprobs"] = std::move(tops);
  out["text_offset"] = std::move(offsets);
  return out;
}

// Chat logprobs: {"content": [{"token", "logprob", "bytes", "top_logprobs": [{"token", "logprob", "bytes"}]}]}.
OJson chat_logprobs(const ChoiceOutput& c, const Tokenizer& tok) {
  OJson content = OJson::array();
  for (size_t i = 0; i < c.token_ids.size(); ++i) {
    OJson e = chat_logprob_entry(tok, c.token_ids[i], i < c.logprobs.size() ? c.logprobs[i] : 0.0f);
    OJson top = OJson::array();
    if (i < c.top_logprobs.size())
      for (const auto& [id, lp] : c.top_logprobs[i]) top.push_back(chat_logprob_entry(tok, id, lp));
    e["top_logprobs"] = std::move(top);
    content.push_back(std::move(e));
  }
  return {{"content", std::move(content)}};
}

OJson finish_reason_json(FinishReason r, bool made_tool_calls) {
  if (r == FinishReason::None) return nullptr;
  if (r == FinishReason::Stop && made_tool_calls) return "tool_calls";
  return finish_reason_name(r);
}

std::string new_response_id(const std::string& prefix) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char* kHex = "0123456789abcdef";
  std::string id = prefix;
  for (int i = 0; i < 24; ++i) id += kHex[rng() & 15];
  return id;
}

int64_t unix_time_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

OJson usage_json(const GenerationResult& result) {
  OJson u;
  u["prompt_tokens"] = result.prompt_tokens();
  u["completion_tokens"] = result.completion_tokens();
  u["total_tokens"] = result.prompt_tokens() + result.completion_tokens();
  return u;
}

namespace {

// The choices a completion returns: all of them, or with best_of, per prompt the n of
// its best_of candidates with the highest cumulative logprob (ties: the earlier one),
// in that order.
std::vector<size_t> best_choices(const CompletionRequest& req, const GenerationResult& result) {
  std::vector<size_t> shown;
  const size_t total = result.choices().size();
  if (req.best_of <= 0) {
    for (size_t i = 0; i < total; ++i) shown.push_back(i);
    return shown;
  }
  const auto group = static_cast<size_t>(req.best_of);
  for (size_t first = 0; first < total; first += group) {
    std::vector<std::pair<double, size_t>> ranked;
    for (size_t i = first; i < std::min(total, first + group); ++i) {
      double sum = 0;
      for (float lp : result.choices()[i].logprobs) sum += lp;
      ranked.emplace_back(-sum, i);
    }
    std::sort(ranked.begin(), ranked.end());
    for (size_t k = 0; k < ranked.size() && k < static_cast<size_t>(req.common.n); ++k)
      shown.push_back(ranked[k].second);
  }
  return shown;
}

}  // namespace

OJson completion_response(const CompletionRequest& req, const GenerationResult& result, const Tokenizer& tok,
                          const ResponseMeta& meta) {
  OJson body = response_envelope("text_completion", meta);
  OJson choices = OJson::array();
  const std::vector<size_t> shown = best_choices(req, result);
  for (size_t i = 0; i < shown.size(); ++i) {
    const ChoiceOutput& c = result.choices()[shown[i]];
    OJson choice;
    choice["index"] = i;
    choice["text"] = c.text;
    choice["logprobs"] = req.logprobs ? completion_logprobs(c, c.echo_bytes, tok) : OJson(nullptr);
    choice["finish_reason"] = finish_reason_json(c.finish);
    choices.push_back(std::move(choice));
  }
  body["choices"] = std::move(choices);
  body["usage"] = usage_json(result);
  return body;
}

OJson chat_completion_response(const ChatCompletionRequest& req, const GenerationResult& result, const Tokenizer& tok,
                               const ResponseMeta& meta) {
  OJson body = response_envelope("chat.completion", meta);
  OJson choices = OJson::array();
  for (size_t i = 0; i < result.choices().size(); ++i) {
    const ChoiceOutput& c = result.choices()[i];
    OJson message;
    message["role"] = "assistant";
    message["content"] = nullptr;  // set below; first after the role, as OpenAI orders them
    std::optional<std::string> content = c.text;
    if (meta.split_reasoning) {
      chat::ReasoningParts parts = chat::split_reasoning(c.text);
      content = std::move(parts.content);
      message["reasoning_content"] = std::move(parts.reasoning);
    }
    std::vector<ToolCall> calls;
    if (req.tools.active() && content) {
      ToolCallAnswer answer = extract_tool_calls(req.tools, meta.tool_format, *content);
      calls = std::move(answer.calls);
      content = std::move(answer.content);
      if (content->empty() && !calls.empty()) content.reset();
    }
    message["content"] = content ? OJson(std::move(*content)) : OJson(nullptr);
    if (!calls.empty()) message["tool_calls"] = tool_calls_json(calls);
    OJson choice;
    choice["index"] = i;
    choice["message"] = std::move(message);
    choice["logprobs"] = req.logprobs ? chat_logprobs(c, tok) : OJson(nullptr);
    choice["finish_reason"] = finish_reason_json(c.finish, !calls.empty());
    choices.push_back(std::move(choice));
  }
  body["choices"] = std::move(choices);
  body["usage"] = usage_json(result);
  return body;
}

}  // namespace db::api
