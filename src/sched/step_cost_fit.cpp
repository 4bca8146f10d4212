#include "sched/step_cost_fit.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace db {

namespace {

constexpr double kFitPositionScale = 1000;  // positions enter the fit in thousands, so its sums stay balanced
constexpr double kFitMinAttentionSteps = 3;  // weighted steps whose attention matters before a fit is trusted
constexpr double kFitLowestShare = 1.0 / 8, kFitHighestShare = 64;  // estimate bounds, relative to the prior

// Solves a x = b for a symmetric 3x3 system by elimination with partial
// pivoting; nullopt when it is (nearly) singular.
std::optional<std::array<double, 3>> solve_step_cost_system(std::array<std::array<double, 3>, 3> a,
                                                            std::array<double, 3> b) {
  double scale = 0;
  for (const auto& row : a)
    for (double v : row) scale = std::max(scale, std::abs(v));
  if (scale == 0) return std::nullopt;
  for (int col = 0; col < 3; ++col) {
    int pivot = col;
    for (int r = col + 1; r < 3; ++r)
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    if (std::abs(a[pivot][col]) < 1e-12 * scale) return std::nullopt;
    std::swap(a[col], a[pivot]);
    std::swap(b[col], b[pivot]);
    for (int r = col + 1; r < 3; ++r) {
      const double f = a[r][col] / a[col][col];
      for (int c = col; c < 3; ++c) a[r][c] -= f * a[col][c];
      b[r] -= f * b[col];
    }
  }
  std::array<double, 3> x{};
  for (int r = 2; r >= 0; --r) {
    double s = b[r];
    for (int c = r + 1; c < 3; ++c) s -= a[r][c] * x[c];
    x[r] = s / a[r][r];
  }
  return x;
}

}  // namespace

StepCostFit::Work StepCostFit::work_of(const SchedulerOutput& so) {
  Work w;
  for (const auto* list : {&so.scheduled_running, &so.scheduled_new}) {
    for (const ScheduledRequest& r : *list) {
      const double n = r.num_scheduled_tokens, p = r.num_computed_tokens;
      w.tokens += n;
      w.positions += n * p + n * (n + 1) / 2;  // tokens at p .. p + n - 1 attend to p + 1 .. p + n positions
    }
  }
  return w;
}

StepCostFit::StepCostFit(PrefillCost prior, double forgetting)
    : prior_(prior), estimate_(prior), forgetting_(std::clamp(forgetting, 1e-3, 1.0)) {}

bool StepCostFit::observe(const Work& w, double seconds) {
  if (!(seconds > 0) || w.tokens <= 0 || prior_.attention_per_position <= 0) return false;
  const std::array<double, 3> x{1.0, w.tokens, w.positions / kFitPositionScale};
  for (int i = 0; i < 3; ++i) {
    xy_[i] = forgetting_ * xy_[i] + x[i] * seconds;
    for (int j = 0; j < 3; ++j) xx_[i][j] = forgetting_ * xx_[i][j] + x[i] * x[j];
  }
  // By the prior, attention is at least a quarter of this step's work: it says something about the slope.
  const bool attention_matters = prior_.attention_per_position * w.positions >= 0.25 * w.tokens;
  attention_steps_ = forgetting_ * attention_steps_ + (attention_matters ? 1 : 0);
  if (attention_steps_ < kFitMinAttentionSteps) return false;
  const std::optional<std::array<double, 3>> fit = solve_step_cost_system(xx_, xy_);
  if (!fit) return false;
  const double per_token = (*fit)[1], per_position = (*fit)[2] / kFitPositionScale;
  if (!(per_token > 0) || !(per_position > 0)) return false;
  const double r0 = prior_.attention_per_position;
  const double r = std::clamp(per_position / per_token, r0 * kFitLowestShare, r0 * kFitHighestShare);
  const bool changed = r != estimate_.attention_per_position;
  estimate_.attention_per_position = r;
  fitted_ = true;
  return changed;
}

}  // namespace db
