#include "util/unrecoverable.h"

#include <atomic>
#include <mutex>

namespace db {

namespace {

std::mutex g_mu;
std::optional<std::string> g_reason;
std::atomic<bool> g_marked{false};  // read without the lock on every health check

}  // namespace

void mark_unrecoverable(const std::string& reason) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_reason) return;
  g_reason = reason;
  g_marked.store(true, std::memory_order_release);
}

std::optional<std::string> unrecoverable_reason() {
  if (!g_marked.load(std::memory_order_acquire)) return std::nullopt;
  std::lock_guard<std::mutex> lock(g_mu);
  return g_reason;
}

}  // namespace db
