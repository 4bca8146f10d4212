// The batch API's endpoints as functions from a request to a complete reply, run on
// the service's worker thread (they read and write the disk). Errors come back as
// OpenAI error replies (api::ApiError's status and body), never as exceptions.
// `tenant` (http::Request::principal) is the caller: another tenant's file or batch
// is answered exactly like a missing one, and lists hold only the caller's own.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "http/request.h"
#include "server/batch_api/batch_runner.h"
#include "server/batch_api/batch_store.h"
#include "server/batch_api/file_stream.h"
#include "server/batch_api/file_store.h"

namespace db::server {

struct HttpReply {
  int status = 200;
  http::Headers headers;  // Content-Type at least
  std::string body;
  std::shared_ptr<OpenFile> file;  // when set: the body is this file's content, streamed (file_stream.h)
};

// "a=1&b=x%20y" -> {{"a","1"},{"b","x y"}} (percent-decoding, '+' as space).
std::vector<std::pair<std::string, std::string>> parse_query(const std::string& query);

class TenantQuotas;

class BatchHandlers {
 public:
  // `quotas`: each tenant's limit on requests in unfinished batches (nullptr: none).
  BatchHandlers(FileStore& files, BatchStore& batches, BatchRunner& runner, TenantQuotas* quotas = nullptr) :
      files_(files), batches_(batches), runner_(runner), quotas_(quotas) {}

  HttpReply upload_file(const http::Request& req);                               // POST /v1/files
  HttpReply list_files(const http::Request& req);                                // GET /v1/files
  HttpReply get_file(const std::string& tenant, const std::string& id);          // GET /v1/files/{id}
  HttpReply file_content(const std::string& tenant, const std::string& id);      // GET /v1/files/{id}/content
  HttpReply delete_file(const std::string& tenant, const std::string& id);       // DELETE /v1/files/{id}
  HttpReply create_batch(const http::Request& req);                              // POST /v1/batches
  HttpReply list_batches(const http::Request& req);                              // GET /v1/batches
  HttpReply get_batch(const std::string& tenant, const std::string& id);         // GET /v1/batches/{id}
  HttpReply cancel_batch(const std::string& tenant, const std::string& id);      // POST /v1/batches/{id}/cancel

  // Runs `fn` and turns ApiError / db::Error / other exceptions into error replies.
  static HttpReply guarded(const std::function<HttpReply()>& fn);

 private:
  // The tenant's file or batch `id`; throws the 404 of a missing one otherwise.
  FileObject file_or_404(const std::string& tenant, const std::string& id) const;
  BatchRecord batch_or_404(const std::string& tenant, const std::string& id) const;
  // Requests not yet answered in the tenant's unfinished batches.
  int64_t queued_batch_requests(const std::string& tenant) const;
  FileStore& files_;
  BatchStore& batches_;
  BatchRunner& runner_;
  TenantQuotas* quotas_;
};

}  // namespace db::server
