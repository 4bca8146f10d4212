// The three Prometheus metric kinds as thread-safe values. Any thread may update
// them; the registry reads them when it renders the exposition text.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace db::metrics {

// A monotonically increasing total.
class Counter {
 public:
  void inc(double v = 1);
  // Raises the total to `v` (for totals counted elsewhere, e.g. the engine's); never lowers it.
  void raise_to(double v);
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// A value that goes up and down.
class Gauge {
 public:
  void set(double v) { value_.store(v, std::memory_order_relaxed); }
  void inc(double v = 1);
  void dec(double v = 1) { inc(-v); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Observations counted into fixed buckets (upper bounds, ascending; +Inf implied).
class Histogram {
 public:
  // Throws db::Error unless `upper_bounds` is strictly ascending and finite.
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double v);

  struct Snapshot {
    std::vector<uint64_t> cumulative;  // per bound, then +Inf: observations <= bound
    double sum = 0;                    // sum of all observations
    uint64_t count = 0;                // observations
  };
  Snapshot snapshot() const;
  const std::vector<double>& upper_bounds() const { return bounds_; }

 private:
  std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::vector<uint64_t> counts_;  // per bucket (not cumulative), +Inf last
  double sum_ = 0;
  uint64_t count_ = 0;
};

}  // namespace db::metrics
