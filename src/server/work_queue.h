// A few worker threads running queued tasks in order of arrival (the server
// tokenizes prompts here, off the I/O threads). Tasks must not throw.
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace db::server {

class WorkQueue {
 public:
  explicit WorkQueue(int threads);
  ~WorkQueue();  // runs what is queued, then joins
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void post(std::function<void()> task);
  size_t pending() const;  // queued, not yet started

 private:
  void worker();
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace db::server
