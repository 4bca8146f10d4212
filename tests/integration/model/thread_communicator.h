// The ranks of one group as threads of one process, joined by in-process
// collectives (model tests split a model across them without MPI). all_reduce_sum
// adds the ranks' buffers in rank order, so every rank gets bitwise the same sums (as
// MpiCommunicator's do); all_gather and all_to_all_v copy the ranks' bytes in rank
// order. broadcast is not provided.
#pragma once
#include <algorithm>
#include <barrier>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "dist/communicator.h"
#include "util/error.h"

namespace db::test {

struct ThreadGroup {
  explicit ThreadGroup(int n)
      : size(n), barrier(n), buffers(static_cast<size_t>(n)), sent(static_cast<size_t>(n)),
        send_counts(static_cast<size_t>(n)) {}
  int size;
  std::barrier<> barrier;
  std::vector<float*> buffers;
  std::vector<const std::byte*> sent;
  std::vector<const size_t*> send_counts;  // all_to_all_v: each rank's counts
};

class ThreadCommunicator : public dist::Communicator {
 public:
  ThreadCommunicator(ThreadGroup& g, int rank) : g_(g), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return g_.size; }
  void all_reduce_sum(std::span<float> data) override {
    g_.buffers[static_cast<size_t>(rank_)] = data.data();
    g_.barrier.arrive_and_wait();
    sum_.assign(data.size(), 0.0f);
    for (int r = 0; r < g_.size; ++r)
      for (size_t i = 0; i < data.size(); ++i) sum_[i] += g_.buffers[static_cast<size_t>(r)][i];
    g_.barrier.arrive_and_wait();  // every rank has read every buffer
    std::copy(sum_.begin(), sum_.end(), data.begin());
  }
  void all_gather(std::span<const std::byte> send, std::span<std::byte> recv) override {
    g_.sent[static_cast<size_t>(rank_)] = send.data();
    g_.barrier.arrive_and_wait();
    for (int r = 0; r < g_.size; ++r)
      std::copy(g_.sent[static_cast<size_t>(r)], g_.sent[static_cast<size_t>(r)] + send.size(),
                recv.begin() + static_cast<std::ptrdiff_t>(r * send.size()));
    g_.barrier.arrive_and_wait();  // every rank has read every buffer
  }
  void all_to_all_v(std::span<const std::byte> send, std::span<const size_t> send_counts, std::span<std::byte> recv,
                    std::span<const size_t> recv_counts) override {
    g_.sent[static_cast<size_t>(rank_)] = send.data();
    g_.send_counts[static_cast<size_t>(rank_)] = send_counts.data();
    g_.barrier.arrive_and_wait();
    size_t at = 0;
    for (int r = 0; r < g_.size; ++r) {
      const size_t* theirs = g_.send_counts[static_cast<size_t>(r)];
      DB_CHECK(theirs[rank_] == recv_counts[static_cast<size_t>(r)], "all_to_all_v: counts disagree");
      size_t offset = 0;  // rank r's part for this rank
      for (int d = 0; d < rank_; ++d) offset += theirs[d];
      std::copy_n(g_.sent[static_cast<size_t>(r)] + offset, theirs[rank_], recv.begin() + static_cast<std::ptrdiff_t>(at));
      at += theirs[rank_];
    }
    g_.barrier.arrive_and_wait();  // every rank has read every buffer
  }
  void broadcast(std::vector<std::byte>&, int) override { throw Error("ThreadCommunicator: no broadcast"); }
  [[noreturn]] void abort(int) override { std::abort(); }

 private:
  ThreadGroup& g_;
  int rank_;
  std::vector<float> sum_;
};

// Runs body(r) for every rank r < size, each on a thread of its own; returns what each
// rank's body threw ("" for none), by rank.
inline std::vector<std::string> run_ranks(int size, const std::function<void(int)>& body) {
  std::vector<std::string> errors(static_cast<size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      try {
        body(r);
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(r)] = e.what();
      }
    });
  for (std::thread& t : threads) t.join();
  return errors;
}

}  // namespace db::test
