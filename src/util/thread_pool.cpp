#include "util/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "util/contention_monitor.h"
#include "util/error.h"
#include "util/numa_nodes.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#if defined(__linux__)
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace db {

int resolve_threads(int threads) {
  if (threads > 0) return threads;
  // Under a node layout (--numa replicate) the calling thread is pinned to one
  // node, while the pool spreads over all of them.
  if (const int placed = node_layout_cpu_count(); placed > 0) return placed;
  // The CPUs this process may run on (taskset, cpusets, a NUMA placement), not
  // every CPU of the machine: more threads than those only take turns.
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

namespace {

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// Blocks while *word == expected (or until a wake-up; callers re-check).
void futex_wait(std::atomic<uint32_t>& word, uint32_t expected) {
#if defined(__linux__)
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
#else
  word.wait(expected, std::memory_order_seq_cst);
#endif
}

void futex_wake(std::atomic<uint32_t>& word, bool all) {
#if defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, all ? INT32_MAX : 1, nullptr, nullptr,
          0);
#else
  if (all)
    word.notify_all();
  else
    word.notify_one();
#endif
}

// Busy-waits (no yielding: a hand-off between kernels of one step takes
// microseconds) until pred() holds or about kSpinIters pauses have passed;
// returns pred(). The budget counts iterations, not wall time, so a waiter that
// the OS preempts does not give up (and go to sleep) while it was not running.
template <class Pred>
bool spin_until(Pred pred) {
  constexpr int kSpinIters = 1 << 14;  // a few hundred microseconds
  for (int i = 0; i < kSpinIters; ++i) {
    if (pred()) return true;
    cpu_relax();
  }
  return pred();
}

int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// CPU time of the calling thread, or -1 where it cannot be read.
int64_t thread_cpu_ns() {
#if defined(__linux__)
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return -1;
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
#else
  return -1;
#endif
}

constexpr int64_t kMaxChunks = int64_t{1} << 23;

// Under a node layout (util/numa_nodes.h) worker `tid` runs on its node's CPUs
// and reads its node's copies. A refusal leaves it where it is, on slot 0,
// which changes where it runs, not what it computes.
void place_worker(int tid, int n_threads) {
  const auto slots = static_cast<int>(node_layout().size());
  if (slots == 0) return;
  try {
    pin_to_node_slot(node_slot_of_thread(tid, n_threads, slots));
  } catch (const Error& e) {
    std::fprintf(stderr, "deepbatch: thread pool worker %d stays unpinned: %s\n", tid, e.what());
  }
}

}  // namespace

// Hand-off protocol:
//  caller: job = fn; done = 0; claim = (n << 32) | first (release); epoch++ -> wakes workers
//  any thread: c = claim.fetch_add(1) (acquire); if low(c) < high(c) it owns chunk
//    low(c) of the current job, runs it and bumps done; otherwise it has nothing to do.
//  caller: claims chunks like the workers, then waits for done == n.
// A successful claim proves the job is still current (the caller cannot finish
// it before that chunk is done), so reading `job` after it is safe. A worker
// that wakes late claims nothing; the caller never waits for it.
// Sleepers announce themselves (sleeping_workers / caller_sleeping) before
// re-checking their condition; the other side reads that flag after its own
// store (all seq_cst), so a wake-up is never lost. The fast path takes no lock
// and makes no system call.
// Regions run on the caller alone while the ContentionMonitor says so.
struct ThreadPool::Impl {
  int n_threads = 1;
  std::vector<std::thread> workers;

  const std::function<void(int64_t)>* job = nullptr;  // the current job; valid while a claim succeeds
  alignas(64) std::atomic<uint64_t> claim{0};          // (chunks << 32) | next chunk to hand out
  alignas(64) std::atomic<uint32_t> done{0};           // chunks of the current job finished
  alignas(64) std::atomic<uint32_t> epoch{0};          // bumped once per job (and by shutdown)
  std::atomic<int> sleeping_workers{0};
  std::atomic<bool> caller_sleeping{false};
  std::atomic<bool> stopping{false};  // set by shutdown() before its bump

  std::mutex error_mu;
  std::exception_ptr error;  // first exception thrown by the current job

  ContentionMonitor monitor;  // used by the caller only
  int64_t slept_ns = 0;       // caller's time asleep in wait_done during the current region

  void run_chunk(uint32_t chunk) {
    try {
      (*job)(chunk);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mu);
      if (!error) error = std::current_exception();
    }
  }

  void finish_chunk(uint32_t n) {
    if (done.fetch_add(1, std::memory_order_seq_cst) + 1 == n && caller_sleeping.load(std::memory_order_seq_cst))
      futex_wake(done, false);
  }

  // Claims and runs chunks of the current job until none is left.
  void work() {
    for (;;) {
      const uint64_t c = claim.fetch_add(1, std::memory_order_acq_rel);
      const auto idx = static_cast<uint32_t>(c), n = static_cast<uint32_t>(c >> 32);
      if (idx >= n) return;
      run_chunk(idx);
      finish_chunk(n);
    }
  }

  void publish(uint32_t n_chunks, uint32_t first) {
    done.store(0, std::memory_order_relaxed);
    claim.store((uint64_t{n_chunks} << 32) | first, std::memory_order_release);
    epoch.fetch_add(1, std::memory_order_seq_cst);
    if (sleeping_workers.load(std::memory_order_seq_cst) > 0) futex_wake(epoch, true);
  }

  void worker_loop() {
    uint32_t seen = 0;
    for (;;) {
      if (!spin_until([&] { return epoch.load(std::memory_order_acquire) != seen; })) {
        sleeping_workers.fetch_add(1, std::memory_order_seq_cst);
        while (epoch.load(std::memory_order_seq_cst) == seen) futex_wait(epoch, seen);
        sleeping_workers.fetch_sub(1, std::memory_order_relaxed);
      }
      seen = epoch.load(std::memory_order_acquire);
      if (stopping.load(std::memory_order_acquire)) return;
      work();
    }
  }

  void wait_done(uint32_t n) {
    auto finished = [&] { return done.load(std::memory_order_acquire) == n; };
    if (spin_until(finished)) return;
    const int64_t t0 = wall_ns();
    caller_sleeping.store(true, std::memory_order_seq_cst);
    for (uint32_t d = done.load(std::memory_order_seq_cst); d != n; d = done.load(std::memory_order_seq_cst))
      futex_wait(done, d);
    caller_sleeping.store(false, std::memory_order_relaxed);
    slept_ns += wall_ns() - t0;
  }

  // Runs every chunk of fn on the calling thread, in order.
  void run_serial(const std::function<void(int64_t)>& fn, int64_t n) {
    for (int64_t c = 0; c < n; ++c) fn(c);
  }

  // Runs chunks [0, n) of fn over the pool; chunk 0 on the caller when caller_first.
  void dispatch(const std::function<void(int64_t)>& fn, int64_t n, bool caller_first) {
    DB_CHECK(n < kMaxChunks, "ThreadPool: " + std::to_string(n) + " chunks exceed the limit");
    const int64_t wall0 = wall_ns();
    if (!monitor.should_sample(wall0)) return run_region(fn, n, caller_first);
    slept_ns = 0;
    const int64_t cpu0 = thread_cpu_ns();
    run_region(fn, n, caller_first);
    const int64_t cpu1 = thread_cpu_ns(), wall1 = wall_ns();
    monitor.add(wall1 - wall0, cpu0 < 0 || cpu1 < 0 ? -1 : cpu1 - cpu0, slept_ns, wall1);
  }

  void run_region(const std::function<void(int64_t)>& fn, int64_t n, bool caller_first) {
    if (!monitor.parallel()) return run_serial(fn, n);
    const auto n32 = static_cast<uint32_t>(n);
    job = &fn;
    error = nullptr;
    publish(n32, caller_first ? 1 : 0);
    if (caller_first) {
      run_chunk(0);
      finish_chunk(n32);
    }
    work();
    wait_done(n32);
    job = nullptr;
    if (error) std::rethrow_exception(error);
  }

  // Wakes every worker with `stopping` set and joins them.
  void shutdown() {
    stopping.store(true, std::memory_order_release);
    epoch.fetch_add(1, std::memory_order_seq_cst);
    futex_wake(epoch, true);
    for (auto& t : workers) t.join();
    workers.clear();
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
    for (int tid = 1; tid < n_threads; ++tid)
      impl_->workers.emplace_back([this, tid, n_threads] {
        place_worker(tid, n_threads);
        impl_->worker_loop();
      });
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
  const int nth = impl_->n_threads;
  if (nth == 1) {
    fn(0, 1);
    return;
  }
  const std::function<void(int64_t)> chunk_fn = [&](int64_t tid) { fn(static_cast<int>(tid), nth); };
  impl_->dispatch(chunk_fn, nth, true);
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t begin, int64_t end)>& fn) {
  if (n <= 0) return;
  const int64_t parts = std::min<int64_t>(n, size());
  if (parts == 1) {
    fn(0, n);
    return;
  }
  const std::function<void(int64_t)> chunk_fn = [&](int64_t c) { fn(n * c / parts, n * (c + 1) / parts); };
  impl_->dispatch(chunk_fn, parts, false);
}

void ThreadPool::parallel_chunks(int64_t n_chunks, const std::function<void(int64_t chunk)>& fn) {
  if (n_chunks <= 0) return;
  if (n_chunks == 1 || size() == 1) {
    for (int64_t c = 0; c < n_chunks; ++c) fn(c);
    return;
  }
  impl_->dispatch(fn, n_chunks, false);
}

}  // namespace db
