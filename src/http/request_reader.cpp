#include "http/request_reader.h"

#include <algorithm>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <limits>
#include <optional>

#include "util/ascii.h"

namespace db::http {
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

struct RequestReader::ParserBox {
  std::optional<bhttp::request_parser<bhttp::string_body>> parser;
};

namespace {

std::string_view sv(beast::string_view s) { return {s.data(), s.size()}; }

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
  return std::string(s.substr(b, e - b));
}

RequestReader::Outcome error_outcome(int status, std::string message) {
  return {RequestReader::Status::error, status, std::move(message)};
}

RequestReader::Outcome map_parse_error(const beast::error_code& ec, size_t max_header, size_t max_body) {
  if (ec == bhttp::error::header_limit) {
    return error_outcome(431, "request head exceeds " + std::to_string(max_header) + " bytes");
  }
  if (ec == bhttp::error::body_limit) {
    return error_outcome(413, "request body exceeds " + std::to_string(max_body) + " bytes");
  }
  return error_outcome(400, "malformed request: " + ec.message());
}

}  // namespace

RequestReader::RequestReader(size_t max_header_bytes, size_t max_body_bytes, std::shared_ptr<BodyBudget> budget)
    : max_header_bytes_(max_header_bytes),
      max_body_bytes_(max_body_bytes),
      parser_(std::make_unique<ParserBox>()),
      budget_(std::move(budget)),
      lease_(budget_) {
  reset();
}

RequestReader::~RequestReader() = default;

void RequestReader::reset() {
  auto& p = parser_->parser.emplace();
  p.eager(true);
  p.header_limit(static_cast<std::uint32_t>(
      std::min<size_t>(max_header_bytes_, std::numeric_limits<std::uint32_t>::max())));
  p.body_limit(max_body_bytes_);
  started_ = false;
  head_checked_ = false;
  continue_pending_ = false;
  lease_ = BodyLease(budget_);
  target_ = {};
}

bool RequestReader::header_done() const { return parser_->parser->is_header_done(); }

bool RequestReader::take_continue_request() {
  bool pending = continue_pending_;
  continue_pending_ = false;
  return pending;
}

bool RequestReader::keep_alive() const { return parser_->parser->get().keep_alive(); }

bool RequestReader::http10() const { return parser_->parser->get().version() < 11; }

RequestReader::Outcome RequestReader::check_head() {
  head_checked_ = true;
  const auto& msg = parser_->parser->get();
  std::string why;
  std::optional<RequestTarget> target = parse_request_target(sv(msg.target()), why);
  if (!target) return error_outcome(400, "bad request-target '" + std::string(msg.target()) + "': " + why);
  target_ = std::move(*target);
  const size_t hosts = msg.count(bhttp::field::host);
  if (hosts > 1) return error_outcome(400, "more than one Host header");
  if (hosts == 0 && msg.version() >= 11) return error_outcome(400, "an HTTP/1.1 request needs a Host header");
  auto te = msg.find(bhttp::field::transfer_encoding);
  if (te != msg.end()) {
    if (ascii_lower(trim(sv(te->value()))) != "chunked") {
      return error_outcome(400, "unsupported Transfer-Encoding '" + std::string(te->value()) + "' (only chunked)");
    }
    if (msg.find(bhttp::field::content_length) != msg.end()) {
      return error_outcome(400, "both Transfer-Encoding and Content-Length given");
    }
  }
  auto expect = msg.find(bhttp::field::expect);
  if (expect != msg.end()) {
    if (ascii_lower(trim(sv(expect->value()))) != "100-continue") {
      return error_outcome(417, "unsupported Expect '" + std::string(expect->value()) + "'");
    }
    continue_pending_ = msg.version() >= 11 && !parser_->parser->is_done();
  }
  return reserve_body();
}

// Reserves the body's bytes: all of a Content-Length at once, a chunked body as it grows.
RequestReader::Outcome RequestReader::reserve_body() {
  auto& p = *parser_->parser;
  size_t bytes = p.get().body().size();
  if (const auto length = p.content_length()) bytes = std::max<size_t>(bytes, static_cast<size_t>(*length));
  if (lease_.grow_to(bytes)) return {};
  continue_pending_ = false;
  return error_outcome(503, "the server holds too many request bodies at once (" +
                                std::to_string(budget_->capacity()) + " bytes); retry later");
}

RequestReader::Outcome RequestReader::feed(std::string& in) {
  auto& p = *parser_->parser;
  size_t offset = 0;
  Outcome outcome;
  if (!in.empty()) started_ = true;
  while (!p.got_some() && offset < in.size() && (in[offset] == '\r' || in[offset] == '\n')) ++offset;
  while (offset < in.size()) {
    beast::error_code ec;
    size_t n = p.put(boost::asio::const_buffer(in.data() + offset, in.size() - offset), ec);
    offset += n;
    if (ec && ec != bhttp::error::need_more) {
      outcome = map_parse_error(ec, max_header_bytes_, max_body_bytes_);
      break;
    }
    if (p.is_header_done() && !head_checked_) {
      outcome = check_head();
      if (outcome.status == Status::error) break;
    } else if (head_checked_ && p.chunked()) {
      outcome = reserve_body();
      if (outcome.status == Status::error) break;
    }
    if (p.is_done()) {
      outcome.status = Status::done;
      break;
    }
    if (ec == bhttp::error::need_more || n == 0) break;
  }
  in.erase(0, offset);
  return outcome;
}

Request RequestReader::take(std::string remote) {
  auto msg = parser_->parser->release();
  Request req;
  req.method = std::string(msg.method_string());
  req.target = std::string(msg.target());
  req.path = std::move(target_.path);
  req.query = std::move(target_.query);
  for (const auto& field : msg) {
    req.headers.emplace_back(ascii_lower(sv(field.name_string())), trim(sv(field.value())));
  }
  req.body = std::move(msg.body());
  req.remote = std::move(remote);
  req.body_lease = std::move(lease_);
  reset();
  return req;
}

}  // namespace db::http
