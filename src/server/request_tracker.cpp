#include "server/request_tracker.h"

#include <chrono>

namespace db::server {

bool LiveRequest::aborted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return aborted_;
}

std::shared_ptr<LiveRequest> RequestTracker::open(http::Responder& res) {
  auto live = std::make_shared<LiveRequest>();
  {
    std::lock_guard<std::mutex> lock(mu_);
    open_.emplace(live.get(), live);
  }
  std::weak_ptr<LiveRequest> weak = live;
  res.on_client_gone([this, weak] {
    auto l = weak.lock();
    if (!l) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!open_.count(l.get())) return;  // the response had already ended
      ++disconnects_;
    }
    abort(*l);
  });
  return live;
}

void RequestTracker::add_engine_request(LiveRequest& live, RequestId id) {
  bool abort_now = false;
  {
    std::lock_guard<std::mutex> lock(live.mu_);
    live.ids_.push_back(id);
    abort_now = live.aborted_;
  }
  if (abort_now) engine_.abort(id);
}

void RequestTracker::abort(LiveRequest& live) {
  std::vector<RequestId> ids;
  {
    std::lock_guard<std::mutex> lock(live.mu_);
    if (live.aborted_) return;
    live.aborted_ = true;
    ids = live.ids_;
  }
  for (RequestId id : ids) engine_.abort(id);
}

void RequestTracker::close(const std::shared_ptr<LiveRequest>& live) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    open_.erase(live.get());
  }
  closed_cv_.notify_all();
}

size_t RequestTracker::open_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_.size();
}

int64_t RequestTracker::client_disconnects() const {
  std::lock_guard<std::mutex> lock(mu_);
  return disconnects_;
}

bool RequestTracker::wait_all_closed(double timeout_s) {
  std::unique_lock<std::mutex> lock(mu_);
  return closed_cv_.wait_for(lock, std::chrono::duration<double>(timeout_s), [this] { return open_.empty(); });
}

void RequestTracker::abort_all() {
  std::vector<std::shared_ptr<LiveRequest>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [p, live] : open_) all.push_back(live);
  }
  for (auto& live : all) abort(*live);
}

}  // namespace db::server
