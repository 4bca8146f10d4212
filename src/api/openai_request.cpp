#include "api/openai_request.h"

#include "bundle/model_bundle.h"

namespace db::api {

std::optional<Endpoint> endpoint_from_url(std::string_view url) {
  if (url == "/v1/completions") return Endpoint::Completions;
  if (url == "/v1/chat/completions") return Endpoint::ChatCompletions;
  return std::nullopt;
}

const char* endpoint_url(Endpoint e) {
  return e == Endpoint::Completions ? "/v1/completions" : "/v1/chat/completions";
}

ApiRequest parse_request(Endpoint endpoint, const Json& body) {
  if (endpoint == Endpoint::Completions) return parse_completion_request(body);
  return parse_chat_request(body);
}

const CommonFields& common_fields(const ApiRequest& req) {
  return std::visit([](const auto& r) -> const CommonFields& { return r.common; }, req);
}

PreparedRequest prepare_request(const ApiRequest& req, const ModelBundle& bundle, int64_t max_context) {
  if (const auto* c = std::get_if<CompletionRequest>(&req)) return prepare_completion(*c, bundle, max_context);
  return prepare_chat(std::get<ChatCompletionRequest>(req), bundle, max_context);
}

nlohmann::ordered_json build_response(const ApiRequest& req, const GenerationResult& result, const Tokenizer& tok,
                                      ResponseMeta meta) {
  if (const auto* c = std::get_if<CompletionRequest>(&req)) {
    if (meta.id.empty()) meta.id = new_response_id("cmpl-");
    return completion_response(*c, result, tok, meta);
  }
  if (meta.id.empty()) meta.id = new_response_id("chatcmpl-");
  return chat_completion_response(std::get<ChatCompletionRequest>(req), result, tok, meta);
}

}  // namespace db::api
