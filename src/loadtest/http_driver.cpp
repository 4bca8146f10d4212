#include "loadtest/http_driver.h"

#include <sys/resource.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>

#include "util/error.h"

namespace db::loadtest {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::awaitable;
using asio::use_awaitable;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

namespace {

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// Server-sent events of one streamed answer, fed as the body arrives.
class StreamTimer {
 public:
  StreamTimer(RequestResult& r, Clock::time_point sent) : r_(r), sent_(sent) {}

  void feed(std::string_view bytes) {
    pending_.append(bytes);
    for (size_t end; (end = pending_.find("\n\n")) != std::string::npos;) {
      event(std::string_view(pending_).substr(0, end));
      pending_.erase(0, end + 2);
    }
  }
  // After the body ended: whether the stream was a success.
  void finish() {
    if (!r_.error_type.empty()) return;
    if (text_chunks_ == 0 && !done_) {
      r_.error_type = "stream_error";
      return;
    }
    r_.ok = true;
    if (r_.output_tokens == 0) r_.output_tokens = text_chunks_;
  }

 private:
  void event(std::string_view ev) {
    for (size_t pos = 0; pos < ev.size();) {
      size_t eol = ev.find('\n', pos);
      if (eol == std::string_view::npos) eol = ev.size();
      const std::string_view line = ev.substr(pos, eol - pos);
      pos = eol + 1;
      if (line.rfind("data:", 0) != 0) continue;
      std::string_view data = line.substr(5);
      while (!data.empty() && data.front() == ' ') data.remove_prefix(1);
      if (data == "[DONE]") {
        done_ = true;
        continue;
      }
      const json j = json::parse(data, nullptr, false);
      if (j.is_discarded()) continue;
      if (j.contains("error")) r_.error_type = "stream_error";
      if (j.contains("usage") && j["usage"].is_object()) {
        r_.output_tokens = j["usage"].value("completion_tokens", r_.output_tokens);
        r_.input_tokens = j["usage"].value("prompt_tokens", r_.input_tokens);
      }
      if (has_text(j)) text_chunk();
    }
  }
  static bool has_text(const json& j) {
    if (!j.contains("choices") || !j["choices"].is_array()) return false;
    for (const json& c : j["choices"]) {
      if (c.contains("text") && c["text"].is_string() && !c["text"].get_ref<const std::string&>().empty()) return true;
      if (c.contains("delta") && c["delta"].is_object()) {
        const json& d = c["delta"];
        for (const char* k : {"content", "reasoning_content"})
          if (d.contains(k) && d[k].is_string() && !d[k].get_ref<const std::string&>().empty()) return true;
      }
    }
    return false;
  }
  void text_chunk() {
    const Clock::time_point now = Clock::now();
    if (text_chunks_ == 0) {
      r_.ttft = seconds_between(sent_, now);
    } else {
      r_.itl.push_back(seconds_between(last_, now));
    }
    r_.e2e = seconds_between(sent_, now);
    last_ = now;
    ++text_chunks_;
  }

  RequestResult& r_;
  Clock::time_point sent_, last_;
  std::string pending_;
  int32_t text_chunks_ = 0;
  bool done_ = false;
};

struct Run {
  Run(const Target& t, const std::vector<RequestSpec>& reqs) : target(t), requests(reqs) {}

  const Target& target;
  const std::vector<RequestSpec>& requests;
  asio::io_context io;
  tcp::resolver::results_type endpoints;
  Clock::time_point start;
  std::vector<RequestResult> results;
  size_t next = 0;  // the next request to send
  int64_t in_flight = 0, finished = 0, failed = 0;
  bool sending_done = false;
  Clock::time_point last_send;

  std::string path() const { return target.chat ? "/v1/chat/completions" : "/v1/completions"; }

  awaitable<void> one(size_t index) {
    RequestResult& r = results[index];
    const std::string body = request_body(target, requests[index]);
    r.input_tokens = requests[index].prompt_tokens;
    try {
      beast::tcp_stream stream(co_await asio::this_coro::executor);
      stream.expires_after(std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(target.request_timeout_s)));
      const Clock::time_point sent = Clock::now();
      r.start_time = seconds_between(start, sent);
      co_await stream.async_connect(endpoints, use_awaitable);
      http::request<http::string_body> req{http::verb::post, path(), 11};
      req.set(http::field::host, target.host);
      req.set(http::field::content_type, "application/json");
      if (!target.api_key.empty()) req.set(http::field::authorization, "Bearer " + target.api_key);
      req.body() = body;
      req.prepare_payload();
      co_await http::async_write(stream, req, use_awaitable);

      beast::flat_buffer buf;
      http::response_parser<http::string_body> parser;
      parser.body_limit(boost::none);
      StreamTimer timer(r, sent);
      auto on_chunk = [&timer](std::uint64_t, beast::string_view bytes, beast::error_code&) {
        timer.feed(std::string_view(bytes.data(), bytes.size()));
        return bytes.size();
      };
      parser.on_chunk_body(on_chunk);
      co_await http::async_read_header(stream, buf, parser, use_awaitable);
      const unsigned status = parser.get().result_int();
      while (!parser.is_done()) co_await http::async_read_some(stream, buf, parser, use_awaitable);
      if (status != 200) {
        r.error_type = "http_" + std::to_string(status);
      } else {
        if (!parser.chunked()) timer.feed(parser.get().body());  // a body sent whole (or until close)
        timer.feed("\n\n");
        timer.finish();
      }
      beast::error_code ignored;
      stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    } catch (const boost::system::system_error& e) {
      r.ok = false;
      r.error_type = e.code() == beast::error::timeout ? "timeout" : "connection";
    } catch (const std::exception&) {
      r.ok = false;
      if (r.error_type.empty()) r.error_type = "connection";
    }
    if (!r.ok && r.error_type.empty()) r.error_type = "stream_error";
    --in_flight;
    ++finished;
    failed += r.ok ? 0 : 1;
  }

