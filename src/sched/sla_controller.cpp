#include "sched/sla_controller.h"

#include <algorithm>
#include <cstdio>

#include "util/error.h"
#include "util/percentile.h"

namespace db {

namespace {

double p99(std::vector<double>& v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return percentile(v, 99);
}

std::string seconds_vs(const char* what, double observed, const char* op, double target) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s %.3f s %s %.3f s", what, observed, op, target);
  return buf;
}

}  // namespace

std::string_view sla_action_name(SlaAction a) {
  switch (a) {
    case SlaAction::Hold: return "hold";
    case SlaAction::Grow: return "grow";
    case SlaAction::Shrink: return "shrink";
    case SlaAction::Revert: return "revert";
  }
  return "hold";
}

std::string SlaDecision::describe() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s (%s): step tokens %d -> %d, running cap %d -> %d; tpot %.3f s, ttft p99 %.3f s, %.0f tok/s",
                std::string(sla_action_name(action)).c_str(), reason.c_str(), before.step_tokens, after.step_tokens,
                before.max_running, after.max_running, tpot_estimate_s, ttft_p99_s, tokens_per_s);
  return buf;
}

SlaController::SlaController(SlaControllerConfig cfg) : cfg_(std::move(cfg)) {
  if (!cfg_.targets.enabled()) throw Error("the SLA controller needs a TPOT or TTFT target");
  if (cfg_.targets.tpot_p99_s < 0 || cfg_.targets.ttft_p99_s < 0) throw Error("SLA targets must not be negative");
  if (cfg_.min_step_tokens < 1 || cfg_.min_step_tokens > cfg_.max_step_tokens)
    throw Error("the SLA controller's step token range is empty");
  if (cfg_.min_running < 1 || cfg_.min_running > cfg_.max_running)
    throw Error("the SLA controller's running cap range is empty");
  if (cfg_.window_s <= 0 || cfg_.min_steps < 1 || cfg_.headroom <= 0 || cfg_.headroom >= 1)
    throw Error("the SLA controller's window and headroom must be positive (headroom below 1)");
  settings_ = clamp({cfg_.max_step_tokens, cfg_.max_running});
  snap_.enabled = true;
  snap_.targets = cfg_.targets;
  snap_.settings = settings_;
}

SlaSettings SlaController::clamp(SlaSettings s) const {
  s.max_running = std::clamp(s.max_running, cfg_.min_running, cfg_.max_running);
  s.step_tokens = std::clamp(s.step_tokens, cfg_.min_step_tokens, cfg_.max_step_tokens);
  s.step_tokens = std::min(cfg_.max_step_tokens, std::max(s.step_tokens, s.max_running));
  return s;
}

SlaSettings SlaController::grown() const {
  return clamp({static_cast<int32_t>(settings_.step_tokens * 1.25 + 0.5),
                settings_.max_running + std::max(1, settings_.max_running / 8)});
}

SlaSettings SlaController::shrunk(double factor, bool cap_too) const {
  SlaSettings s = settings_;
  s.step_tokens = static_cast<int32_t>(s.step_tokens * factor);
  if (cap_too) s.max_running = std::min(s.max_running - 1, static_cast<int32_t>(s.max_running * factor));
  return clamp(s);
}

void SlaController::observe_step(double now, const SlaStepSample& step) {
  if (win_.start < 0) win_.start = now - step.seconds;
  ++win_.steps;
  win_.tokens += step.tokens;
  win_.prompt_tokens += step.prompt_tokens;
  if (step.waiting > 0 || step.prompts_cut > 0 || step.tokens >= settings_.step_tokens ||
      step.sequences >= settings_.max_running)
    ++win_.demand_steps;
  const bool decoded = step.decodes > 0;
  if (decoded && last_step_decoded_ && last_step_end_ >= 0) {
    win_.decode_gap_sum += now - last_step_end_;
    ++win_.decode_gaps;
  }
  last_step_end_ = now;
  last_step_decoded_ = decoded;
}

