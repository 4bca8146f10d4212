// The OpenAI Batch API over HTTP: file uploads (/v1/files...) and batches
// (/v1/batches...) that run on the server's shared engine at background priority,
// through the same crash-safe job as `deepbatch run`.
//
//   POST /v1/files --> FileStore (data_dir/files)
//   POST /v1/batches --> BatchStore (data_dir/batches/<id>/batch.json) --> BatchRunner queue (FIFO)
//   BatchRunner threads (max_concurrent_batches): run_batch_job(journal) --> finalize: split
//   journal into output / error files
//
// HTTP handlers never touch the disk or the engine on the I/O thread: each request is
// handed to the service's own worker thread, which answers through the Responder.
// Files and batches belong to the tenant that created them (http::Request::principal):
// to every other tenant they do not exist (404, absent from lists).
// Everything survives a restart: on construction, batches that were running resume
// from their journals, cancelling ones become cancelled, finalizing ones finish.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "http/router.h"

namespace db {
class Engine;
class ModelBundle;
}  // namespace db

namespace db::server {

class TenantQuotas;

struct BatchServiceOptions {
  std::string data_dir;         // where files, batch state and journals live (created when missing)
  std::string model_name;       // "model" in responses of requests that name none
  int64_t max_context = 0;      // the model's context length in tokens
  TenantQuotas* quotas = nullptr;  // each tenant's limit on queued batch requests (nullptr: none); outlives the service
  size_t max_concurrent_batches = 2;  // batches running at once
};

// One endpoint: what add_routes() hands to the router.
struct BatchRoute {
  std::string method;           // "GET", "POST", "DELETE"
  std::string pattern;          // e.g. "/v1/files/{id}/content"
  http::RouteHandler handler;   // answers on the service's worker thread, never on the caller's
};

class BatchService {
 public:
  // Loads the state under data_dir and resumes running batches. Throws db::Error
  // when data_dir cannot be created or holds unreadable state. `engine` and `bundle`
  // must outlive shutdown() (call it, or destroy the service, before the engine).
  BatchService(Engine& engine, const ModelBundle& bundle, BatchServiceOptions opts);
  ~BatchService();  // shutdown()
  BatchService(const BatchService&) = delete;
  BatchService& operator=(const BatchService&) = delete;

  // Adds /v1/files, /v1/files/{id}, /v1/files/{id}/content, /v1/batches,
  // /v1/batches/{id}, /v1/batches/{id}/cancel.
  void add_routes(http::Router& router);
  // The endpoints add_routes() adds (for callers with a router of their own, and tests).
  std::vector<BatchRoute> routes();
  // Stops the runner (in-flight requests are aborted and will rerun after a
  // restart), flushes the journals and stops the worker. Idempotent.
  void shutdown();
  // Blocks until no batch is queued or running, or `timeout_s` passed; true when idle.
  bool wait_idle(double timeout_s);


 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace db::server
