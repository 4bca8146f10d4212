// When requests arrive: open-loop processes give the gap before the next request;
// the closed-loop marker tells the driver to keep a fixed number in flight instead.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "util/random.h"

namespace db::loadtest {

class ArrivalProcess {
 public:
  virtual ~ArrivalProcess() = default;
  // Seconds from the previous request's send time to the next one's (>= 0).
  // A closed-loop process returns 0: its pacing is the completions, not a clock.
  virtual double next_gap() = 0;
  // Requests kept in flight by a closed loop; 0 for open-loop processes.
  virtual int32_t concurrency() const { return 0; }
  bool closed_loop() const { return concurrency() > 0; }
};

// Exponential gaps at `rate` requests/s (mean 1/rate, coefficient of variation 1).
class PoissonArrivals : public ArrivalProcess {
 public:
  PoissonArrivals(double rate, uint64_t seed);
  double next_gap() override;

 private:
  double rate_;
  Rng rng_;
};

// Gamma gaps with shape b and scale 1/(rate*b): mean 1/rate, coefficient of variation
// 1/sqrt(b). b < 1 is burstier than Poisson, b = 1 is Poisson, b > 1 is smoother.
class GammaArrivals : public ArrivalProcess {
 public:
  GammaArrivals(double rate, double burstiness, uint64_t seed);
  double next_gap() override;

 private:
  double shape_, scale_;
  Rng rng_;
};

// Exactly 1/rate between requests.
class ConstantArrivals : public ArrivalProcess {
 public:
  explicit ConstantArrivals(double rate);
  double next_gap() override { return gap_; }

 private:
  double gap_;
};

// Fixed concurrency: no gaps; the driver sends a request whenever fewer than N are in flight.
class ClosedLoop : public ArrivalProcess {
 public:
  explicit ClosedLoop(int32_t concurrency);
  double next_gap() override { return 0; }
  int32_t concurrency() const override { return concurrency_; }

 private:
  int32_t concurrency_;
};

struct ArrivalSpec {
  enum class Kind { Poisson, Gamma, Constant, ClosedLoop };
  Kind kind = Kind::Poisson;
  double rate = 1;          // requests/s (open loop)
  double burstiness = 1;    // Gamma's shape
  int32_t concurrency = 1;  // ClosedLoop's requests in flight
  uint64_t seed = 0;

  std::string describe() const;  // e.g. "poisson rate=4", "gamma rate=4 burstiness=0.5", "closed concurrency=8"
};

// The process of `spec`; throws db::Error on a rate, burstiness or concurrency that is not > 0.
std::unique_ptr<ArrivalProcess> make_arrivals(const ArrivalSpec& spec);

}  // namespace db::loadtest
