#include "http/request_reader.h"

#include <algorithm>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <limits>
#include <optional>

#include "util/ascii.h"
#include "util/error.h"

namespace db::http {
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

namespace {

// A Beast body held in memory, or appended to a SpooledBody when one is set before
// the body's first byte.
struct SpoolableBody {
  struct value_type {
    std::string text;
    SpooledBody* file = nullptr;
  };

  class reader {
   public:
    template <bool isRequest, class Fields>
    reader(bhttp::header<isRequest, Fields>&, value_type& body) : body_(body) {}
    void init(const boost::optional<std::uint64_t>& length, beast::error_code& ec) {
      if (!body_.file && length) body_.text.reserve(static_cast<size_t>(*length));  // within the checked limit
      ec = {};
    }
    template <class ConstBufferSequence>
    std::size_t put(const ConstBufferSequence& buffers, beast::error_code& ec) {
      size_t n = 0;
      try {
        for (auto it = boost::asio::buffer_sequence_begin(buffers); it != boost::asio::buffer_sequence_end(buffers);
             ++it) {
          const boost::asio::const_buffer b = *it;
          const char* data = static_cast<const char*>(b.data());
          if (body_.file)
            body_.file->append(data, b.size());
          else
            body_.text.append(data, b.size());
          n += b.size();
        }
      } catch (const Error&) {
        ec = boost::system::errc::make_error_code(boost::system::errc::io_error);
        return n;
      }
      ec = {};
      return n;
    }
    void finish(beast::error_code& ec) { ec = {}; }

   private:
    value_type& body_;
  };
};

}  // namespace

struct RequestReader::ParserBox {
  std::optional<bhttp::request_parser<SpoolableBody>> parser;
};

namespace {

std::string_view sv(beast::string_view s) { return {s.data(), s.size()}; }

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
  return std::string(s.substr(b, e - b));
}

// The head of a request, without its body: what a BodySpool decides by.
template <class Message>
Request head_of(const Message& msg, const RequestTarget& target) {
  Request head;
  head.method = std::string(msg.method_string());
  head.target = std::string(msg.target());
  head.path = target.path;
  head.query = target.query;
  for (const auto& field : msg) head.headers.emplace_back(ascii_lower(sv(field.name_string())), trim(sv(field.value())));
  return head;
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
  if (ec == boost::system::errc::io_error) return error_outcome(500, "the server cannot store the request body");
  return error_outcome(400, "malformed request: " + ec.message());
}

}  // namespace

RequestReader::RequestReader(size_t max_header_bytes, size_t max_body_bytes, std::shared_ptr<BodyBudget> budget,
                             std::shared_ptr<BodySpool> spool)
    : max_header_bytes_(max_header_bytes),
      max_body_bytes_(max_body_bytes),
      parser_(std::make_unique<ParserBox>()),
      budget_(std::move(budget)),
      lease_(budget_),
      spool_(std::move(spool)) {
  reset();
}

RequestReader::~RequestReader() = default;

void RequestReader::reset() {
  auto& p = parser_->parser.emplace();
  p.eager(false);  // stop after the head: check_head decides where the body goes, then parsing goes on eagerly
  p.header_limit(static_cast<std::uint32_t>(
      std::min<size_t>(max_header_bytes_, std::numeric_limits<std::uint32_t>::max())));
  // Beast checks a Content-Length against this before check_head runs; the limit of
  // the request at hand (body_limit()) is checked there and as a chunked body grows.
  p.body_limit(spool_ ? std::max(max_body_bytes_, spool_->options().max_bytes) : max_body_bytes_);
  spooled_.reset();
  started_ = false;
  head_checked_ = false;
  continue_pending_ = false;
  lease_ = BodyLease(budget_);
  target_ = {};
}

bool RequestReader::header_done() const { return parser_->parser->is_header_done(); }

size_t RequestReader::body_limit() const { return spooled_ ? spool_->options().max_bytes : max_body_bytes_; }

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
  if (spool_ && spool_->wants(head_of(msg, target_))) {
    try {
      spooled_ = spool_->open();
    } catch (const Error&) {
      return error_outcome(500, "the server cannot store the request body");
    }
    if (!spooled_) {
      continue_pending_ = false;
      return error_outcome(503, "the server is storing too many uploads at once; retry later");
    }
    parser_->parser->get().body().file = spooled_.get();
  }
  parser_->parser->eager(true);
  return reserve_body();
}

// Checks the body against its limit and reserves an in-memory body's bytes: all of a
// Content-Length at once, a chunked body as it grows.
RequestReader::Outcome RequestReader::reserve_body() {
  auto& p = *parser_->parser;
  size_t bytes = spooled_ ? spooled_->size() : p.get().body().text.size();
  if (const auto length = p.content_length()) bytes = std::max<size_t>(bytes, static_cast<size_t>(*length));
  if (bytes > body_limit()) {
    continue_pending_ = false;
    return error_outcome(413, "request body exceeds " + std::to_string(body_limit()) + " bytes");
  }
  if (spooled_ || lease_.grow_to(bytes)) return {};
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
      outcome = map_parse_error(ec, max_header_bytes_, body_limit());
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
  req.body = std::move(msg.body().text);
  if (spooled_) {
    spooled_->close();
    req.body_file = std::move(spooled_);
  }
  req.remote = std::move(remote);
  req.body_lease = std::move(lease_);
  reset();
  return req;
}

}  // namespace db::http
