#include "api/stream_chunk.h"

namespace db::api {

using OJson = nlohmann::ordered_json;

std::string dump_json(const OJson& v) {
  return v.dump(-1, ' ', /*ensure_ascii=*/false, OJson::error_handler_t::replace);
}

std::string sse_data(const OJson& payload) { return "data: " + dump_json(payload) + "\n\n"; }

OJson completion_chunk(const ResponseMeta& meta, size_t index, const std::string& text, OJson logprobs,
                       FinishReason finish) {
  OJson choice;
  choice["index"] = index;
  choice["text"] = text;
  choice["logprobs"] = std::move(logprobs);
  choice["finish_reason"] = finish_reason_json(finish);
  OJson body = response_envelope(kCompletionChunkObject, meta);
  body["choices"] = OJson::array({std::move(choice)});
  return body;
}

OJson chat_chunk(const ResponseMeta& meta, size_t index, OJson delta, OJson logprobs, FinishReason finish,
                 bool made_tool_calls) {
  OJson choice;
  choice["index"] = index;
  choice["delta"] = std::move(delta);
  choice["logprobs"] = std::move(logprobs);
  choice["finish_reason"] = finish_reason_json(finish, made_tool_calls);
  OJson body = response_envelope(kChatChunkObject, meta);
  body["choices"] = OJson::array({std::move(choice)});
  return body;
}

OJson usage_chunk(const char* object, const ResponseMeta& meta, OJson usage) {
  OJson body = response_envelope(object, meta);
  body["choices"] = OJson::array();
  body["usage"] = std::move(usage);
  return body;
}

}  // namespace db::api
