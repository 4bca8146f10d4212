// The SLA controller against synthetic plants whose step time is a known function
// of the step's tokens: it shrinks on a TPOT miss, grows on headroom with demand,
// settles near the best budget without oscillating, reverts a grow that only
// raised latency, and the scheduler applies its settings.
#include <gtest/gtest.h>

#include <cmath>

#include "sched/sla_controller.h"
#include "sched_test_util.h"
#include "util/error.h"

namespace db::test {
namespace {

SlaControllerConfig config(double tpot, double ttft = 0) {
  SlaControllerConfig c;
  c.targets = {tpot, ttft};
  c.min_step_tokens = 16;
  c.max_step_tokens = 2048;
  c.min_running = 1;
  c.max_running = 64;
  c.window_s = 1.0;
  c.min_steps = 4;
  return c;
}

// A step of `seqs` decoding sequences, with `waiting` requests left waiting.
SlaStepSample step(double seconds, int32_t tokens, int32_t prompt_tokens, int32_t seqs, int32_t waiting) {
  SlaStepSample s;
  s.seconds = seconds;
  s.tokens = tokens;
  s.prompt_tokens = prompt_tokens;
  s.sequences = s.decodes = seqs;
  s.waiting = waiting;
  return s;
}

// A plant: every step computes min(budget, demand) tokens, decodes for `seqs`
// sequences, and takes base + per_token * tokens seconds.
struct Plant {
  double base = 0.01, per_token = 0.0005;
  int32_t demand = 4000;
  double now = 0;

