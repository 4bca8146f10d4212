// A persistent pool of worker threads for data-parallel kernels. The calling
// thread takes part, so a pool of size 1 spawns no thread.
//
// Work is handed out in chunks that the threads claim one at a time: the caller
// never waits for a worker that has not started (a worker the OS has not
// scheduled simply claims nothing, and the others do its share), only for
// chunks already being run. Idle workers spin briefly, then sleep.
//
// Under a NUMA node layout (--numa replicate: util/numa_nodes.h) worker `tid`
// pins itself when it starts to the CPUs of node slot
// node_slot_of_thread(tid, size(), slots); the caller stays where it runs.
#pragma once
#include <cstdint>
#include <functional>

namespace db {

// `threads` if positive, else one per CPU this process may run on (its affinity:
// taskset, cpusets, --numa; under a node layout, the CPUs of all its nodes), the
// meaning of a thread count of 0.
int resolve_threads(int threads);

class ThreadPool {
 public:
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const;
  // Calls fn(tid, nth) once for each tid in [0, nth = size()), concurrently on
  // up to nth threads; tid 0 runs on the calling thread, the others on whichever
  // thread claims them first (so a tid is a unique slot, e.g. for scratch
  // buffers, not a fixed OS thread). Returns when all calls are done.
  // Not reentrant: fn must not call into the same pool.
  void run(const std::function<void(int tid, int nth)>& fn);
  // Splits [0, n) into size() contiguous ranges of near-equal length and calls
  // fn(begin, end) once for each non-empty range.
  void parallel_for(int64_t n, const std::function<void(int64_t begin, int64_t end)>& fn);
  // Calls fn(chunk) once for each chunk in [0, n_chunks) (n_chunks < 2^23),
  // claimed dynamically by the threads (the caller included) in increasing order.
  void parallel_chunks(int64_t n_chunks, const std::function<void(int64_t chunk)>& fn);

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace db
