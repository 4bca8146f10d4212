#include "metrics/metric.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "util/error.h"

namespace db::metrics {

void Counter::inc(double v) {
  if (!(v > 0)) return;
  value_.fetch_add(v, std::memory_order_relaxed);
}

void Counter::raise_to(double v) {
  double cur = value_.load(std::memory_order_relaxed);
  while (v > cur && !value_.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
  }
}

void Gauge::inc(double v) { value_.fetch_add(v, std::memory_order_relaxed); }

Histogram::Histogram(std::vector<double> upper_bounds) : bounds_(std::move(upper_bounds)) {
  for (size_t i = 0; i < bounds_.size(); ++i) {
    if (!std::isfinite(bounds_[i]) || (i > 0 && bounds_[i] <= bounds_[i - 1]))
      throw Error("histogram bucket bounds must be finite and strictly ascending (bound " + std::to_string(i) + ")");
  }
  counts_.assign(bounds_.size() + 1, 0);
}

void Histogram::observe(double v) {
  if (std::isnan(v)) return;
  const size_t bucket = static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin());
  std::lock_guard<std::mutex> lock(mu_);
  ++counts_[bucket];
  sum_ += v;
  ++count_;
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot s;
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t running = 0;
  for (uint64_t c : counts_) {
    running += c;
    s.cumulative.push_back(running);
  }
  s.sum = sum_;
  s.count = count_;
  return s;
}

}  // namespace db::metrics