void SlaController::observe_ttft(double seconds) { win_.ttft.push_back(seconds); }
void SlaController::observe_tpot(double seconds) { win_.tpot.push_back(seconds); }

bool SlaController::window_complete(double now) const {
  return win_.start >= 0 && win_.steps >= cfg_.min_steps && now - win_.start >= cfg_.window_s;
}

SlaDecision SlaController::decide(double now) {
  SlaDecision d;
  d.before = settings_;
  const double span = std::max(now - win_.start, 1e-9);
  d.tokens_per_s = static_cast<double>(win_.tokens) / span;
  const double mean_gap = win_.decode_gaps > 0 ? win_.decode_gap_sum / win_.decode_gaps : 0;
  d.tpot_estimate_s = std::max(p99(win_.tpot), mean_gap);
  d.ttft_p99_s = p99(win_.ttft);
  const SlaTargets& t = cfg_.targets;
  const bool over_tpot = t.tpot_p99_s > 0 && d.tpot_estimate_s > t.tpot_p99_s;
  const bool over_ttft = t.ttft_p99_s > 0 && !win_.ttft.empty() && d.ttft_p99_s > t.ttft_p99_s;
  const bool tpot_room = t.tpot_p99_s <= 0 || d.tpot_estimate_s < cfg_.headroom * t.tpot_p99_s;
  const bool mostly_decodes = win_.tokens == 0 || win_.prompt_tokens * 10 < win_.tokens * 3;

  const bool judged = judging_grow_;
  judging_grow_ = false;
  if (frozen_ > 0) --frozen_;
  if (judged && saturated_before_grow_ && win_.saturated() &&
      (d.tpot_estimate_s > 1.1 * tpot_before_grow_ || over_tpot || over_ttft) &&
      d.tokens_per_s < (1 + cfg_.min_gain) * tokens_per_s_before_grow_) {
    d.action = SlaAction::Revert;
    char buf[128];
    std::snprintf(buf, sizeof buf, "latency up, %.0f -> %.0f tok/s", tokens_per_s_before_grow_, d.tokens_per_s);
    d.reason = buf;
    settings_ = before_grow_;
    frozen_ = cfg_.freeze_windows;
  } else if (over_tpot && over_ttft) {
    d.action = SlaAction::Hold;
    d.reason = "overloaded: tpot and ttft missed";
  } else if (over_tpot) {
    d.action = SlaAction::Shrink;
    d.reason = seconds_vs("tpot", d.tpot_estimate_s, ">", t.tpot_p99_s);
    const double factor = std::clamp(0.9 * t.tpot_p99_s / d.tpot_estimate_s, 0.5, 0.9);
    settings_ = shrunk(factor, mostly_decodes || settings_.step_tokens <= cfg_.min_step_tokens);
  } else if (tpot_room && frozen_ == 0 && (over_ttft || win_.demand()) && grown() != settings_) {
    d.action = SlaAction::Grow;
    d.reason = over_ttft ? seconds_vs("ttft p99", d.ttft_p99_s, ">", t.ttft_p99_s) : "headroom and demand";
    before_grow_ = settings_;
    tpot_before_grow_ = d.tpot_estimate_s;
    tokens_per_s_before_grow_ = d.tokens_per_s;
    saturated_before_grow_ = win_.saturated();
    judging_grow_ = true;
    settings_ = grown();
  } else {
    d.action = SlaAction::Hold;
    d.reason = over_ttft ? "ttft missed, no tpot headroom" : frozen_ > 0 ? "frozen" : "within the SLA";
  }
  d.after = settings_;

  ++snap_.windows;
  ++snap_.decisions[static_cast<int>(d.action)];
  snap_.settings = settings_;
  snap_.tpot_estimate_s = d.tpot_estimate_s;
  snap_.ttft_p99_s = d.ttft_p99_s;
  snap_.tokens_per_s = d.tokens_per_s;
  win_ = Window{};
  win_.start = now;
  return d;
}

}  // namespace db
