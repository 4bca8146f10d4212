// One thread running queued tasks in order: where the batch API's handlers do
// their disk work, off the HTTP I/O threads.
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace db::server {

class ApiWorker {
 public:
  ApiWorker();
  ~ApiWorker();  // stop()
  ApiWorker(const ApiWorker&) = delete;
  ApiWorker& operator=(const ApiWorker&) = delete;

  // Queues `task`; false (and nothing queued) once stop() began.
  bool post(std::function<void()> task);
  // Runs what is queued, then joins the thread. Idempotent.
  void stop();

 private:
  void loop();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace db::server
