// Seeded random draws that give the same sequence on every standard library.
// std::mt19937_64's output is fixed by the C++ standard, but std::*_distribution
// algorithms are not, so every draw here is computed explicitly from the raw
// 64-bit engine output (inverse CDF, Box-Muller, Marsaglia-Tsang).
#pragma once
#include <cstdint>
#include <random>

namespace db {

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}

  uint64_t next() { return engine_(); }
  double uniform01();                        // in [0, 1), 53 random bits
  uint64_t below(uint64_t bound);            // in [0, bound), bound > 0
  double uniform(double lo, double hi);      // in [lo, hi)
  double normal();                           // standard normal (Box-Muller, one value per call)
  double exponential(double rate);           // rate > 0; inverse CDF: -ln(1 - u) / rate
  double gamma(double shape, double scale);  // shape, scale > 0 (Marsaglia-Tsang)

 private:
  std::mt19937_64 engine_;
};

// A seed for an independent stream derived from `seed` and a stream number, so
// e.g. lengths and prompt words of one workload do not share a sequence.
uint64_t derive_seed(uint64_t seed, uint64_t stream);

}  // namespace db
