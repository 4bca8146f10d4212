// What the request handlers share: the engine and model, the settings, metrics,
// the live-request tracker and the worker queue that prepares prompts.
#pragma once
#include "bundle/model_bundle.h"
#include "engine/engine.h"
#include "server/request_tracker.h"
#include "server/serve_config.h"
#include "server/server_metrics.h"
#include "server/work_queue.h"

namespace db::server {

struct ServerContext {
  Engine& engine;
  const ModelBundle& bundle;
  const ServeConfig& config;
  ServerMetrics& metrics;
  RequestTracker& tracker;
  WorkQueue& prepare_queue;
};

}  // namespace db::server
