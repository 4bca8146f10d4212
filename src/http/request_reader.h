// Incremental request parsing: bytes in, one Request out. Wraps Beast's HTTP parser
// (which enforces the head and body size limits and decodes chunked bodies) and adds
// the checks the server needs on the head (supported Transfer-Encoding, Expect).
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "http/request.h"

namespace db::http {

class RequestReader {
 public:
  enum class Status { need_more, done, error };
  struct Outcome {
    Status status = Status::need_more;
    int http_status = 0;   // for errors: 400, 413, 417 or 431
    std::string message;   // for errors: what was wrong
  };

  RequestReader(size_t max_header_bytes, size_t max_body_bytes);
  ~RequestReader();
  RequestReader(const RequestReader&) = delete;
  RequestReader& operator=(const RequestReader&) = delete;

  // Parses from the front of `in`, erasing what it consumed; stops after one whole request
  // (the rest of `in`, e.g. a pipelined request, stays).
  Outcome feed(std::string& in);
  // True once some byte of the current request was consumed.
  bool started() const { return started_; }
  // True once the current request's head is complete.
  bool header_done() const;
  // True once, right after a head with "Expect: 100-continue" whose body is still to come.
  bool take_continue_request();
  // Valid after Status::done.
  bool keep_alive() const;
  bool http10() const;
  // Moves the finished request out; the reader is then ready for the next one.
  Request take(std::string remote);

 private:
  void reset();
  Outcome check_head();

  struct ParserBox;
  size_t max_header_bytes_;
  size_t max_body_bytes_;
  std::unique_ptr<ParserBox> parser_;
  bool started_ = false;
  bool head_checked_ = false;
  bool continue_pending_ = false;
};

}  // namespace db::http
