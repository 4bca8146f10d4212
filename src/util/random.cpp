#include "util/random.h"

#include <cmath>
#include <numbers>

#include "util/error.h"

namespace db {

double Rng::uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

uint64_t Rng::below(uint64_t bound) {
  DB_CHECK(bound > 0, "below(0)");
  return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * bound) >> 64);
}

double Rng::uniform(double lo, double hi) { return lo + (hi - lo) * uniform01(); }

double Rng::normal() {
  const double u1 = 1.0 - uniform01();  // (0, 1]: log stays finite
  const double u2 = uniform01();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double Rng::exponential(double rate) {
  DB_CHECK(rate > 0, "exponential rate must be > 0");
  return -std::log1p(-uniform01()) / rate;
}

double Rng::gamma(double shape, double scale) {
  DB_CHECK(shape > 0 && scale > 0, "gamma shape and scale must be > 0");
  if (shape < 1) {
    // Gamma(a) = Gamma(a + 1) * U^(1/a) for a < 1 (Marsaglia-Tsang's boost).
    const double u = 1.0 - uniform01();  // (0, 1]
    return gamma(shape + 1, scale) * std::pow(u, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = normal();
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = 1.0 - uniform01();  // (0, 1]
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v * scale;
  }
}

uint64_t derive_seed(uint64_t seed, uint64_t stream) {
  // splitmix64 finalizer of seed + stream * golden ratio: nearby inputs map far apart.
  uint64_t z = seed + (stream + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace db
