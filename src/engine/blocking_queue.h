// An unbounded multi-producer queue whose pop() waits for an item.
#pragma once
#include <condition_variable>
#include <deque>
#include <mutex>

namespace db {

template <typename T>
class BlockingQueue {
 public:
  void push(T item) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      items_.push_back(std::move(item));
    }
    cv_.notify_one();
  }
  // Waits until an item is there and takes the oldest.
  T pop() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !items_.empty(); });
    T item = std::move(items_.front());
    items_.pop_front();
    return item;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<T> items_;
};

}  // namespace db
