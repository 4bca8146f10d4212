#include "sched/prefill_cost.h"

#include <algorithm>
#include <cmath>

namespace db {

double PrefillCost::cost(int64_t p, int64_t n) const {
  const double dn = static_cast<double>(n), dp = static_cast<double>(p);
  return dn + attention_per_position * (dn * dp + dn * (dn + 1) / 2);
}

int32_t PrefillCost::max_tokens(int64_t p, double budget, int32_t limit) const {
  if (limit <= 0 || cost(p, 1) > budget) return 0;
  if (cost(p, limit) <= budget) return limit;
  // cost is increasing in n: the largest n with cost(p, n) <= budget, by the
  // quadratic's root as a first guess, corrected for rounding.
  const double r = attention_per_position;
  double guess = budget;  // r == 0: cost = n
  if (r > 0) {
    const double b = 1 + r * (static_cast<double>(p) + 0.5);  // cost = (r/2) n^2 + b n
    guess = (-b + std::sqrt(b * b + 2 * r * budget)) / r;
  }
  int64_t n = std::clamp<int64_t>(static_cast<int64_t>(guess), 1, limit);
  while (n > 1 && cost(p, n) > budget) --n;
  while (n < limit && cost(p, n + 1) <= budget) ++n;
  return static_cast<int32_t>(n);
}

int32_t PrefillCost::chunk(int64_t p, double budget, int32_t limit) const {
  if (limit <= 0) return 0;
  return std::max(1, max_tokens(p, budget, limit));
}

PrefillCost prefill_cost_from_macs(double linear_macs_per_token, double attention_macs_per_position) {
  PrefillCost c;
  if (linear_macs_per_token > 0 && attention_macs_per_position > 0)
    c.attention_per_position = attention_macs_per_position / linear_macs_per_token;
  return c;
}

}  // namespace db
