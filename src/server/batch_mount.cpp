#include "server/batch_mount.h"

#include "server/batch_api/batch_service.h"

namespace db::server {

namespace {

class BatchApi : public MountedBatchApi {
 public:
  BatchApi(Engine& engine, const ModelBundle& bundle, BatchServiceOptions opts) : service_(engine, bundle, opts) {}
  void add_routes(http::Router& router) { service_.add_routes(router); }
  void shutdown() override { service_.shutdown(); }

 private:
  BatchService service_;
};

}  // namespace

std::unique_ptr<MountedBatchApi> mount_batch_api(Engine& engine, const ModelBundle& bundle, const ServeConfig& config,
                                                 TenantQuotas& quotas, http::Router& router) {
  if (config.data_dir.empty()) return nullptr;
  BatchServiceOptions opts;
  opts.data_dir = config.data_dir;
  opts.model_name = config.model_name;
  opts.max_context = config.max_context;
  opts.quotas = &quotas;
  opts.max_concurrent_batches = config.max_concurrent_batches;
  auto api = std::make_unique<BatchApi>(engine, bundle, std::move(opts));
  api->add_routes(router);
  return api;
}

}  // namespace db::server
