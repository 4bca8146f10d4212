// `deepbatch serve` assembled: routes, authentication, metrics and graceful
// shutdown around one Engine, on the HTTP transport.
//
//   http::Server --> handle(): 503 while draining, HTTP metrics (transport errors too)
//                --> Router (guard: the API key, on every route but the open /health and /metrics;
//                    it names the request's tenant in Request::principal):
//                    /v1/completions, /v1/chat/completions (generation_call.h),
//                    /v1/models, /health, /metrics (info_handlers.h), Batch API (with a data dir)
#pragma once
#include <atomic>
#include <memory>

#include "http/router.h"
#include "http/server.h"
#include "server/engine_watchdog.h"
#include "server/server_context.h"

namespace db::server {

class MountedBatchApi;

class ServerApp {
 public:
  // Binds the listening socket (throws db::Error when it cannot); serves nothing until start().
  // `engine` and `bundle` must outlive the app.
  ServerApp(Engine& engine, const ModelBundle& bundle, ServeConfig config);
  ~ServerApp();  // shutdown() with no grace period when it was not called
  ServerApp(const ServerApp&) = delete;
  ServerApp& operator=(const ServerApp&) = delete;

  int port() const;
  void start();
  // Graceful: stops accepting, answers new requests 503, lets in-flight ones finish for up to
  // config.shutdown_timeout_s (then aborts them), stops the Batch API, closes every connection.
  void shutdown();

  // Entry point of every request (public for tests that drive it without sockets).
  void handle(http::Request&& req, std::shared_ptr<http::Responder> res);

 private:
  void add_routes();
  void shutdown_with_timeout(double timeout_s);

  ServeConfig config_;
  TenantRegistry tenants_;
  TenantQuotas quotas_;
  ServerMetrics metrics_;
  RequestTracker tracker_;
  std::unique_ptr<WorkQueue> prepare_queue_;
  ServerContext ctx_;
  http::Router router_;
  std::unique_ptr<MountedBatchApi> batch_;
  EngineWatchdog watchdog_;
  std::atomic<bool> draining_{false};
  bool stopped_ = false;
  std::unique_ptr<http::Server> http_;
};

}  // namespace db::server
