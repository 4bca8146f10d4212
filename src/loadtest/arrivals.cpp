#include "loadtest/arrivals.h"

#include <cmath>
#include <cstdio>

#include "util/error.h"

namespace db::loadtest {

namespace {

double checked_rate(double rate) {
  if (!(rate > 0) || !std::isfinite(rate)) throw Error("arrival rate must be > 0 requests/s");
  return rate;
}

}  // namespace

PoissonArrivals::PoissonArrivals(double rate, uint64_t seed) : rate_(checked_rate(rate)), rng_(seed) {}

double PoissonArrivals::next_gap() { return rng_.exponential(rate_); }

GammaArrivals::GammaArrivals(double rate, double burstiness, uint64_t seed) : rng_(seed) {
  checked_rate(rate);
  if (!(burstiness > 0) || !std::isfinite(burstiness)) throw Error("burstiness must be > 0");
  shape_ = burstiness;
  scale_ = 1.0 / (rate * burstiness);
}

double GammaArrivals::next_gap() { return rng_.gamma(shape_, scale_); }

ConstantArrivals::ConstantArrivals(double rate) : gap_(1.0 / checked_rate(rate)) {}

ClosedLoop::ClosedLoop(int32_t concurrency) : concurrency_(concurrency) {
  if (concurrency < 1) throw Error("closed-loop concurrency must be >= 1");
}

std::string ArrivalSpec::describe() const {
  char buf[96];
  switch (kind) {
    case Kind::Poisson: std::snprintf(buf, sizeof buf, "poisson rate=%g", rate); break;
    case Kind::Gamma: std::snprintf(buf, sizeof buf, "gamma rate=%g burstiness=%g", rate, burstiness); break;
    case Kind::Constant: std::snprintf(buf, sizeof buf, "constant rate=%g", rate); break;
    case Kind::ClosedLoop: std::snprintf(buf, sizeof buf, "closed concurrency=%d", concurrency); break;
  }
  return buf;
}

std::unique_ptr<ArrivalProcess> make_arrivals(const ArrivalSpec& spec) {
  switch (spec.kind) {
    case ArrivalSpec::Kind::Poisson: return std::make_unique<PoissonArrivals>(spec.rate, spec.seed);
    case ArrivalSpec::Kind::Gamma: return std::make_unique<GammaArrivals>(spec.rate, spec.burstiness, spec.seed);
    case ArrivalSpec::Kind::Constant: return std::make_unique<ConstantArrivals>(spec.rate);
    case ArrivalSpec::Kind::ClosedLoop: return std::make_unique<ClosedLoop>(spec.concurrency);
  }
  DB_CHECK(false, "unknown arrival kind");
}

}  // namespace db::loadtest
