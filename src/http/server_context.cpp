#include "http/server_context.h"

namespace db::http {

bool ServerContext::add(const std::shared_ptr<Connection>& c) {
  std::lock_guard lock(mu);
  if (stopping) return false;
  conns.emplace(c.get(), c);
  open.store(conns.size());
  return true;
}

void ServerContext::remove(const Connection* c) {
  std::lock_guard lock(mu);
  conns.erase(c);
  open.store(conns.size());
}

std::vector<std::shared_ptr<Connection>> ServerContext::begin_stop() {
  std::lock_guard lock(mu);
  stopping = true;
  std::vector<std::shared_ptr<Connection>> out;
  out.reserve(conns.size());
  for (auto& [ptr, weak] : conns) {
    if (auto c = weak.lock()) out.push_back(std::move(c));
  }
  return out;
}

}  // namespace db::http
