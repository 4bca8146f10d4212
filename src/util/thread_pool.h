// A persistent pool of worker threads for data-parallel kernels. The calling
// thread takes part as worker 0, so a pool of size 1 spawns no thread.
#pragma once
#include <cstdint>
#include <functional>

namespace db {

class ThreadPool {
 public:
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const;
  // Runs fn(tid, nth) once on each of the nth = size() threads; returns when all are done.
  // Not reentrant: fn must not call run() on the same pool.
  void run(const std::function<void(int tid, int nth)>& fn);
  // Splits [0, n) into contiguous ranges, one per thread, and runs fn(begin, end) on each.
  void parallel_for(int64_t n, const std::function<void(int64_t begin, int64_t end)>& fn);

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace db
