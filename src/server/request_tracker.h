// The generation requests the server is answering, with their engine ids, so that
// a client that disconnects has its engine requests aborted at once (their KV
// blocks return to the pool), and shutdown can wait for them or abort them.
// Thread-safe.
#pragma once
#include <condition_variable>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "engine/engine.h"
#include "http/responder.h"

namespace db::server {

// One open API request (one or more engine requests).
class LiveRequest {
 public:
  bool aborted() const;

 private:
  friend class RequestTracker;
  mutable std::mutex mu_;
  std::vector<RequestId> ids_;  // engine requests submitted for it
  bool aborted_ = false;        // client gone or shutdown: its engine requests were aborted
};

class RequestTracker {
 public:
  explicit RequestTracker(Engine& engine) : engine_(engine) {}

  // Registers a request answered through `res`; a client that goes away aborts it.
  std::shared_ptr<LiveRequest> open(http::Responder& res);
  // Records engine request `id` of `live`; when `live` was aborted meanwhile, aborts `id` too.
  void add_engine_request(LiveRequest& live, RequestId id);
  // Aborts every engine request of `live` (now and as they get added).
  void abort(LiveRequest& live);
  // The response of `live` is complete.
  void close(const std::shared_ptr<LiveRequest>& live);

  size_t open_count() const;
  int64_t client_disconnects() const;
  // Waits until no request is open or `timeout_s` passed; true when none is open.
  bool wait_all_closed(double timeout_s);
  // Aborts every open request (shutdown).
  void abort_all();

 private:
  Engine& engine_;
  mutable std::mutex mu_;
  std::condition_variable closed_cv_;
  std::unordered_map<LiveRequest*, std::shared_ptr<LiveRequest>> open_;
  int64_t disconnects_ = 0;
};

}  // namespace db::server
