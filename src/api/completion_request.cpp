#include "api/completion_request.h"

#include "api/api_error.h"
#include "api/request_fields.h"

namespace db::api {

namespace {

[[noreturn]] void bad_prompt(const std::string& param, const std::string& got) {
  throw ApiError("'" + param +
                     "' must be a string, a list of strings, a list of token ids or a list of lists of token ids, "
                     "got " + got,
                 param, "invalid_type");
}

std::vector<int32_t> parse_token_list(const Json& list, const std::string& param) {
  std::vector<int32_t> ids;
  ids.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& v = list[i];
    const std::string p = param + "[" + std::to_string(i) + "]";
    if (!v.is_number_integer()) bad_prompt(p, json_type_name(v));
    const bool valid = v.is_number_unsigned() ? v.get<uint64_t>() <= static_cast<uint64_t>(INT32_MAX)
                                              : v.get<int64_t>() >= 0 && v.get<int64_t>() <= INT32_MAX;
    if (!valid) throw ApiError("'" + p + "' is not a valid token id: " + v.dump(), p, "invalid_value");
    ids.push_back(static_cast<int32_t>(v.get<int64_t>()));
  }
  return ids;
}

std::vector<PromptInput> parse_prompts(const Json& body) {
  const Json* v = find_field(body, "prompt");
  if (!v) throw ApiError("'prompt' is required", "prompt", "missing_required_parameter");
  std::vector<PromptInput> out;
  if (v->is_string()) {
    out.push_back({false, v->get<std::string>(), {}});
    return out;
  }
  if (!v->is_array()) bad_prompt("prompt", json_type_name(*v));
  if (v->empty()) throw ApiError("'prompt' must not be an empty list", "prompt", "invalid_value");
  const Json& first = (*v)[0];
  if (first.is_number()) {
    out.push_back({true, "", parse_token_list(*v, "prompt")});
    return out;
  }
  for (size_t i = 0; i < v->size(); ++i) {
    const Json& item = (*v)[i];
    const std::string p = "prompt[" + std::to_string(i) + "]";
    if (first.is_string() && item.is_string()) {
      out.push_back({false, item.get<std::string>(), {}});
    } else if (first.is_array() && item.is_array()) {
      if (item.empty()) throw ApiError("'" + p + "' must not be an empty list", p, "invalid_value");
      out.push_back({true, "", parse_token_list(item, p)});
    } else {
      bad_prompt(p, json_type_name(item) + " (the list mixes kinds or holds unsupported values)");
    }
  }
  return out;
}

}  // namespace

CompletionRequest parse_completion_request(const Json& body) {
  check_body_fields(Endpoint::Completions, body);
  CompletionRequest r;
  r.common = parse_common_fields(body);
  r.prompts = parse_prompts(body);
  r.max_tokens = parse_max_tokens(body, "max_tokens");
  if (auto lp = opt_integer(body, "logprobs", 0, kMaxLogprobs)) r.logprobs = static_cast<int32_t>(*lp);
  r.echo = opt_bool(body, "echo").value_or(false);
  r.suffix = opt_string(body, "suffix");
  r.common.sampling.logprobs = r.logprobs;
  if (r.echo && r.logprobs) r.common.sampling.prompt_logprobs = r.logprobs;  // the echoed prompt is scored too
  if (auto b = opt_integer(body, "best_of", 1, kMaxSamplesPerPrompt)) {
    if (*b < r.common.n)
      throw ApiError("'best_of' (" + std::to_string(*b) + ") must be at least 'n' (" + std::to_string(r.common.n) + ")",
                     "best_of", "invalid_value");
    if (*b > r.common.n && r.common.stream)
      throw ApiError("'best_of' larger than 'n' cannot be streamed: the best samples are known only at the end",
                     "best_of", "invalid_value");
    if (*b > r.common.n) r.best_of = static_cast<int32_t>(*b);
  }
  return r;
}

}  // namespace db::api
