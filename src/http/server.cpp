#include "http/server.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "http/connection.h"
#include "http/server_context.h"
#include "util/error.h"

namespace db::http {
namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

struct Server::Impl {
  asio::io_context ioc;
  std::shared_ptr<ServerContext> ctx = std::make_shared<ServerContext>();
  asio::strand<asio::io_context::executor_type> accept_strand{asio::make_strand(ioc)};
  tcp::acceptor acceptor{accept_strand};
  asio::steady_timer accept_retry{accept_strand};  // backs off after accept errors (e.g. out of descriptors)
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::vector<std::thread> threads;
  int port = 0;
  std::mutex lifecycle_mu;  // guards started / stopped
  bool started = false;
  bool stopped = false;

  explicit Impl(int io_threads) : ioc(std::max(1, io_threads)) {}

  void listen();
  void do_accept();
  void on_accept(const error_code& ec, tcp::socket socket);
  void close_acceptor();
};

void Server::Impl::listen() {
  const ServerOptions& o = ctx->opts;
  const std::string where = o.host + ":" + std::to_string(o.port);
  error_code ec;
  auto address = asio::ip::make_address(o.host, ec);
  if (ec) throw Error("http server: cannot parse bind address '" + o.host + "': " + ec.message());
  tcp::endpoint endpoint(address, static_cast<unsigned short>(o.port));
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw Error("http server: cannot listen on " + where + ": " + ec.message());
  port = acceptor.local_endpoint().port();
}

void Server::Impl::do_accept() {
  if (!acceptor.is_open()) return;
  acceptor.async_accept(asio::make_strand(ioc), [this](const error_code& ec, tcp::socket socket) {
    on_accept(ec, std::move(socket));
  });
}

void Server::Impl::on_accept(const error_code& ec, tcp::socket socket) {
  if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
  if (ec) {  // e.g. EMFILE: retry shortly instead of spinning
    accept_retry.expires_after(std::chrono::milliseconds(50));
    accept_retry.async_wait([this](const error_code& wait_ec) {
      if (!wait_ec) do_accept();
    });
    return;
  }
  if (ctx->open.load() >= ctx->opts.max_connections) {
    error_code ignored;
    socket.close(ignored);
  } else {
    auto conn = std::make_shared<Connection>(std::move(socket), ctx);
    if (ctx->add(conn)) conn->post_start();
  }
  do_accept();
}

void Server::Impl::close_acceptor() {
  error_code ignored;
  acceptor.close(ignored);
  accept_retry.cancel();
}

Server::Server(ServerOptions opts, Handler handler) : impl_(std::make_unique<Impl>(opts.io_threads)) {
  if (!opts.error_body) throw Error("http server: ServerOptions::error_body is required");
  if (!handler) throw Error("http server: a request handler is required");
  impl_->ctx->body_budget = std::make_shared<BodyBudget>(opts.max_body_bytes_in_flight);
  impl_->ctx->body_spool = std::make_shared<BodySpool>(opts.spool);
  impl_->ctx->opts = std::move(opts);
  impl_->ctx->handler = std::move(handler);
  impl_->listen();
}

Server::~Server() { stop(); }

int Server::port() const { return impl_->port; }

void Server::start() {
  std::lock_guard lock(impl_->lifecycle_mu);
  if (impl_->started || impl_->stopped) return;
  impl_->started = true;
  impl_->work.emplace(impl_->ioc.get_executor());
  asio::post(impl_->accept_strand, [impl = impl_.get()] { impl->do_accept(); });
  const int n = std::max(1, impl_->ctx->opts.io_threads);
  for (int i = 0; i < n; ++i) {
    impl_->threads.emplace_back([impl = impl_.get()] {
      for (;;) {
        try {
          impl->ioc.run();
          return;
        } catch (...) {  // a throwing completion handler must not take the server down
        }
      }
    });
  }
}

void Server::stop_accepting() {
  std::lock_guard lock(impl_->lifecycle_mu);
  if (impl_->stopped) return;
  if (!impl_->started) return impl_->close_acceptor();
  asio::post(impl_->accept_strand, [impl = impl_.get()] { impl->close_acceptor(); });
}

void Server::stop() {
  std::lock_guard lock(impl_->lifecycle_mu);
  if (impl_->stopped) return;
  impl_->stopped = true;
  std::vector<std::shared_ptr<Connection>> open = impl_->ctx->begin_stop();
  if (!impl_->started) {
    impl_->close_acceptor();
    return;
  }
  asio::post(impl_->accept_strand, [impl = impl_.get()] { impl->close_acceptor(); });
  for (auto& c : open) c->post_close();
  open.clear();
  impl_->work.reset();
  for (auto& t : impl_->threads) t.join();
  impl_->threads.clear();
}

size_t Server::open_connections() const { return impl_->ctx->open.load(); }

}  // namespace db::http
