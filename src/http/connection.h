// One accepted TCP connection: reads and parses requests, hands each to the Handler with
// a Responder, writes the queued response bytes, enforces the timeouts, and notices the
// peer going away. Every member runs on the connection's strand (the socket's executor);
// other threads reach it only through post_* (used by ResponderImpl and the server).
#pragma once
#include <array>
#include <boost/asio/ip/tcp.hpp>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "http/deadline.h"
#include "http/request_reader.h"

namespace db::http {

struct ServerContext;
class ResponderImpl;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // `socket` must be bound to a strand of its own.
  Connection(boost::asio::ip::tcp::socket socket, std::shared_ptr<ServerContext> ctx);
  ~Connection();

  // Starts reading (posts to the strand).
  void post_start();
  // Queues response bytes from `who`; ignored unless `who` is the current response.
  // `final` ends the response; `close_after` closes the connection once it is written.
  void post_response_bytes(std::shared_ptr<ResponderImpl> who, std::string bytes, bool final, bool close_after);
  // Runs `fn` (on the strand) once the bytes queued so far are written, if `who` is
  // still the current response and the connection still open (else drops it).
  void post_on_drained(std::shared_ptr<ResponderImpl> who, std::function<void()> fn);
  // Closes at once (server stop): the current response's client-gone callback runs.
  void post_close();

 private:
  enum class State {
    read_head,  // waiting for (the rest of) a request head
    read_body,  // head parsed, body arriving
    handling,   // request handed to the Handler, response not yet ended
    closing,    // last bytes queued; shut down the sending side once written
    linger,     // sending side shut down; draining input until EOF or timeout
  };

  // Reading and parsing (connection.cpp).
  void start();
  void maybe_read();
  void on_read(const boost::system::error_code& ec, size_t n);
  void on_peer_eof();
  void process_input();
  void dispatch();
  void next_request();
  void arm_read_deadline(double seconds);
  void on_read_deadline();
  void fail(int status, const std::string& message);
  void close();

  // Writing (connection_write.cpp).
  void response_bytes(const std::shared_ptr<ResponderImpl>& who, std::string bytes, bool final, bool close_after);
  void queue(std::string bytes);
  void start_write();
  void on_write(const boost::system::error_code& ec, size_t n);
  void on_output_drained();
  void begin_linger();

  boost::asio::ip::tcp::socket socket_;
  std::shared_ptr<ServerContext> ctx_;
  std::string remote_;                       // "ip:port" of the peer
  Deadline read_deadline_;                   // header / body / idle / linger timeout
  Deadline write_deadline_;                  // write_timeout while bytes are pending
  State state_ = State::read_head;
  bool closed_ = false;                      // socket closed; everything is a no-op
  bool peer_eof_ = false;                    // the peer finished sending (or vanished)
  bool head_deadline_armed_ = false;         // the header timeout runs for the current request

  std::array<char, 16384> rx_;               // target of the one pending read
  bool reading_ = false;                     // a read is pending
  std::string inbuf_;                        // received, not yet parsed bytes
  RequestReader reader_;
  bool keep_alive_ = true;                   // the request in flight allows keep-alive

  std::shared_ptr<ResponderImpl> responder_; // the response in progress (state handling)
  std::deque<std::string> outq_;             // bytes to write, in order
  size_t out_offset_ = 0;                    // bytes of outq_.front() already written
  bool writing_ = false;                     // a write is pending
  std::function<void()> on_drained_;         // the current response's, run when outq_ empties
  std::vector<boost::asio::const_buffer> write_bufs_;
};

}  // namespace db::http
