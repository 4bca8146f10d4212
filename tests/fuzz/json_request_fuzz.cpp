// The validation of a generation request body, as the server runs it: the body's bytes
// through db::api::parse_request_body (bounded-memory parse + validation), for
// /v1/completions and for /v1/chat/completions, under the default limits and under small
// ones (so that every limit is reached). Validation must either accept the body or throw
// db::api::ApiError with a 4xx status; any other exception would reach the client as a
// 500 and counts as a crash. An accepted request must hold values the engine accepts
// (SamplingParams::validate).
//
// The bounded parser is also checked against nlohmann's own parser: they must agree on
// what is valid JSON and build the same document, and what the bounded path accepts the
// plain path (Json::parse + parse_request) accepts too.
//
// Input: the request body, as sent.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <string_view>
#include <typeinfo>
#include <variant>

#include "api/api_error.h"
#include "api/bounded_json.h"
#include "api/openai_request.h"
#include "api/request_body.h"
#include "api/stream_chunk.h"
#include "fuzz_check.h"

namespace {

using namespace db::api;

// Small enough that short inputs reach every limit.
BodyLimits small_limits() {
  BodyLimits l;
  l.max_depth = 4;
  l.max_values = 48;
  l.max_string_bytes = 24;
  l.max_total_string_bytes = 96;
  l.max_prompt_tokens = 6;
  l.context_tokens = 7;
  return l;
}

void check_common(const CommonFields& c) {
  FUZZ_CHECK(c.n >= 1 && c.n <= kMaxSamplesPerPrompt, "n in range");
  FUZZ_CHECK(c.priority >= 0 && c.priority <= 2, "priority in range");
  for (const auto& s : c.stop) FUZZ_CHECK(!s.empty(), "no empty stop strings");
  for (int32_t id : c.stop_token_ids) FUZZ_CHECK(id >= 0, "stop token ids non-negative");
  try {
    c.sampling.validate();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "accepted sampling parameters the engine rejects: %s\n", e.what());
    FUZZ_CHECK(false, "accepted sampling parameters pass SamplingParams::validate");
  }
}

void check_accepted(const ApiRequest& req, const BodyLimits& limits) {
  check_common(common_fields(req));
  if (const auto* c = std::get_if<CompletionRequest>(&req)) {
    FUZZ_CHECK(!c->prompts.empty(), "at least one prompt");
    for (const auto& p : c->prompts) {
      if (p.is_tokens) FUZZ_CHECK(!p.tokens.empty(), "token prompts are not empty");
      FUZZ_CHECK(p.tokens.size() <= limits.max_prompt_tokens, "token prompts within the limit");
      FUZZ_CHECK(p.text.size() <= limits.max_string_bytes, "text prompts within the limit");
      for (int32_t id : p.tokens) FUZZ_CHECK(id >= 0, "token ids non-negative");
    }
    if (c->max_tokens) FUZZ_CHECK(*c->max_tokens >= 1, "max_tokens >= 1");
    if (c->logprobs) FUZZ_CHECK(*c->logprobs >= 0 && *c->logprobs <= db::kMaxLogprobs, "logprobs in range");
  } else {
    const auto& chat = std::get<ChatCompletionRequest>(req);
    FUZZ_CHECK(!chat.messages.empty(), "at least one message");
    for (const auto& m : chat.messages) {
      FUZZ_CHECK(m.role == "system" || m.role == "user" || m.role == "assistant" || m.role == "tool", "known roles");
      FUZZ_CHECK(m.content || (m.role == "assistant" && !m.tool_calls.empty()), "content, unless beside calls");
      FUZZ_CHECK(m.tool_calls.empty() || m.role == "assistant", "calls only in assistant turns");
      FUZZ_CHECK(m.role == "tool" || m.tool_call_id.empty(), "tool_call_id only in tool turns");
      for (const auto& c : m.tool_calls) FUZZ_CHECK(!c.name.empty(), "calls name their function");
    }
    const auto& t = chat.tools;
    FUZZ_CHECK(t.functions.size() <= kMaxTools, "tools within the limit");
    FUZZ_CHECK(t.choice == ToolRequest::Choice::None || !t.functions.empty(), "a tool choice has tools");
    if (t.choice == ToolRequest::Choice::Required || t.choice == ToolRequest::Choice::Named)
      FUZZ_CHECK(chat.common.guided && chat.common.guided->field == "tool_choice", "required/named constrain");
    if (chat.max_tokens) FUZZ_CHECK(*chat.max_tokens >= 1, "max_tokens >= 1");
    FUZZ_CHECK(chat.top_logprobs >= 0 && chat.top_logprobs <= db::kMaxLogprobs, "top_logprobs in range");
  }
}

void check_rejected(const ApiError& e) {
  FUZZ_CHECK(e.status() >= 400 && e.status() < 500, "validation errors are the client's (4xx)");
  FUZZ_CHECK(*e.what() != '\0', "validation errors say what was wrong");
  dump_json(error_body(e));  // rendered as the server renders it; must not throw
}

[[noreturn]] void unexpected(const char* where, const std::exception& e) {
  std::fprintf(stderr, "%s threw %s: %s\n", where, typeid(e).name(), e.what());
  FUZZ_CHECK(false, "validation throws only ApiError");
}

// True when the body is accepted.
bool validate_body(Endpoint endpoint, std::string_view body, const BodyLimits& limits) {
  try {
    check_accepted(parse_request_body(endpoint, body, limits), limits);
    return true;
  } catch (const ApiError& e) {
    check_rejected(e);
  } catch (const std::exception& e) {
    unexpected("parse_request_body", e);
  }
  return false;
}

// The plain path: nlohmann's parser, then validation. nullopt: not valid JSON.
std::optional<bool> validate_plain(Endpoint endpoint, const std::optional<Json>& json) {
  if (!json) return std::nullopt;
  try {
    check_accepted(parse_request(endpoint, *json), BodyLimits{});
    return true;
  } catch (const ApiError& e) {
    check_rejected(e);
  } catch (const std::exception& e) {
    unexpected("parse_request", e);
  }
  return false;
}

// The bounded parser (default limits) against nlohmann's DOM parser.
void compare_parsers(std::string_view bytes, const std::optional<Json>& plain) {
  try {
    const Json bounded = parse_json_bounded(bytes);
    FUZZ_CHECK(plain.has_value(), "the bounded parser accepts only valid JSON");
    FUZZ_CHECK(bounded == *plain, "both parsers build the same document");
  } catch (const ApiError& e) {
    check_rejected(e);
    if (plain) FUZZ_CHECK(e.code() != "invalid_json", "the bounded parser accepts all valid JSON");
  } catch (const std::exception& e) {
    unexpected("parse_json_bounded", e);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::optional<Json> plain;
  try {
    plain = Json::parse(bytes);
  } catch (const Json::exception&) {
  }
  compare_parsers(bytes, plain);
  static const BodyLimits kSmall = small_limits();
  for (Endpoint endpoint : {Endpoint::Completions, Endpoint::ChatCompletions}) {
    const bool accepted = validate_body(endpoint, bytes, BodyLimits{});
    const std::optional<bool> plain_accepted = validate_plain(endpoint, plain);
    if (accepted) FUZZ_CHECK(plain_accepted.value_or(false), "what the bounded path accepts, the plain path does");
    if (validate_body(endpoint, bytes, kSmall)) FUZZ_CHECK(accepted, "small limits accept less");
  }
  return 0;
}
