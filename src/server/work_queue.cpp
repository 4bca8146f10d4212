#include "server/work_queue.h"

#include <algorithm>

namespace db::server {

WorkQueue::WorkQueue(int threads) {
  for (int i = 0; i < std::max(1, threads); ++i) threads_.emplace_back([this] { worker(); });
}

WorkQueue::~WorkQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkQueue::post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

size_t WorkQueue::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tasks_.size();
}

void WorkQueue::worker() {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace db::server
