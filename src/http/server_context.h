// State shared by the server and its connections: options, the handler and the registry
// of open connections (for stop() and open_connections()). Connections hold it by
// shared_ptr, so it outlives every one of them.
#pragma once
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "http/body_budget.h"
#include "http/server.h"

namespace db::http {

class Connection;

struct ServerContext {
  ServerOptions opts;
  Handler handler;
  std::shared_ptr<BodyBudget> body_budget;                          // shared by every connection's reader
  std::shared_ptr<BodySpool> body_spool;                            // shared by every connection's reader

  std::mutex mu;                                                    // guards conns and stopping
  std::unordered_map<const Connection*, std::weak_ptr<Connection>> conns;  // open connections
  bool stopping = false;                                            // stop() began: register nothing more
  std::atomic<size_t> open{0};                                      // conns.size(), readable without the lock

  // Registers `c`; false once stopping (the caller then drops the socket).
  bool add(const std::shared_ptr<Connection>& c);
  // Unregisters `c` (idempotent).
  void remove(const Connection* c);
  // Sets stopping and returns the connections open at that moment.
  std::vector<std::shared_ptr<Connection>> begin_stop();
};

}  // namespace db::http
