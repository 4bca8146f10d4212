#include "server/app.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "server/auth.h"
#include "server/batch_mount.h"
#include "server/generation_call.h"
#include "server/http_helpers.h"
#include "server/info_handlers.h"
#include "server/status_recording_responder.h"
#include "util/error.h"
#include "util/unrecoverable.h"

namespace db::server {

namespace {

http::ServerOptions http_options(const ServeConfig& c) {
  http::ServerOptions o;
  o.host = c.host;
  o.port = c.port;
  o.io_threads = c.io_threads;
  o.max_body_bytes = c.max_body_bytes;
  o.header_timeout_s = c.header_timeout_s;
  // One body of the largest size must always fit.
  o.max_body_bytes_in_flight = c.max_body_bytes_in_flight == 0 ? 0 : std::max(c.max_body_bytes_in_flight, c.max_body_bytes);
  o.error_body = protocol_error_body;
  return o;
}

// --api-keys, or --api-key as its one-tenant shortcut.
TenantRegistry make_registry(const ServeConfig& c) {
  if (c.tenants.empty()) return TenantRegistry::single_key(c.api_key);
  if (!c.api_key.empty()) throw Error("--api-key and --api-keys cannot be used together");
  return TenantRegistry(c.tenants);
}

}  // namespace

ServerApp::ServerApp(Engine& engine, const ModelBundle& bundle, ServeConfig config)
    : config_(std::move(config)),
      tenants_(make_registry(config_)),
      quotas_(tenants_),
      metrics_(config_.model_name, config_.metric_naming, config_.machine_read_bandwidth),
      tracker_(engine),
      prepare_queue_(std::make_unique<WorkQueue>(config_.prepare_threads)),
      ctx_{engine, bundle, config_, metrics_, tracker_, *prepare_queue_, tenants_, quotas_},
      router_(protocol_error_body) {
  add_routes();
  router_.set_guard([tenants = &tenants_](http::Request& req, http::Responder& res) {
    try {
      const Tenant* tenant = authenticate(req, *tenants);
      req.principal = tenant ? tenant->name : "";
      return true;
    } catch (const api::ApiError& e) {
      send_error(res, e);
      return false;
    }
  });
  batch_ = mount_batch_api(engine, bundle, config_, quotas_, router_);
  engine.set_step_observer([m = &metrics_](const StepRecord& step) { m->on_step(step); });
  engine.set_pool_scans_while_busy(true);  // /metrics reports the pool's blocks
  http::ServerOptions options = http_options(config_);
  if (batch_) {  // uploads go to disk as they arrive; only an authenticated client's (the guard runs later)
    options.spool.dir = config_.data_dir + "/spool";
    options.spool.max_bytes = config_.max_upload_bytes;
    options.spool.wants = [tenants = &tenants_](const http::Request& head) {
      if (head.method != "POST" || head.path != "/v1/files") return false;
      try {
        authenticate(head, *tenants);
        return true;
      } catch (const api::ApiError&) {
        return false;
      }
    };
  }
  options.on_protocol_error = [m = &metrics_](int status) { m->on_http_response(status); };
  http_ = std::make_unique<http::Server>(
      std::move(options),
      [this](http::Request&& req, std::shared_ptr<http::Responder> res) { handle(std::move(req), std::move(res)); });
}

ServerApp::~ServerApp() {
  shutdown_with_timeout(0);
  ctx_.engine.set_step_observer({});  // the engine outlives the metrics
  ctx_.engine.set_pool_scans_while_busy(false);
}

int ServerApp::port() const { return http_->port(); }

void ServerApp::start() { http_->start(); }

void ServerApp::add_routes() {
  ServerContext* ctx = &ctx_;
  router_.add("POST", "/v1/completions", [ctx](http::Request&& req, const http::PathParams&, auto res) {
    handle_generation(*ctx, api::Endpoint::Completions, std::move(req), std::move(res));
  });
  router_.add("POST", "/v1/chat/completions", [ctx](http::Request&& req, const http::PathParams&, auto res) {
    handle_generation(*ctx, api::Endpoint::ChatCompletions, std::move(req), std::move(res));
  });
  router_.add("GET", "/v1/models",
              [ctx](http::Request&&, const http::PathParams&, auto res) { handle_list_models(*ctx, std::move(res)); });
  router_.add("GET", "/v1/models/{id}", [ctx](http::Request&&, const http::PathParams& p, auto res) {
    handle_get_model(*ctx, p.get("id"), std::move(res));
  });
  router_.add(
      "GET", "/health",
      [this](http::Request&&, const http::PathParams&, auto res) {
        handle_health(ctx_, watchdog_, draining_.load(), std::move(res));
      },
      http::Access::open);
  router_.add(
      "GET", "/metrics",
      [ctx](http::Request&&, const http::PathParams&, auto res) { handle_metrics(*ctx, std::move(res)); },
      http::Access::open);
}

void ServerApp::handle(http::Request&& req, std::shared_ptr<http::Responder> raw) {
  auto res = std::make_shared<StatusRecordingResponder>(std::move(raw),
                                                        [m = &metrics_](int status) { m->on_http_response(status); });
  if (draining_.load() && req.path != "/metrics") {
    send_error(*res, api::ApiError("the server is shutting down", "", "shutting_down", 503, "server_error"));
    return;
  }
  // The model cannot compute any more (a rank of a split model is lost): /health and every
  // request say so at once, until the process ends.
  if (const std::optional<std::string> why = unrecoverable_reason(); why && req.path != "/metrics") {
    send_error(*res, model_unavailable_error(*why));
    return;
  }
  router_.dispatch(std::move(req), std::move(res));
}

void ServerApp::shutdown() { shutdown_with_timeout(config_.shutdown_timeout_s); }

void ServerApp::shutdown_with_timeout(double timeout_s) {
  if (stopped_) return;
  stopped_ = true;
  draining_ = true;
  http_->stop_accepting();
  if (!tracker_.wait_all_closed(timeout_s)) {
    tracker_.abort_all();
    tracker_.wait_all_closed(10);
  }
  if (batch_) batch_->shutdown();
  // Finished responses may still sit in send buffers: give clients a moment to read them and close.
  const auto flush_deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(std::min(timeout_s, 2.0));
  while (http_->open_connections() > 0 && std::chrono::steady_clock::now() < flush_deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  http_->stop();
  prepare_queue_.reset();  // runs what is left (requests of closed connections end at once)
  tracker_.abort_all();
  tracker_.wait_all_closed(10);
}

}  // namespace db::server
