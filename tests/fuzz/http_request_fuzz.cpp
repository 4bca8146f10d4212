// Drives db::http::RequestReader the way a connection does (src/http/connection.cpp):
// bytes arrive in pieces, each piece is appended to the input buffer and fed; a finished
// request is taken and routed, and bytes left in the buffer (pipelined requests) are fed
// again before the next piece arrives; an error ends the connection.
//
// Input layout:
//   byte 0     limits: bits 0-1 pick the head limit, bits 2-3 the body limit, bits 4-5 the
//              body budget (small ones, so that 431, 413 and 503 are reached)
//   bytes 1-3  piece sizes, used in turn: 1..255 bytes, 0 = everything left
//   the rest   the bytes the client sends
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "http/body_budget.h"
#include "http/request_reader.h"
#include "http/request_target.h"
#include "http/router.h"

namespace {

using db::http::Request;
using db::http::RequestReader;

constexpr size_t kHeadLimits[] = {64, 512, 4096, 16u << 10};
constexpr size_t kBodyLimits[] = {0, 16, 1024, 1u << 20};
constexpr size_t kBudgets[] = {0, 16, 1024, 0};  // index 0: no budget object at all; 0: no cap

// Records the one response the router gives; the fuzzer checks there is exactly one.
class RecordingResponder : public db::http::Responder {
 public:
  void send(int status, db::http::Headers, std::string) override { statuses.push_back(status); }
  void begin_stream(int status, db::http::Headers) override { statuses.push_back(status); }
  void write(std::string) override {}
  void end() override {}
  bool client_gone() const override { return false; }
  void on_client_gone(std::function<void()>) override {}
  std::vector<int> statuses;
};

int g_guard_calls = 0;  // guard runs for the request being routed

// The server's route shapes: fixed paths, captures, a path with several methods, open
// routes beside guarded ones. The guard refuses DELETE (401) and lets the rest through.
const db::http::Router& router() {
  static const db::http::Router* r = [] {
    auto* out = new db::http::Router([](int, const std::string& msg) { return msg; });
    auto guarded = [](Request&& req, const db::http::PathParams& params, std::shared_ptr<db::http::Responder> res) {
      FUZZ_CHECK(g_guard_calls == 1, "a guarded route runs after the guard");
      for (const auto& [name, value] : params.values) FUZZ_CHECK(!value.empty(), "captures are not empty");
      res->send(200, {}, "");
    };
    auto open = [](Request&&, const db::http::PathParams&, std::shared_ptr<db::http::Responder> res) {
      res->send(200, {}, "");
    };
    for (const char* path : {"/v1/completions", "/v1/chat/completions", "/v1/files", "/v1/batches",
                             "/v1/batches/{id}/cancel"})
      out->add("POST", path, guarded);
    for (const char* path : {"/v1/models", "/v1/files", "/v1/batches", "/v1/files/{id}", "/v1/files/{id}/content",
                             "/v1/batches/{id}"})
      out->add("GET", path, guarded);
    out->add("DELETE", "/v1/files/{id}", guarded);
    out->add("GET", "/health", open, db::http::Access::open);
    out->add("GET", "/metrics", open, db::http::Access::open);
    out->set_guard([](const Request& req, db::http::Responder& res) {
      ++g_guard_calls;
      if (req.method != "DELETE") return true;
      res.send(401, {}, "");
      return false;
    });
    return out;
  }();
  return *r;
}

bool has_control(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

// The normalized path: absolute, decoded, without dot segments; normalizing it again
// (when decoding cannot change it) gives it back.
void check_path(const Request& req) {
  FUZZ_CHECK(!req.path.empty() && req.path.front() == '/', "paths are absolute");
  FUZZ_CHECK(!has_control(req.path), "no control bytes in paths");
  std::string_view rest(req.path);
  while (!rest.empty()) {
    rest.remove_prefix(1);
    const std::string_view segment = rest.substr(0, rest.find('/'));
    FUZZ_CHECK(segment != "." && segment != "..", "no dot segments");
    rest.remove_prefix(segment.size());
  }
  if (req.path.find_first_of("%?#") == std::string::npos) {
    std::string why;
    const auto again = db::http::parse_request_target(req.path, why);
    FUZZ_CHECK(again && again->path == req.path && again->query.empty(), "normalizing is idempotent");
  }
  const size_t q = req.target.find('?');
  if (q != std::string::npos) FUZZ_CHECK(req.target.substr(q + 1) == req.query, "query after the first '?'");
  else FUZZ_CHECK(req.query.empty(), "no query without '?'");
}

void check_request(const Request& req, size_t max_body) {
  FUZZ_CHECK(!req.method.empty(), "a finished request has a method");
  FUZZ_CHECK(req.body.size() <= max_body, "body within the limit");
  check_path(req);
  for (const auto& [name, value] : req.headers) {
    for (char c : name) FUZZ_CHECK(!std::isupper(static_cast<unsigned char>(c)), "header names lower-cased");
    FUZZ_CHECK(value.empty() || (value.front() != ' ' && value.back() != ' '), "header values trimmed");
  }
  if (!req.headers.empty()) {
    const std::string* first = req.header(req.headers.front().first);
    FUZZ_CHECK(first && *first == req.headers.front().second, "header() finds the first value");
  }
}

void route(Request&& req) {
  auto res = std::make_shared<RecordingResponder>();
  g_guard_calls = 0;
  router().dispatch(std::move(req), res);
  FUZZ_CHECK(g_guard_calls <= 1, "the guard runs at most once");
  FUZZ_CHECK(res->statuses.size() == 1, "one response per request");
  const int s = res->statuses.front();
  FUZZ_CHECK(s == 200 || s == 401 || s == 404 || s == 405, "routing answers 200, 401, 404 or 405");
}

// One connection's worth of input; returns when it ends (error or end of input).
void run_connection(RequestReader& reader, const std::string& wire, const uint8_t pieces[3], size_t max_body) {
  std::string inbuf;
  size_t sent = 0;
  for (size_t k = 0; sent < wire.size(); ++k) {
    const size_t piece = pieces[k % 3] == 0 ? wire.size() - sent : pieces[k % 3];
    const size_t n = std::min(piece, wire.size() - sent);
    inbuf.append(wire, sent, n);
    sent += n;
    while (true) {  // one read's worth of input, then any pipelined requests behind it
      const size_t before = inbuf.size();
      const RequestReader::Outcome out = reader.feed(inbuf);
      FUZZ_CHECK(inbuf.size() <= before, "feed only consumes");
      reader.take_continue_request();
      if (out.status == RequestReader::Status::error) {
        const int s = out.http_status;
        FUZZ_CHECK(s == 400 || s == 413 || s == 417 || s == 431 || s == 503, "error statuses");
        FUZZ_CHECK(!out.message.empty(), "errors say what was wrong");
        return;  // the connection answers and closes
      }
      if (out.status != RequestReader::Status::done) {
        if (!inbuf.empty()) FUZZ_CHECK(reader.started(), "buffered bytes mean a started request");
        break;
      }
      FUZZ_CHECK(reader.header_done(), "a finished request has its head");
      reader.keep_alive();
      reader.http10();
      Request req = reader.take("fuzz:0");
      FUZZ_CHECK(!reader.started(), "take() readies the reader for the next request");
      check_request(req, max_body);
      route(std::move(req));
      if (inbuf.empty()) break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  const size_t max_head = kHeadLimits[data[0] & 3];
  const size_t max_body = kBodyLimits[(data[0] >> 2) & 3];
  const size_t budget_pick = (data[0] >> 4) & 3;
  std::shared_ptr<db::http::BodyBudget> budget;
  if (budget_pick != 0) budget = std::make_shared<db::http::BodyBudget>(kBudgets[budget_pick]);
  const uint8_t pieces[3] = {data[1], data[2], data[3]};
  const std::string wire(reinterpret_cast<const char*>(data) + 4, size - 4);
  {
    RequestReader reader(max_head, max_body, budget);
    run_connection(reader, wire, pieces, max_body);
    if (budget && budget->capacity() > 0) FUZZ_CHECK(budget->held() <= budget->capacity(), "budget respected");
  }
  if (budget) FUZZ_CHECK(budget->held() == 0, "every reserved body byte is given back");
  return 0;
}