  SlaDecision run_window(SlaController& c) {
    while (!c.window_complete(now)) {
      const SlaSettings s = c.settings();
      const int32_t tokens = std::min(s.step_tokens, demand);
      const double t = base + per_token * tokens;
      now += t;
      c.observe_step(now, step(t, tokens, tokens - std::min(tokens, s.max_running), s.max_running, 5));
    }
    return c.decide(now);
  }
};

TEST(SlaController, RejectsAConfigWithoutTargetOrRange) {
  EXPECT_THROW(SlaController(config(0, 0)), Error);
  SlaControllerConfig c = config(0.1);
  c.min_step_tokens = 4096;
  EXPECT_THROW(SlaController{c}, Error);
  c = config(0.1);
  c.min_running = 0;
  EXPECT_THROW(SlaController{c}, Error);
}

TEST(SlaController, StartsAtTheMaximumAndWaitsForAFullWindow) {
  SlaController c(config(0.1));
  EXPECT_EQ(c.settings(), (SlaSettings{2048, 64}));
  c.observe_step(0.5, step(0.5, 100, 0, 4, 0));
  c.observe_step(1.6, step(0.5, 100, 0, 4, 0));
  EXPECT_FALSE(c.window_complete(1.6)) << "two steps are fewer than min_steps";
  c.observe_step(1.7, step(0.1, 100, 0, 4, 0));
  c.observe_step(1.8, step(0.1, 100, 0, 4, 0));
  EXPECT_TRUE(c.window_complete(1.8));
}

TEST(SlaController, ShrinksInProportionToATpotMiss) {
  SlaController c(config(0.1));
  Plant p;  // 2048 tokens: 1.03 s per step, ten times the target
  const SlaDecision d = p.run_window(c);
  EXPECT_EQ(d.action, SlaAction::Shrink) << d.describe();
  EXPECT_NEAR(d.tpot_estimate_s, 1.034, 1e-3);
  EXPECT_EQ(d.after.step_tokens, 1024) << "a tenfold miss halves at most";
  EXPECT_GE(d.after.step_tokens, d.after.max_running);
}

TEST(SlaController, SettlesBelowTheTargetNearTheBestBudgetWithoutOscillating) {
  SlaController c(config(0.1));
  Plant p;  // the target allows (0.1 - 0.01) / 0.0005 = 180 tokens per step
  std::vector<SlaDecision> trace;
  for (int w = 0; w < 80; ++w) trace.push_back(p.run_window(c));
  int changes = 0;
  for (size_t w = 40; w < trace.size(); ++w) {
    EXPECT_LE(trace[w].after.step_tokens, 180) << "window " << w << ": " << trace[w].describe();
    if (!(trace[w].after == trace[w].before)) ++changes;
  }
  const int32_t settled = trace.back().after.step_tokens;
  EXPECT_GE(settled, 0.7 * 180) << "throughput within reach of the best budget";
  EXPECT_LE(changes, 8) << "a settled controller changes its settings rarely";
}

TEST(SlaController, GrowsBackWithHeadroomAndDemand) {
  SlaController c(config(0.1));
  Plant p;
  p.per_token = 0.002;  // the target allows 45 tokens per step
  for (int w = 0; w < 12; ++w) p.run_window(c);
  EXPECT_LE(c.settings().step_tokens, 45);
  EXPECT_LT(c.settings().max_running, 64);
  p.per_token = 0.00001;  // the machine got faster: even 2048 tokens take 0.03 s
  int grows = 0;
  for (int w = 0; w < 60; ++w) grows += p.run_window(c).action == SlaAction::Grow;
  EXPECT_EQ(c.settings(), (SlaSettings{2048, 64})) << "back at the maximum after " << grows << " grows";
}

TEST(SlaController, GrowsOnATtftMissWhenTpotHasRoom) {
  SlaController c(config(1.0, 0.5));
  Plant p;  // shrink first with a TPOT miss, then report slow first tokens
  p.per_token = 0.002;
  p.demand = 4000;
  while (p.run_window(c).action == SlaAction::Shrink) {}
  p.per_token = 0.0001;
  p.demand = 10;
  for (int i = 0; i < 10; ++i) c.observe_ttft(2.0);
  const SlaDecision d = p.run_window(c);
  EXPECT_EQ(d.action, SlaAction::Grow) << d.describe();
  EXPECT_NE(d.reason.find("ttft"), std::string::npos) << d.reason;
}

TEST(SlaController, RevertsAGrowThatOnlyRaisedLatencyAndFreezes) {
  SlaControllerConfig cfg = config(1.0);
  cfg.max_step_tokens = 1024;
  SlaController c(cfg);
  double now = 0;
  // Window 1: slow enough to shrink.
  auto window = [&](double step_s, int32_t tokens) {
    while (!c.window_complete(now)) {
      now += step_s;
      c.observe_step(now, step(step_s, tokens, 0, 8, 3));
    }
    return c.decide(now);
  };
  ASSERT_EQ(window(2.0, 800).action, SlaAction::Shrink);
  const SlaSettings shrunk = c.settings();
  ASSERT_EQ(window(0.2, 800).action, SlaAction::Grow);  // headroom and demand
  // The grow made steps slower for the same tokens: no throughput gain.
  const SlaDecision revert = window(0.5, 800);
  EXPECT_EQ(revert.action, SlaAction::Revert) << revert.describe();
  EXPECT_EQ(c.settings(), shrunk);
  for (int i = 0; i < cfg.freeze_windows - 1; ++i) {
    const SlaDecision d = window(0.2, 800);
    EXPECT_EQ(d.action, SlaAction::Hold) << i << ": " << d.describe();
  }
  EXPECT_EQ(window(0.2, 800).action, SlaAction::Grow) << "growth resumes after the freeze";
  const SlaControllerSnapshot s = c.snapshot();
  EXPECT_EQ(s.decisions[static_cast<int>(SlaAction::Revert)], 1);
  EXPECT_EQ(s.windows, 3 + cfg.freeze_windows);
}

// Steps of `tokens` tokens taking `step_s` each, until the window completes;
// `prompts_cut` sequences' prompts go on after each step; nothing waits.
SlaDecision quiet_window(SlaController& c, double& now, double step_s, int32_t tokens, int32_t prompts_cut) {
  while (!c.window_complete(now)) {
    now += step_s;
    SlaStepSample s = step(step_s, tokens, tokens / 2, 4, 0);
    s.prompts_cut = prompts_cut;
    c.observe_step(now, s);
  }
  return c.decide(now);
}

// A controller (TPOT target 0.1 s, budget up to 1024) after one window that shrank it.
SlaController after_a_shrink(double& now) {
  SlaControllerConfig cfg = config(0.1);
  cfg.max_step_tokens = 1024;
  SlaController c(cfg);
  EXPECT_EQ(quiet_window(c, now, 0.5, 600, 0).action, SlaAction::Shrink);
  return c;
}

TEST(SlaController, ACutPromptIsDemand) {
  double now = 0;
  SlaController c = after_a_shrink(now);
  // Well within the target, no step fills the budget, nothing waits: no demand.
  const SlaDecision idle = quiet_window(c, now, 0.02, 100, 0);
  EXPECT_EQ(idle.action, SlaAction::Hold) << idle.describe();
  // The same steps, but prompts were cut by the long-chunk cap: grow.
  const SlaDecision cut = quiet_window(c, now, 0.02, 100, 1);
  EXPECT_EQ(cut.action, SlaAction::Grow) << cut.describe();
}

TEST(SlaController, HoldsWhenOverloadedRatherThanShrinking) {
  SlaController c(config(0.1, 0.5));
  double now = 0;
  while (!c.window_complete(now)) {
    now += 0.3;
    c.observe_step(now, step(0.3, 500, 400, 8, 20));
  }
  for (int i = 0; i < 5; ++i) c.observe_ttft(3.0);
  const SlaDecision d = c.decide(now);
  EXPECT_EQ(d.action, SlaAction::Hold) << d.describe();
  EXPECT_NE(d.reason.find("overloaded"), std::string::npos) << d.reason;
  EXPECT_EQ(c.settings(), (SlaSettings{2048, 64})) << "a smaller step would only lengthen the queue";
}

TEST(SlaController, JudgesAGrowByThroughputOnlyWhenSaturated) {
  double now = 0;
  SlaController c = after_a_shrink(now);
  ASSERT_EQ(quiet_window(c, now, 0.02, 100, 1).action, SlaAction::Grow);
  // Half the load arrives in the next window: fewer tokens/s and slower steps (still
  // within the SLA), but the window was not saturated, so it says nothing of the grow.
  const SlaDecision d = quiet_window(c, now, 0.03, 50, 0);
  EXPECT_NE(d.action, SlaAction::Revert) << d.describe();
}

TEST(SchedulerStepLimits, LowerTheBudgetAndCapWithoutPreempting) {
  Scheduler s(tiny_config(/*max_seqs=*/4, /*budget=*/64, /*num_blocks=*/64));
  for (RequestId id = 1; id <= 3; ++id) s.add_request(params(id, iota_tokens(1, 20), 8));
  SchedulerOutput out;
  for (int i = 0; i < 10 && !(s.find(1)->num_output_tokens() > 0 && s.find(3)->num_output_tokens() > 0); ++i) {
    out = s.schedule();
    s.update(out, fake_run(s, out));
  }
  ASSERT_EQ(s.num_running(), 3);
  s.set_step_limits({/*step_tokens=*/2, /*long_prefill_threshold=*/0, /*max_running=*/1});
  out = s.schedule();
  EXPECT_TRUE(out.preempted_ids.empty()) << "a lowered cap preempts nothing";
  EXPECT_EQ(out.total_num_scheduled_tokens, 2) << "the budget is the controller's";
  s.update(out, fake_run(s, out));
  s.add_request(params(9, iota_tokens(50, 4), 2));
  for (int i = 0; i < 3; ++i) {
    out = s.schedule();
    for (const ScheduledRequest& r : out.scheduled_new) EXPECT_NE(r.id, 9u) << "no admission over the cap";
    s.update(out, fake_run(s, out));
  }
  s.set_step_limits({});
  out = s.schedule();
  EXPECT_EQ(out.total_num_scheduled_tokens, 3 + 4) << "configured limits again: 3 decodes and the new prompt";
}

}  // namespace
}  // namespace db::test
