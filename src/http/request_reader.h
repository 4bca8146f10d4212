// Incremental request parsing: bytes in, one Request out. Wraps Beast's HTTP parser
// (which enforces the head and body size limits and decodes chunked bodies) and adds
// the checks the server needs on the head: the request-target's form (normalized by
// request_target.h), exactly one Host in HTTP/1.1, supported Transfer-Encoding and
// Expect, and the body's bytes reserved in the server's BodyBudget before they are read;
// or, for a request its BodySpool wants, the body written to a file as it arrives.
// Empty lines before a request line are skipped (RFC 9112 section 2.2).
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "http/body_budget.h"
#include "http/body_spool.h"
#include "http/request.h"
#include "http/request_target.h"

namespace db::http {

class RequestReader {
 public:
  enum class Status { need_more, done, error };
  struct Outcome {
    Status status = Status::need_more;
    int http_status = 0;   // for errors: 400, 413, 417, 431, or 503 (the body budget or spool is spent)
    std::string message;   // for errors: what was wrong
  };

  // `budget` may be null (no cap on bodies held at once); `spool` may be null (nothing spooled).
  RequestReader(size_t max_header_bytes, size_t max_body_bytes, std::shared_ptr<BodyBudget> budget = nullptr,
                std::shared_ptr<BodySpool> spool = nullptr);
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
  Outcome reserve_body();
  // The body limit of the current request: the spool's for a spooled body.
  size_t body_limit() const;

  struct ParserBox;
  size_t max_header_bytes_;
  size_t max_body_bytes_;
  std::unique_ptr<ParserBox> parser_;
  std::shared_ptr<BodyBudget> budget_;
  BodyLease lease_;               // the current request's body bytes
  std::shared_ptr<BodySpool> spool_;
  std::shared_ptr<SpooledBody> spooled_;  // the current request's body file, when spooled
  RequestTarget target_;          // the current request's normalized target (valid once the head is checked)
  bool started_ = false;
  bool head_checked_ = false;
  bool continue_pending_ = false;
};

}  // namespace db::http
