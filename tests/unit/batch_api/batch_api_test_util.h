// Helpers for the batch API tests: a scratch directory, and a Responder that
// records the one response it gets.
#pragma once
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>

#include "http/responder.h"

namespace db::test {

// A fresh directory under the system temp dir, removed on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& name);
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

void write_text(const std::string& path, const std::string& text);

// Records a complete response (send) or a streamed one (begin_stream, write*, end).
class RecordingResponder : public http::Responder {
 public:
  void send(int status, http::Headers headers, std::string body) override;
  void begin_stream(int status, http::Headers headers) override;
  void write(std::string chunk) override;
  void end() override;
  bool client_gone() const override { return false; }
  void on_client_gone(std::function<void()> fn) override {}

  // Waits until the response ended; false after `timeout_s`.
  bool wait(double timeout_s = 30);
  int status() const;
  std::string body() const;
  // The value of header `name` (case-insensitive), "" when absent.
  std::string header(const std::string& name) const;
  int responses() const;  // send() / end() calls seen (1 for a correct handler)

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int status_ = 0, responses_ = 0;
  http::Headers headers_;
  std::string body_;
};

}  // namespace db::test
