// Philox4x32-10, a counter-based random generator (Salmon et al., SC'11): the
// output is a pure function of (counter, key), so any draw can be computed
// directly from its index without stepping through earlier ones.
#pragma once
#include <array>
#include <cstdint>

namespace db {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

// The 128 random bits for one (counter, key) pair.
PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key);

// A double uniform in [0, 1) made from the first 64 bits of a Philox block (53 bits used).
double philox_uniform(const PhiloxCounter& block);

}  // namespace db
