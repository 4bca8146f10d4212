// Distributions of token counts for synthetic prompts and outputs.
#pragma once
#include <cstdint>
#include <string>

#include "util/random.h"

namespace db {

struct LengthDist {
  enum class Kind { Fixed, Uniform, Normal, LogNormal };
  Kind kind = Kind::Fixed;
  // Fixed: a = the length. Uniform: a..b inclusive. Normal: mean a, standard deviation b.
  // LogNormal: a and b are the mean and standard deviation of the lengths themselves
  // (not of the underlying normal); the normal's mu and sigma follow from them as
  // sigma^2 = ln(1 + b^2/a^2), mu = ln(a) - sigma^2/2.
  double a = 128;
  double b = 0;

  // Smallest and largest length draw_length can return (LogNormal: 1 and INT32_MAX).
  int32_t min() const;
  int32_t max() const;
  std::string describe() const;  // the text parse_length_dist accepts: "128", "uniform:64:256", ...
};

// "N" (fixed), "uniform:MIN:MAX", "normal:MEAN:SD", "lognormal:MEAN:SD" (token counts).
// Throws db::Error naming `what` on malformed text or values that cannot give lengths >= 1.
LengthDist parse_length_dist(const std::string& text, const std::string& what);

// One length drawn from `d`, rounded to the nearest integer and at least 1. Normal draws
// are clipped to [mean - 3 sd, mean + 3 sd]; LogNormal draws have no upper clip.
int32_t draw_length(const LengthDist& d, Rng& rng);

}  // namespace db
