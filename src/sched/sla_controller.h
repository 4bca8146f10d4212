// The adaptive batch controller: tunes a step's token budget and the cap on
// running sequences online, toward the highest throughput that keeps the
// latency SLA (p99 time per output token, p99 time to first token).
//
// It is a pure state machine fed by the engine: every step (observe_step) and
// every first token / finished sequence (observe_ttft / observe_tpot). Once per
// control window (at least `window_s` and `min_steps` steps) decide() judges the
// window and may change the settings:
//
//   revert  the window after a grow, when it and the window before the grow
//           were both saturated (demand in at least half their steps, so their
//           tokens/s measure capacity rather than arrivals): latency rose (TPOT
//           estimate +10% or an SLO now missed) while computed tokens/s rose less
//           than `min_gain`; the settings go back to those before the grow and
//           growing is frozen for `freeze_windows` windows;
//   hold    TPOT and TTFT both missed: the engine is overloaded, and a smaller
//           step would only lengthen the queue (TTFT) to shorten TPOT;
//   shrink  the TPOT estimate is over its target: budget (and, when the window
//           was mostly decodes or the budget is at its floor, the running cap)
//           scaled by clamp(0.9 * target / estimate, 0.5, 0.9);
//   grow    no SLO missed and the TPOT estimate under `headroom` x its target,
//           with demand: budget x1.25 and cap + max(1, cap / 8); the same when
//           only TTFT is missed (more prefill per step, more admitted);
//   hold    otherwise.
//
// A step shows demand when requests wait after it, when a prompt it prefilled
// was cut (by the budget or the long-chunk cap) and goes on in a later step, or
// when it filled its budget or the running cap.
//
// The TPOT estimate is the larger of the window's p99 of finished sequences'
// time per output token and the mean interval between consecutive steps that
// both computed decodes (the per-token time every running sequence sees now;
// finished sequences lag by their whole length). Settings stay within
// [min_*, max_*]; the budget never drops below the running cap, so every running
// sequence can decode in one step.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace db {

struct SlaTargets {
  double tpot_p99_s = 0;  // 0 = no TPOT target
  double ttft_p99_s = 0;  // 0 = no TTFT target
  bool enabled() const { return tpot_p99_s > 0 || ttft_p99_s > 0; }
};

struct SlaControllerConfig {
  SlaTargets targets;
  int32_t min_step_tokens = 32, max_step_tokens = 2048;  // the budget's range
  int32_t min_running = 1, max_running = 64;             // the running cap's range
  double window_s = 2.0;      // a window lasts at least this long (controller clock seconds)
  int32_t min_steps = 8;      // ... and holds at least this many steps
  double headroom = 0.8;      // grow only while the TPOT estimate is under headroom x target
  double min_gain = 0.03;     // a grow that raised latency must raise throughput by this share
  int32_t freeze_windows = 5; // windows without growth after a revert
};

struct SlaSettings {
  int32_t step_tokens = 0;  // tokens per step at most
  int32_t max_running = 0;  // running sequences at most
  friend bool operator==(const SlaSettings&, const SlaSettings&) = default;
};

// What one step did, as the controller needs it.
struct SlaStepSample {
  double seconds = 0;         // how long it took
  int32_t tokens = 0;         // tokens computed
  int32_t prompt_tokens = 0;  // ... of them at prompt positions
  int32_t sequences = 0;      // sequences scheduled
  int32_t decodes = 0;        // ... of them sampling a next output token
  int32_t waiting = 0;        // requests left waiting after it
  int32_t prompts_cut = 0;    // sequences whose prompt goes on in a later step
};

enum class SlaAction { Hold, Grow, Shrink, Revert };
std::string_view sla_action_name(SlaAction a);  // "hold", "grow", "shrink", "revert"
inline constexpr int kNumSlaActions = 4;

// What one window measured and what the controller did about it.
struct SlaDecision {
  SlaAction action = SlaAction::Hold;
  std::string reason;               // e.g. "tpot 0.142 s > 0.100 s"
  SlaSettings before, after;
  double tpot_estimate_s = 0;       // 0 when the window had none
  double ttft_p99_s = 0;            // 0 when the window saw no first token
  double tokens_per_s = 0;          // tokens computed per second in the window
  std::string describe() const;     // one log line
};

// For metrics: targets, settings, the latest window's estimates and the decision counts.
struct SlaControllerSnapshot {
  bool enabled = false;
  SlaTargets targets;
  SlaSettings settings;
  double tpot_estimate_s = 0, ttft_p99_s = 0, tokens_per_s = 0;
  int64_t windows = 0;
  int64_t decisions[kNumSlaActions] = {};  // by SlaAction
};

class SlaController {
 public:
  // Throws db::Error unless a target is set and the ranges are valid (1 <= min <= max).
  // Starts at the maximum settings.
  explicit SlaController(SlaControllerConfig cfg);

  // A step that ended at `now` (seconds).
  void observe_step(double now, const SlaStepSample& step);
  void observe_ttft(double seconds);  // a request's first token
  void observe_tpot(double seconds);  // a finished sequence's time per output token

  // Judges the window when it is complete (see the top of the file) and starts
  // the next one; nothing (false) before that.
  bool window_complete(double now) const;
  SlaDecision decide(double now);

  const SlaSettings& settings() const { return settings_; }
  SlaControllerSnapshot snapshot() const { return snap_; }
  const SlaControllerConfig& config() const { return cfg_; }

 private:
  struct Window {
    double start = -1;
    int32_t steps = 0;
    int64_t tokens = 0, prompt_tokens = 0;
    double decode_gap_sum = 0;  // intervals between consecutive steps that both decoded
    int32_t decode_gaps = 0;
    int32_t demand_steps = 0;
    bool demand() const { return demand_steps > 0; }
    bool saturated() const { return steps > 0 && 2 * demand_steps >= steps; }
    std::vector<double> ttft, tpot;
  };
  SlaSettings clamp(SlaSettings s) const;
  SlaSettings grown() const;
  SlaSettings shrunk(double factor, bool cap_too) const;

  SlaControllerConfig cfg_;
  SlaSettings settings_;
  Window win_;
  double last_step_end_ = -1;
  bool last_step_decoded_ = false;
  // The window before the latest grow, to judge it by.
  bool judging_grow_ = false;
  SlaSettings before_grow_;
  double tpot_before_grow_ = 0, tokens_per_s_before_grow_ = 0;
  bool saturated_before_grow_ = false;
  int32_t frozen_ = 0;
  SlaControllerSnapshot snap_;
};

}  // namespace db
