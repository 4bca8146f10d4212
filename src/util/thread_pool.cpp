#include "util/thread_pool.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "util/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace db {

namespace {

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// Waits for pred() without sleeping: first a short busy spin (a hand-off in a
// tight loop of kernels takes well under that), then yielding the CPU (so that
// an oversubscribed machine can run the thread being waited for) until the
// budget runs out. Returns pred(); the caller then blocks.
template <class Pred>
bool spin_until(Pred pred) {
  constexpr auto kSpin = std::chrono::microseconds(20);
  constexpr auto kBudget = std::chrono::microseconds(200);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 1;; ++i) {
    if (pred()) return true;
    if ((i & 63) != 0) {
      cpu_relax();
      continue;
    }
    const auto waited = std::chrono::steady_clock::now() - start;
    if (waited > kBudget) return pred();
    if (waited > kSpin) std::this_thread::yield();
  }
}

}  // namespace

// Hand-off protocol:
//  caller: job = &fn; pending = n-1; generation++        -> workers run job
//  worker: sees the new generation (acquire), runs job, pending--
//  caller: runs its share as worker 0, waits for pending == 0 (acquire).
// A waiter that gives up spinning sleeps on a condition variable after
// announcing itself (sleeping_workers / caller_sleeping); the publisher reads
// that flag after its own store (all seq_cst, so one of the two sees the
// other's write) and only then takes the mutex to notify. The fast path takes
// no lock.
struct ThreadPool::Impl {
  int n_threads = 1;
  std::vector<std::thread> workers;

  const std::function<void(int, int)>* job = nullptr;  // valid while a run() is in flight
  alignas(64) std::atomic<uint64_t> generation{0};     // bumped once per run() (and by shutdown)
  alignas(64) std::atomic<int> pending{0};             // workers still running the current job
  std::atomic<bool> stopping{false};                   // set by shutdown() before its bump

  std::mutex wake_mu;
  std::condition_variable wake_cv;
  std::atomic<int> sleeping_workers{0};

  std::mutex done_mu;
  std::condition_variable done_cv;
  std::atomic<bool> caller_sleeping{false};

  std::mutex error_mu;
  std::exception_ptr error;  // first exception thrown by fn in the current run()

  void run_job(int tid) {
    try {
      (*job)(tid, n_threads);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mu);
      if (!error) error = std::current_exception();
    }
  }

  void publish() {
    generation.fetch_add(1, std::memory_order_seq_cst);
    if (sleeping_workers.load(std::memory_order_seq_cst) > 0) {
      std::lock_guard<std::mutex> lock(wake_mu);
      wake_cv.notify_all();
    }
  }

  void worker_loop(int tid) {
    uint64_t seen = 0;
    for (;;) {
      auto changed = [&] { return generation.load(std::memory_order_acquire) != seen; };
      if (!spin_until(changed)) {
        std::unique_lock<std::mutex> lock(wake_mu);
        sleeping_workers.fetch_add(1, std::memory_order_seq_cst);
        wake_cv.wait(lock, [&] { return generation.load(std::memory_order_seq_cst) != seen; });
        sleeping_workers.fetch_sub(1, std::memory_order_relaxed);
      }
      seen = generation.load(std::memory_order_acquire);
      if (stopping.load(std::memory_order_acquire)) return;
      run_job(tid);
      if (pending.fetch_sub(1, std::memory_order_seq_cst) == 1) {
        if (caller_sleeping.load(std::memory_order_seq_cst)) {
          std::lock_guard<std::mutex> lock(done_mu);
          done_cv.notify_one();
        }
      }
    }
  }

  // Wakes every worker with `stopping` set and joins them.
  void shutdown() {
    stopping.store(true, std::memory_order_release);
    publish();
    for (auto& t : workers) t.join();
    workers.clear();
  }

  void wait_done() {
    auto done = [&] { return pending.load(std::memory_order_acquire) == 0; };
    if (spin_until(done)) return;
    std::unique_lock<std::mutex> lock(done_mu);
    caller_sleeping.store(true, std::memory_order_seq_cst);
    done_cv.wait(lock, [&] { return pending.load(std::memory_order_seq_cst) == 0; });
    caller_sleeping.store(false, std::memory_order_relaxed);
  }
};

ThreadPool::ThreadPool(int n_threads) : impl_(new Impl) {
  if (n_threads < 1) {
    delete impl_;
    throw Error("ThreadPool needs at least 1 thread, got " + std::to_string(n_threads));
  }
  impl_->n_threads = n_threads;
  impl_->workers.reserve(static_cast<size_t>(n_threads - 1));
  try {
    for (int tid = 1; tid < n_threads; ++tid) impl_->workers.emplace_back([this, tid] { impl_->worker_loop(tid); });
  } catch (const std::exception& e) {
    const size_t started = impl_->workers.size();
    impl_->shutdown();
    delete impl_;
    throw Error("ThreadPool could not start thread " + std::to_string(started + 1) + " of " +
                std::to_string(n_threads) + ": " + e.what());
  }
}

ThreadPool::~ThreadPool() {
  impl_->shutdown();
  delete impl_;
}

int ThreadPool::size() const { return impl_->n_threads; }

void ThreadPool::run(const std::function<void(int tid, int nth)>& fn) {
  Impl& p = *impl_;
  if (p.n_threads == 1) {
    fn(0, 1);
    return;
  }
  p.job = &fn;
  p.error = nullptr;
  p.pending.store(p.n_threads - 1, std::memory_order_relaxed);
  p.publish();
  p.run_job(0);
  p.wait_done();
  p.job = nullptr;
  if (p.error) std::rethrow_exception(p.error);
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t begin, int64_t end)>& fn) {
  if (n <= 0) return;
  const int nth = size();
  if (nth == 1 || n == 1) {
    fn(0, n);
    return;
  }
  run([&](int tid, int nth_) {
    const int64_t begin = n * tid / nth_;
    const int64_t end = n * (tid + 1) / nth_;
    if (begin < end) fn(begin, end);
  });
}

}  // namespace db
