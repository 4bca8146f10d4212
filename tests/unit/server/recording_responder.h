// An in-memory http::Responder for handler tests: records what a handler sent,
// lets a test wait for the response to end, and can play a client that vanishes.
#pragma once
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "http/responder.h"

namespace db::server::testing {

class RecordingResponder : public http::Responder {
 public:
  void send(int status, http::Headers headers, std::string body) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (gone_ || started_) return;
    started_ = ended_ = true;
    status_ = status;
    headers_ = std::move(headers);
    body_ = std::move(body);
    cv_.notify_all();
  }
  void begin_stream(int status, http::Headers headers) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (gone_ || started_) return;
    started_ = streaming_ = true;
    status_ = status;
    headers_ = std::move(headers);
  }
  void write(std::string chunk) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (gone_ || !streaming_ || ended_ || chunk.empty()) return;
    body_ += chunk;
    ++chunks_;
    cv_.notify_all();
  }
  void end() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (gone_ || !streaming_ || ended_) return;
    ended_ = true;
    cv_.notify_all();
  }
  bool client_gone() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return gone_;
  }
  void on_client_gone(std::function<void()> fn) override {
    bool now = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (gone_)
        now = true;
      else
        on_gone_ = std::move(fn);
    }
    if (now && fn) fn();
  }

  // The client disconnects: later calls are ignored and the callback runs once.
  void disconnect() {
    std::function<void()> fn;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (gone_ || ended_) return;
      gone_ = true;
      fn = std::move(on_gone_);
    }
    cv_.notify_all();
    if (fn) fn();
  }
  // Waits until the response ended (or the client left); false on timeout.
  bool wait_done(double seconds = 60) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return ended_ || gone_; });
  }
  // Waits until at least `n` stream chunks arrived; false on timeout.
  bool wait_chunks(int n, double seconds = 60) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return chunks_ >= n || ended_; });
  }

  int status() const {
    std::lock_guard<std::mutex> l(mu_);
    return status_;
  }
  std::string body() const {
    std::lock_guard<std::mutex> l(mu_);
    return body_;
  }
  bool streamed() const {
    std::lock_guard<std::mutex> l(mu_);
    return streaming_;
  }
  bool ended() const {
    std::lock_guard<std::mutex> l(mu_);
    return ended_;
  }
  std::string header(const std::string& name) const {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& [k, v] : headers_)
      if (k == name) return v;
    return "";
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool started_ = false, streaming_ = false, ended_ = false, gone_ = false;
  int status_ = 0, chunks_ = 0;
  http::Headers headers_;
  std::string body_;
  std::function<void()> on_gone_;
};

}  // namespace db::server::testing
