// Settings of `deepbatch serve` beyond the engine's.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "server/metric_names.h"
#include "server/tenant_registry.h"

namespace db::server {

struct ServeConfig {
  std::string host = "127.0.0.1";      // address to bind
  int port = 8000;                     // 0: any free port
  std::string api_key;                 // "" = no authentication (unless `tenants` has some)
  std::vector<Tenant> tenants;         // --api-keys: one key per tenant (with a key, api_key must be "")
  std::string model_name;              // the model's id in requests and responses
  int64_t max_context = 0;             // the model's context length (tokens)
  int64_t max_queued_requests = 1024;  // waiting sequences (prompts x n) past which new requests get 429 (0 = no limit)
  int64_t max_choices_per_request = 256;  // prompts x n one request may ask for (else 400; 0 = no limit)
  int io_threads = 2;                  // HTTP event-loop threads
  int prepare_threads = 2;             // threads that tokenize prompts and submit them
  size_t max_body_bytes = 32u << 20;   // larger request bodies get 413
  size_t max_body_bytes_in_flight = 128u << 20;  // request bodies held at once (received, queued, parsing); past it 503
  double header_timeout_s = 10;        // a request head must arrive within this (else 408)
  std::string data_dir;                // Batch API state ("" = no Batch API)
  size_t max_concurrent_batches = 2;   // Batch API batches running at once
  size_t max_upload_bytes = 200u << 20;  // Batch API uploads (POST /v1/files) are written to disk, up to this
  double shutdown_timeout_s = 30;      // on SIGTERM: how long in-flight requests may take before they are aborted
  MetricNaming metric_naming = MetricNaming::Deepbatch;  // --metrics-names: which names /metrics uses
  double machine_read_bandwidth = 0;   // bytes/s the roofline gauge compares decode steps with (0 = unknown)
};

}  // namespace db::server
