// The generation endpoints of the OpenAI-compatible API.
#pragma once
#include <optional>
#include <string_view>

namespace db::api {

enum class Endpoint { Completions, ChatCompletions };

// "/v1/completions" -> Completions, "/v1/chat/completions" -> ChatCompletions; otherwise nullopt.
std::optional<Endpoint> endpoint_from_url(std::string_view url);
const char* endpoint_url(Endpoint e);

}  // namespace db::api
