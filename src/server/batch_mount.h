// The Batch API (/v1/files, /v1/batches) mounted on the server's router when a
// data directory is configured.
#pragma once
#include <memory>

#include "http/router.h"
#include "server/serve_config.h"
#include "server/tenant_quotas.h"

namespace db {
class Engine;
class ModelBundle;
}  // namespace db

namespace db::server {

class MountedBatchApi {
 public:
  virtual ~MountedBatchApi() = default;
  // Stops its runners and flushes its journals (graceful shutdown). Idempotent.
  virtual void shutdown() = 0;
};

// nullptr when config.data_dir is empty; otherwise the service with its routes added to `router`.
// `quotas` (each tenant's batch queue) must outlive it.
std::unique_ptr<MountedBatchApi> mount_batch_api(Engine& engine, const ModelBundle& bundle, const ServeConfig& config,
                                                 TenantQuotas& quotas, http::Router& router);

}  // namespace db::server
