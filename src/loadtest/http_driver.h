// Sends a workload to an OpenAI-compatible server and times every streamed answer,
// on one thread: each request is a coroutine on one io_context (its own connection,
// `stream: true`), so a single process keeps thousands of streams in flight.
//
// Per request (RequestResult): start_time = when the request was sent; ttft = send
// to the first streamed chunk carrying text; itl = the gaps between later text
// chunks; e2e = send to the last one; output tokens from the final `usage` chunk
// (asked for with stream_options.include_usage), else the number of text chunks.
// A non-200 answer fails with error_type "http_<status>", a stream that reports an
// error with "stream_error", a timeout with "timeout", anything else on the
// connection with "connection".
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "loadtest/arrivals.h"
#include "loadtest/latency_stats.h"
#include "loadtest/workload.h"

namespace db::loadtest {

struct Target {
  std::string host = "127.0.0.1";
  std::string port = "8000";
  std::string api_key;           // sent as a bearer token when set
  std::string model;             // the request's "model"
  bool chat = true;              // /v1/chat/completions (else /v1/completions)
  bool ignore_eos = false;       // adds "ignore_eos": true, so outputs run to max_tokens
  double request_timeout_s = 600;
};

// "http://HOST:PORT" (a trailing "/" or "/v1" is allowed); throws db::Error otherwise.
Target parse_target_url(const std::string& url);

// The JSON body sent for `spec` to `target` (chat wraps a text prompt as one user message;
// a chat spec sent to /v1/completions throws db::Error).
std::string request_body(const Target& target, const RequestSpec& spec);

// Live counts, for a progress line.
struct DriveProgress {
  double elapsed_s = 0;
  int64_t sent = 0, finished = 0, failed = 0, in_flight = 0;
};

struct DriveOutcome {
  std::vector<RequestResult> results;  // one per request sent, in send order; times from the run's start
  double send_phase_s = 0;             // from the first send to the last
  double wall_s = 0;                   // until the last answer ended
  double cpu_s = 0;                    // CPU time this process spent meanwhile (user + system)
};

// Sends requests[0], requests[1], ... paced by `arrivals` (open loop: its gaps; closed
// loop: a new request whenever fewer than its concurrency are in flight) until every
// request was sent or `max_send_s` (> 0) passed, then waits for the answers in flight.
// `progress` (optional) is called about once a second.
DriveOutcome drive(const Target& target, const std::vector<RequestSpec>& requests, ArrivalProcess& arrivals,
                   double max_send_s = 0, const std::function<void(const DriveProgress&)>& progress = {});

// GET /v1/models: the first model id the server lists; throws db::Error when it cannot.
std::string first_model_id(const Target& target);

}  // namespace db::loadtest
