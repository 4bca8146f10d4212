// What the request handlers share: the engine and model, the settings, metrics,
// the live-request tracker, the worker queue that prepares prompts, and the
// tenants with their quotas (the tenant of a request is its http::Request::principal).
#pragma once
#include "bundle/model_bundle.h"
#include "engine/engine.h"
#include "server/request_tracker.h"
#include "server/serve_config.h"
#include "server/server_metrics.h"
#include "server/tenant_quotas.h"
#include "server/tenant_registry.h"
#include "server/work_queue.h"

namespace db::server {

struct ServerContext {
  Engine& engine;
  const ModelBundle& bundle;
  const ServeConfig& config;
  ServerMetrics& metrics;
  RequestTracker& tracker;
  WorkQueue& prepare_queue;
  const TenantRegistry& tenants;
  TenantQuotas& quotas;
};

}  // namespace db::server