  void send(size_t index) {
    ++in_flight;
    last_send = Clock::now();
    asio::co_spawn(io, one(index), asio::detached);
  }

  awaitable<void> open_loop(ArrivalProcess& arrivals, double max_send_s) {
    asio::steady_timer timer(io);
    Clock::time_point at = start;
    while (next < requests.size()) {
      if (next > 0) at += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(arrivals.next_gap()));
      if (max_send_s > 0 && seconds_between(start, at) > max_send_s) break;
      timer.expires_at(at);
      co_await timer.async_wait(use_awaitable);
      send(next++);
    }
    sending_done = true;
  }

  awaitable<void> closed_loop_worker(double max_send_s) {
    while (next < requests.size() && (max_send_s <= 0 || seconds_between(start, Clock::now()) <= max_send_s)) {
      const size_t index = next++;
      ++in_flight;
      last_send = Clock::now();
      co_await one(index);
    }
  }

  awaitable<void> report(const std::function<void(const DriveProgress&)>& progress) {
    asio::steady_timer timer(io);
    while (!(sending_done && in_flight == 0)) {
      timer.expires_after(std::chrono::seconds(1));
      co_await timer.async_wait(use_awaitable);
      progress({seconds_between(start, Clock::now()), int64_t(next), finished, failed, in_flight});
    }
  }
};

}  // namespace

Target parse_target_url(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) throw Error("--url: expected http://HOST:PORT, got '" + url + "'");
  std::string rest = url.substr(scheme.size());
  for (const std::string tail : {"/v1/", "/v1", "/"})
    if (rest.size() > tail.size() && rest.compare(rest.size() - tail.size(), tail.size(), tail) == 0)
      rest.erase(rest.size() - tail.size());
  const size_t colon = rest.rfind(':');
  Target t;
  t.host = colon == std::string::npos ? rest : rest.substr(0, colon);
  t.port = colon == std::string::npos ? "80" : rest.substr(colon + 1);
  if (t.host.empty() || t.port.empty() || t.port.find_first_not_of("0123456789") != std::string::npos ||
      rest.find('/') != std::string::npos)
    throw Error("--url: expected http://HOST:PORT, got '" + url + "'");
  return t;
}

std::string request_body(const Target& target, const RequestSpec& spec) {
  json body = {{"model", target.model}, {"max_tokens", spec.max_tokens}, {"stream", true},
               {"stream_options", {{"include_usage", true}}}};
  if (target.ignore_eos) body["ignore_eos"] = true;
  if (target.chat) {
    body["messages"] = spec.is_chat() ? spec.messages : json::array({{{"role", "user"}, {"content", spec.prompt}}});
  } else {
    if (spec.is_chat()) throw Error("a chat request (messages) cannot be sent to /v1/completions; use chat");
    body["prompt"] = spec.prompt;
  }
  return body.dump();
}

DriveOutcome drive(const Target& target, const std::vector<RequestSpec>& requests, ArrivalProcess& arrivals,
                   double max_send_s, const std::function<void(const DriveProgress&)>& progress) {
  Run run(target, requests);
  run.results.resize(requests.size());
  tcp::resolver resolver(run.io);
  try {
    run.endpoints = resolver.resolve(target.host, target.port);
  } catch (const std::exception& e) {
    throw Error("cannot resolve " + target.host + ":" + target.port + ": " + e.what());
  }
  const double cpu0 = process_cpu_seconds();
  run.start = run.last_send = Clock::now();
  if (arrivals.closed_loop()) {
    const int32_t workers = arrivals.concurrency();
    auto remaining = std::make_shared<int32_t>(workers);
    for (int32_t w = 0; w < workers; ++w)
      asio::co_spawn(run.io, run.closed_loop_worker(max_send_s), [&run, remaining](std::exception_ptr) {
        if (--*remaining == 0) run.sending_done = true;
      });
  } else {
    asio::co_spawn(run.io, run.open_loop(arrivals, max_send_s), asio::detached);
  }
  if (progress) asio::co_spawn(run.io, run.report(progress), asio::detached);
  run.io.run();
  const Clock::time_point end = Clock::now();
  DriveOutcome out;
  run.results.resize(run.next);  // requests never sent (the send phase ended first)
  out.results = std::move(run.results);
  out.send_phase_s = seconds_between(run.start, run.last_send);
  out.wall_s = seconds_between(run.start, end);
  out.cpu_s = process_cpu_seconds() - cpu0;
  return out;
}

std::string first_model_id(const Target& target) {
  asio::io_context io;
  tcp::resolver resolver(io);
  beast::tcp_stream stream(io);
  try {
    stream.expires_after(std::chrono::seconds(30));
    stream.connect(resolver.resolve(target.host, target.port));
    http::request<http::empty_body> req{http::verb::get, "/v1/models", 11};
    req.set(http::field::host, target.host);
    if (!target.api_key.empty()) req.set(http::field::authorization, "Bearer " + target.api_key);
    http::write(stream, req);
    beast::flat_buffer buf;
    http::response<http::string_body> res;
    http::read(stream, buf, res);
    if (res.result_int() != 200) throw Error("GET /v1/models answered " + std::to_string(res.result_int()));
    const json j = json::parse(res.body());
    return j.at("data").at(0).at("id").get<std::string>();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("cannot read the model id from " + target.host + ":" + target.port + "/v1/models: " + e.what() +
                "; pass --model");
  }
}

}  // namespace db::loadtest
