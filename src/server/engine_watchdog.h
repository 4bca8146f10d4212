// Whether the engine is stepping: it is stalled when it has work (running or
// waiting sequences) but its step count has not moved for `stall_seconds`.
// Thread-safe; fed by /health with fresh Engine::stats().
#pragma once
#include <chrono>
#include <cstdint>
#include <mutex>

#include "engine/engine.h"

namespace db::server {

class EngineWatchdog {
 public:
  using Clock = std::chrono::steady_clock;
  explicit EngineWatchdog(double stall_seconds = 300) : stall_seconds_(stall_seconds) {}
  // Records `s` as seen at `now`; false when the engine has been stalled for stall_seconds.
  bool healthy(const EngineStats& s, Clock::time_point now = Clock::now());

 private:
  double stall_seconds_;
  std::mutex mu_;
  int64_t last_steps_ = -1;
  bool had_work_ = false;              // the previous observation saw work
  Clock::time_point last_progress_{};  // when the step count last moved, or the engine was last idle
};

}  // namespace db::server
