#include "server/batch_api/batch_service.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>

#include "api/api_error.h"
#include "server/batch_api/batch_handlers.h"
#include "server/batch_api/batch_runner.h"
#include "server/batch_api/batch_store.h"
#include "server/batch_api/file_store.h"
#include "server/batch_api/api_worker.h"
#include "util/error.h"

namespace db::server {

namespace fs = std::filesystem;

namespace {

// An exclusive lock on <data_dir>/lock for the life of the service, so that two
// servers never run the same batches. The kernel drops it when the process dies.
class DataDirLock {
 public:
  explicit DataDirLock(const std::string& data_dir) {
    const std::string path = (fs::path(data_dir) / "lock").string();
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error(sys_error(path, "cannot open the data directory lock"));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd_);
      throw Error(data_dir + ": another server is using this data directory");
    }
  }
  ~DataDirLock() { ::close(fd_); }
  DataDirLock(const DataDirLock&) = delete;
  DataDirLock& operator=(const DataDirLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

struct BatchService::Impl {
  Impl(Engine& engine, const ModelBundle& bundle, const BatchServiceOptions& opts)
      : lock(opts.data_dir),
        files((fs::path(opts.data_dir) / "files").string()),
        batches((fs::path(opts.data_dir) / "batches").string()),
        runner(engine, bundle, batches, files, runner_options(opts)),
        handlers(files, batches, runner, opts.quotas) {}

  static BatchRunnerOptions runner_options(const BatchServiceOptions& opts) {
    BatchRunnerOptions r;
    r.model_name = opts.model_name;
    r.max_context = opts.max_context;
    r.max_concurrent = opts.max_concurrent_batches;
    return r;
  }

  // Runs `fn` on the worker thread and sends its reply.
  void answer(std::shared_ptr<http::Responder> res, std::function<HttpReply()> fn) {
    const bool queued = worker.post([res, fn = std::move(fn)] {
      if (res->client_gone()) return;
      HttpReply reply = BatchHandlers::guarded(fn);
      if (reply.file) return stream_file(res, std::move(reply.headers), std::move(reply.file));
      res->send(reply.status, std::move(reply.headers), std::move(reply.body));
    });
    if (!queued) {
      const api::ApiError e("the server is shutting down", "", "shutting_down", 503, "server_error");
      res->send(503, {{"Content-Type", "application/json"}}, api::error_body(e).dump());
    }
  }

  DataDirLock lock;
  FileStore files;
  BatchStore batches;
  BatchRunner runner;
  BatchHandlers handlers;
  ApiWorker worker;
  bool shut_down = false;
};

namespace {

// The captured segment `name` (router.h's PathParams::get, without needing its definition).
std::string path_param(const http::PathParams& params, const std::string& name) {
  for (const auto& [key, value] : params.values)
    if (key == name) return value;
  return "";
}

}  // namespace

BatchService::BatchService(Engine& engine, const ModelBundle& bundle, BatchServiceOptions opts) {
  if (opts.data_dir.empty()) throw Error("the batch API needs a data directory (--data-dir)");
  if (opts.max_context <= 0) throw Error("BatchService: max_context must be positive");
  std::error_code ec;
  fs::create_directories(opts.data_dir, ec);
  if (ec) throw Error(opts.data_dir + ": cannot create the data directory: " + ec.message());
  impl_ = std::make_unique<Impl>(engine, bundle, opts);
  impl_->runner.start();
}

BatchService::~BatchService() { shutdown(); }

void BatchService::shutdown() {
  if (!impl_ || impl_->shut_down) return;
  impl_->shut_down = true;
  impl_->worker.stop();
  impl_->runner.shutdown();
}

bool BatchService::wait_idle(double timeout_s) { return impl_->runner.wait_idle(timeout_s); }

std::vector<BatchRoute> BatchService::routes() {
  Impl* impl = impl_.get();
  // A route whose handler needs the request.
  auto with_request = [impl](HttpReply (BatchHandlers::*method)(const http::Request&)) {
    return [impl, method](http::Request&& req, const http::PathParams&, std::shared_ptr<http::Responder> res) {
      // Shared, since the work is a copyable function; the body's lease goes with it.
      auto held = std::make_shared<http::Request>(std::move(req));
      impl->answer(std::move(res), [impl, method, held] { return (impl->handlers.*method)(*held); });
    };
  };
  // A route whose handler needs the caller's tenant and the {id} segment.
  auto with_id = [impl](HttpReply (BatchHandlers::*method)(const std::string&, const std::string&)) {
    return [impl, method](http::Request&& req, const http::PathParams& params, std::shared_ptr<http::Responder> res) {
      impl->answer(std::move(res), [impl, method, tenant = std::move(req.principal), id = path_param(params, "id")] {
        return (impl->handlers.*method)(tenant, id);
      });
    };
  };
  return {
      {"POST", "/v1/files", with_request(&BatchHandlers::upload_file)},
      {"GET", "/v1/files", with_request(&BatchHandlers::list_files)},
      {"GET", "/v1/files/{id}", with_id(&BatchHandlers::get_file)},
      {"DELETE", "/v1/files/{id}", with_id(&BatchHandlers::delete_file)},
      {"GET", "/v1/files/{id}/content", with_id(&BatchHandlers::file_content)},
      {"POST", "/v1/batches", with_request(&BatchHandlers::create_batch)},
      {"GET", "/v1/batches", with_request(&BatchHandlers::list_batches)},
      {"GET", "/v1/batches/{id}", with_id(&BatchHandlers::get_batch)},
      {"POST", "/v1/batches/{id}/cancel", with_id(&BatchHandlers::cancel_batch)},
  };
}

}  // namespace db::server
