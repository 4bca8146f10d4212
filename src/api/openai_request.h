// Either kind of generation request, so that callers (the batch job, the HTTP
// server) handle /v1/completions and /v1/chat/completions through one path.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>

#include "api/chat_request.h"
#include "api/completion_request.h"
#include "api/endpoint.h"
#include "api/generation_result.h"
#include "api/prepare.h"
#include "api/response.h"

namespace db::api {

using ApiRequest = std::variant<CompletionRequest, ChatCompletionRequest>;

// Parses a body for `endpoint`; throws ApiError naming the param.
ApiRequest parse_request(Endpoint endpoint, const Json& body);
const CommonFields& common_fields(const ApiRequest& req);
// Tokenizes / renders and resolves limits (see prepare.h); throws ApiError.
PreparedRequest prepare_request(const ApiRequest& req, const ModelBundle& bundle, int64_t max_context);
// The response body for a finished result; `meta.id` is created here when empty.
nlohmann::ordered_json build_response(const ApiRequest& req, const GenerationResult& result, const Tokenizer& tok,
                                      ResponseMeta meta);

}  // namespace db::api
