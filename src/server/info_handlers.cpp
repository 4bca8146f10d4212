#include "server/info_handlers.h"

#include "api/response.h"
#include "metrics/registry.h"
#include "server/http_helpers.h"

namespace db::server {

namespace {

using OJson = nlohmann::ordered_json;

OJson model_object(const ServerContext& ctx) {
  static const int64_t created = api::unix_time_now();
  OJson m;
  m["id"] = ctx.config.model_name;
  m["object"] = "model";
  m["created"] = created;
  m["owned_by"] = "deepbatch";
  m["root"] = ctx.config.model_name;
  m["max_model_len"] = ctx.config.max_context;
  return m;
}

}  // namespace

void handle_list_models(const ServerContext& ctx, std::shared_ptr<http::Responder> res) {
  OJson body;
  body["object"] = "list";
  body["data"] = OJson::array({model_object(ctx)});
  send_json(*res, 200, body);
}

void handle_get_model(const ServerContext& ctx, const std::string& id, std::shared_ptr<http::Responder> res) {
  if (id != ctx.config.model_name) {
    send_error(*res, api::ApiError("the model '" + id + "' does not exist", "model", "model_not_found", 404,
                                   "not_found_error"));
    return;
  }
  send_json(*res, 200, model_object(ctx));
}

void handle_health(const ServerContext& ctx, EngineWatchdog& watchdog, bool shutting_down,
                   std::shared_ptr<http::Responder> res) {
  if (shutting_down) {
    send_error(*res, api::ApiError("the server is shutting down", "", "shutting_down", 503, "server_error"));
    return;
  }
  if (!watchdog.healthy(ctx.engine.stats())) {
    send_error(*res, api::ApiError("the engine has work but has not completed a step for too long", "",
                                   "engine_stalled", 503, "server_error"));
    return;
  }
  send_json(*res, 200, {{"status", "ok"}});
}

void handle_metrics(ServerContext& ctx, std::shared_ptr<http::Responder> res) {
  res->send(200, {{"Content-Type", metrics::kExpositionContentType}}, ctx.metrics.render(ctx.engine.stats()));
}

}  // namespace db::server
