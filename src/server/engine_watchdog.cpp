#include "server/engine_watchdog.h"

namespace db::server {

bool EngineWatchdog::healthy(const EngineStats& s, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  const bool has_work = s.running + s.waiting > 0;
  if (!has_work || !had_work_ || s.steps != last_steps_) {  // idle, work just arrived, or progress
    last_steps_ = s.steps;
    last_progress_ = now;
    had_work_ = has_work;
    return true;
  }
  return std::chrono::duration<double>(now - last_progress_).count() < stall_seconds_;
}

}  // namespace db::server
