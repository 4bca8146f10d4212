// GET /v1/models, /v1/models/{id}, /health and /metrics.
#pragma once
#include <atomic>
#include <memory>
#include <string>

#include "http/request.h"
#include "http/responder.h"
#include "server/engine_watchdog.h"
#include "server/server_context.h"

namespace db::server {

// {"object": "list", "data": [{"id", "object": "model", "created", "owned_by", "max_model_len"}]}
void handle_list_models(const ServerContext& ctx, std::shared_ptr<http::Responder> res);
// The model object for `id`, or 404.
void handle_get_model(const ServerContext& ctx, const std::string& id, std::shared_ptr<http::Responder> res);
// 200 {"status": "ok"} while serving; 503 once shutting down or while the engine has work but
// does not step (see EngineWatchdog).
void handle_health(const ServerContext& ctx, EngineWatchdog& watchdog, bool shutting_down,
                   std::shared_ptr<http::Responder> res);
// Prometheus text exposition of the server's metrics.
void handle_metrics(ServerContext& ctx, std::shared_ptr<http::Responder> res);

}  // namespace db::server
