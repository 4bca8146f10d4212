// Admission of a parsed generation request, counted in choices (prompts x n: the
// sequences it will put in the engine's queue), before anything is tokenized:
//   - more choices than --max-choices-per-request: 400 (one request can never take
//     the whole queue; the default is a quarter of the default queue);
//   - the live queue (priority 0 and 1 sequences waiting in the engine, plus requests
//     not yet parsed) plus these choices beyond --max-queued-requests: 429.
#pragma once
#include <cstdint>

#include "api/api_error.h"
#include "api/openai_request.h"
#include "server/server_context.h"

namespace db::server {

// Sequences `req` asks for: its prompts times n (chat: n).
int64_t request_choices(const api::ApiRequest& req);

// Throws api::ApiError (400 or 429, see above) when `req` may not be admitted now.
void check_admission(const ServerContext& ctx, const api::ApiRequest& req);

}  // namespace db::server
