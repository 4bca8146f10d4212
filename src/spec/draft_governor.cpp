#include "spec/draft_governor.h"

#include <algorithm>
#include <cmath>

namespace db {

double DraftGovernor::acceptance(RequestId id) const {
  const double g = overall_rate();
  auto it = seqs_.find(id);
  if (it == seqs_.end()) return g;
  return (it->second.accepted + 2 * g) / (it->second.trials + 2);
}

int32_t DraftGovernor::best_draft_count(std::span<const RequestId> ids, int32_t running, const StepCostModel& cost,
                                        double fill, double draft_seconds, std::vector<size_t>& order) const {
  std::vector<std::pair<double, size_t>> values;  // (a^j, sequence index)
  values.reserve(ids.size() * static_cast<size_t>(max_drafts_));
  for (size_t i = 0; i < ids.size(); ++i) {
    const double a = std::min(acceptance(ids[i]), 0.999);
    double p = a;
    for (int32_t j = 0; j < max_drafts_; ++j, p *= a) values.emplace_back(p, i);
  }
  std::stable_sort(values.begin(), values.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  order.clear();
  for (const auto& v : values) order.push_back(v.second);
  const auto tokens = [&](double m) { return running + static_cast<int32_t>(std::lround(fill * m)); };
  const double base = *cost.seconds(running);
  double best_rate = running / base, expected = 0;
  int32_t best = 0;
  for (size_t m = 1; m <= values.size(); ++m) {
    expected += values[m - 1].first;
    const std::optional<double> t = cost.seconds(tokens(static_cast<double>(m)));
    if (!t || *t <= 0) break;
    const double rate = (running + fill * expected) / (*t + draft_seconds * fill * static_cast<double>(m));
    if (rate > best_rate) {
      best_rate = rate;
      best = static_cast<int32_t>(m);
    }
  }
  return best;
}

bool DraftGovernor::could_pay(int32_t running, const StepCostModel& cost, double fill, double draft_seconds) const {
  const std::optional<double> base = cost.seconds(running);
  const std::optional<double> with = cost.seconds(running + static_cast<int32_t>(std::lround(fill * max_drafts_)));
  if (!base || !with) return true;
  double expected = 0, p = kProbeAcceptance;
  for (int32_t j = 0; j < max_drafts_; ++j, p *= kProbeAcceptance) expected += p;
  return (running + fill * expected) / (*with + draft_seconds * fill * max_drafts_) > running / *base;
}

std::vector<int32_t> DraftGovernor::allot(std::span<const RequestId> ids, int32_t running, const StepCostModel& cost,
                                          double fill, double draft_seconds) {
  std::vector<int32_t> k(ids.size(), 0);
  if (ids.empty() || !cost.seconds(running)) return k;  // measure a plain step of this size first
  const double most = static_cast<double>(max_drafts_) * static_cast<double>(ids.size());
  if (!cost.seconds(running + static_cast<int32_t>(std::lround(fill * most)))) {
    std::fill(k.begin(), k.end(), max_drafts_);  // measure a step with every draft
  } else {
    std::vector<size_t> order;
    const int32_t m = best_draft_count(ids, running, cost, fill, draft_seconds, order);
    for (int32_t t = 0; t < m; ++t) ++k[order[static_cast<size_t>(t)]];
  }
  const bool probes = could_pay(running, cost, fill, draft_seconds);
  for (size_t i = 0; i < ids.size(); ++i) {
    Seq& s = seqs_[ids[i]];
    if (k[i] > 0 || (probes && ++s.paused_steps >= kProbeInterval)) {
      if (k[i] == 0) k[i] = 1;  // a probe
      s.paused_steps = 0;
    }
  }
  return k;
}

void DraftGovernor::record(RequestId id, int32_t drafted, int32_t accepted) {
  if (drafted <= 0) return;
  const double trials = accepted + (accepted < drafted ? 1 : 0);
  Seq& s = seqs_[id];
  s.accepted = kDecay * s.accepted + accepted;
  s.trials = kDecay * s.trials + trials;
  total_accepted_ += accepted;
  total_trials_ += trials;
}

}  // namespace db
