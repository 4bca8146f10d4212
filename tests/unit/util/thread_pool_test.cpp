#include "util/thread_pool.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "util/error.h"

namespace db {
namespace {

TEST(ThreadPool, RejectsZeroThreads) { EXPECT_THROW(ThreadPool(0), Error); }

// A thread count of 0 means one per CPU the process may run on: a thread pinned
// to one CPU (as taskset or a NUMA placement would) resolves it to 1.
TEST(ThreadPool, ZeroThreadsMeansTheAllowedCpus) {
  EXPECT_EQ(resolve_threads(3), 3);
  cpu_set_t all;
  ASSERT_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
  EXPECT_EQ(resolve_threads(0), CPU_COUNT(&all));
  int pinned = -1;
  std::thread([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &all)) {
        CPU_SET(c, &one);
        break;
      }
    if (sched_setaffinity(0, sizeof(one), &one) == 0) pinned = resolve_threads(0);
  }).join();
  EXPECT_EQ(pinned, 1);
}

TEST(ThreadPool, RunCallsEveryThreadIdOnce) {
  for (int n : {1, 2, 3, 5}) {
    ThreadPool pool(n);
    ASSERT_EQ(pool.size(), n);
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    std::atomic<int> bad_nth{0};
    pool.run([&](int tid, int nth) {
      if (nth != n) bad_nth.fetch_add(1);
      hits[static_cast<size_t>(tid)].fetch_add(1);
    });
    EXPECT_EQ(bad_nth.load(), 0);
    for (int t = 0; t < n; ++t) EXPECT_EQ(hits[static_cast<size_t>(t)].load(), 1) << "tid " << t << " of " << n;
  }
}

TEST(ThreadPool, CallerIsWorkerZero) {
  ThreadPool pool(3);
  std::thread::id tid0;
  pool.run([&](int tid, int) {
    if (tid == 0) tid0 = std::this_thread::get_id();
  });
  EXPECT_EQ(tid0, std::this_thread::get_id());
}

TEST(ThreadPool, ParallelForCoversEveryIndexOnce) {
  for (int threads : {1, 2, 3, 4, 8}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 2, 3, 7, 8, 100, 1001}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::atomic<int> empty_ranges{0};
      pool.parallel_for(n, [&](int64_t begin, int64_t end) {
        if (begin >= end) empty_ranges.fetch_add(1);
        for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
      });
      EXPECT_EQ(empty_ranges.load(), 0);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "index " << i << " n " << n << " threads " << threads;
    }
  }
}

TEST(ThreadPool, ParallelForRangesAreContiguousAndBalanced) {
  ThreadPool pool(4);
  std::vector<std::pair<int64_t, int64_t>> ranges(4, {-1, -1});
  std::atomic<int> calls{0};
  pool.parallel_for(10, [&](int64_t b, int64_t e) { ranges[static_cast<size_t>(calls.fetch_add(1))] = {b, e}; });
  ASSERT_EQ(calls.load(), 4);
  std::sort(ranges.begin(), ranges.end());
  int64_t next = 0;
  for (const auto& [b, e] : ranges) {
    EXPECT_EQ(b, next);
    EXPECT_TRUE(e - b == 2 || e - b == 3) << b << ".." << e;
    next = e;
  }
  EXPECT_EQ(next, 10);
}

TEST(ThreadPool, ManyRapidCalls) {
  ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  int64_t plain = 0;  // written by thread 0 only, read after run() returns
  constexpr int kCalls = 20000;
  for (int i = 0; i < kCalls; ++i) {
    pool.run([&](int tid, int nth) {
      total.fetch_add(tid + 1, std::memory_order_relaxed);
      if (tid == 0) ++plain;
    });
  }
  EXPECT_EQ(total.load(), int64_t{kCalls} * (1 + 2 + 3));
  EXPECT_EQ(plain, kCalls);
}

TEST(ThreadPool, ResultsWrittenByWorkersAreVisibleAfterRun) {
  ThreadPool pool(4);
  std::vector<int64_t> out(4000, 0);  // plain memory: run() must publish the workers' writes
  for (int round = 1; round <= 200; ++round) {
    pool.parallel_for(static_cast<int64_t>(out.size()), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) out[static_cast<size_t>(i)] += i * round;
    });
  }
  for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], static_cast<int64_t>(i) * 200 * 201 / 2);
}

TEST(ThreadPool, WakesWorkersAfterTheyFellAsleep) {
  ThreadPool pool(3);
  for (int i = 0; i < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past the spin budget
    std::atomic<int> hits{0};
    pool.run([&](int, int) { hits.fetch_add(1); });
    EXPECT_EQ(hits.load(), 3);
  }
}

TEST(ThreadPool, PropagatesExceptionsAndStaysUsable) {
  ThreadPool pool(3);
  EXPECT_THROW(pool.run([](int tid, int) {
    if (tid == 2) throw std::runtime_error("boom");
  }),
               std::runtime_error);
  std::atomic<int> hits{0};
  pool.run([&](int, int) { hits.fetch_add(1); });
  EXPECT_EQ(hits.load(), 3);
}

TEST(ThreadPool, ParallelChunksRunsEveryChunkOnce) {
  for (int threads : {1, 2, 3, 4}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 2, 5, 64, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      pool.parallel_chunks(n, [&](int64_t c) { hits[static_cast<size_t>(c)].fetch_add(1); });
      for (int64_t c = 0; c < n; ++c)
        ASSERT_EQ(hits[static_cast<size_t>(c)].load(), 1) << "chunk " << c << " n " << n << " threads " << threads;
    }
  }
}

TEST(ThreadPool, ManyRapidParallelChunkCalls) {
  ThreadPool pool(2);
  std::vector<int64_t> out(64, 0);  // plain memory, each element written by one chunk per call
  constexpr int kCalls = 20000;
  for (int i = 0; i < kCalls; ++i) pool.parallel_chunks(64, [&](int64_t c) { out[static_cast<size_t>(c)] += c; });
  for (size_t c = 0; c < out.size(); ++c) ASSERT_EQ(out[c], static_cast<int64_t>(c) * kCalls);
}

TEST(ThreadPool, ParallelChunksPropagatesExceptions) {
  ThreadPool pool(3);
  std::atomic<int> ran{0};
  EXPECT_THROW(pool.parallel_chunks(10,
                                    [&](int64_t c) {
                                      ran.fetch_add(1);
                                      if (c == 7) throw std::runtime_error("boom");
                                    }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 10);  // the other chunks still ran
  std::atomic<int> hits{0};
  pool.parallel_chunks(5, [&](int64_t) { hits.fetch_add(1); });
  EXPECT_EQ(hits.load(), 5);
}

// A chunk that blocks one thread for a long time: the other chunks go to the
// threads that are free (nobody waits for the blocked one to come back for them).
TEST(ThreadPool, FreeThreadsTakeTheRemainingChunks) {
  ThreadPool pool(2);
  std::atomic<int> done{0};
  const auto start = std::chrono::steady_clock::now();
  pool.parallel_chunks(50, [&](int64_t c) {
    if (c == 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    done.fetch_add(1);
  });
  EXPECT_EQ(done.load(), 50);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(ThreadPool, DestroysPromptlyWhenIdle) {
  for (int i = 0; i < 50; ++i) {
    ThreadPool pool(4);
    pool.run([](int, int) {});
  }
}

}  // namespace
}  // namespace db
