// A Responder that forwards to another and reports the status of the response
// it starts to a client still connected (for the HTTP-requests-by-code metric).
#pragma once
#include <functional>
#include <memory>

#include "http/responder.h"

namespace db::server {

class StatusRecordingResponder : public http::Responder {
 public:
  StatusRecordingResponder(std::shared_ptr<http::Responder> inner, std::function<void(int)> on_status)
      : inner_(std::move(inner)), on_status_(std::move(on_status)) {}

  void send(int status, http::Headers headers, std::string body) override {
    if (!inner_->client_gone()) on_status_(status);
    inner_->send(status, std::move(headers), std::move(body));
  }
  void begin_stream(int status, http::Headers headers) override {
    if (!inner_->client_gone()) on_status_(status);
    inner_->begin_stream(status, std::move(headers));
  }
  void write(std::string chunk) override { inner_->write(std::move(chunk)); }
  void end() override { inner_->end(); }
  bool client_gone() const override { return inner_->client_gone(); }
  void on_client_gone(std::function<void()> fn) override { inner_->on_client_gone(std::move(fn)); }
  void on_drained(std::function<void()> fn) override { inner_->on_drained(std::move(fn)); }

 private:
  std::shared_ptr<http::Responder> inner_;
  std::function<void(int)> on_status_;
};

}  // namespace db::server
