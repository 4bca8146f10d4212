#include "util/length_dist.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <vector>

#include "util/error.h"

namespace db {

namespace {

// A drawn value as a length: rounded to the nearest integer, at least 1.
int32_t to_length(double x) {
  x = std::clamp(x, 1.0, static_cast<double>(INT32_MAX));  // also keeps an overflowed exp() finite
  return static_cast<int32_t>(std::llround(x));
}

}  // namespace

int32_t LengthDist::min() const {
  switch (kind) {
    case Kind::Fixed:
    case Kind::Uniform: return to_length(a);
    case Kind::Normal: return to_length(a - 3 * b);
    case Kind::LogNormal: return 1;
  }
  return 1;
}

int32_t LengthDist::max() const {
  switch (kind) {
    case Kind::Fixed: return to_length(a);
    case Kind::Uniform: return to_length(b);
    case Kind::Normal: return to_length(a + 3 * b);
    case Kind::LogNormal: return INT32_MAX;
  }
  return INT32_MAX;
}

std::string LengthDist::describe() const {
  char buf[96];
  switch (kind) {
    case Kind::Fixed: std::snprintf(buf, sizeof buf, "%g", a); break;
    case Kind::Uniform: std::snprintf(buf, sizeof buf, "uniform:%g:%g", a, b); break;
    case Kind::Normal: std::snprintf(buf, sizeof buf, "normal:%g:%g", a, b); break;
    case Kind::LogNormal: std::snprintf(buf, sizeof buf, "lognormal:%g:%g", a, b); break;
  }
  return buf;
}

namespace {

// The ':'-separated numbers of `text`; false when one is empty or not a finite number.
bool parse_numbers(const std::string& text, std::vector<double>& out) {
  size_t pos = 0;
  while (true) {
    const size_t end = std::min(text.find(':', pos), text.size());
    double v = 0;
    const char* first = text.data() + pos;
    const char* last = text.data() + end;
    const auto [ptr, ec] = std::from_chars(first, last, v);
    if (first == last || ec != std::errc() || ptr != last || !std::isfinite(v)) return false;
    out.push_back(v);
    if (end == text.size()) return true;
    pos = end + 1;
  }
}

}  // namespace

LengthDist parse_length_dist(const std::string& text, const std::string& what) {
  const std::string usage = what + " must be N, uniform:MIN:MAX, normal:MEAN:SD or lognormal:MEAN:SD "
                                   "(token counts, at least 1), got '" + text + "'";
  const size_t colon = text.find(':');
  const std::string name = colon == std::string::npos ? "" : text.substr(0, colon);
  std::vector<double> v;
  if (!parse_numbers(colon == std::string::npos ? text : text.substr(colon + 1), v)) throw Error(usage);
  LengthDist d;
  if (name.empty()) {
    if (v.size() != 1 || v[0] < 1 || v[0] != std::floor(v[0])) throw Error(usage);
    d.kind = LengthDist::Kind::Fixed;
    d.a = v[0];
    return d;
  }
  if (v.size() != 2) throw Error(usage);
  d.a = v[0];
  d.b = v[1];
  if (name == "uniform") {
    d.kind = LengthDist::Kind::Uniform;
    if (d.a < 1 || d.b < d.a || d.a != std::floor(d.a) || d.b != std::floor(d.b)) throw Error(usage);
  } else if (name == "normal" || name == "lognormal") {
    d.kind = name == "normal" ? LengthDist::Kind::Normal : LengthDist::Kind::LogNormal;
    if (d.a < 1 || d.b < 0) throw Error(usage);
  } else {
    throw Error(usage);
  }
  return d;
}

int32_t draw_length(const LengthDist& d, Rng& rng) {
  double x = d.a;
  switch (d.kind) {
    case LengthDist::Kind::Fixed: break;
    case LengthDist::Kind::Uniform:
      x = d.a + static_cast<double>(rng.below(static_cast<uint64_t>(d.b - d.a) + 1));
      break;
    case LengthDist::Kind::Normal:
      x = d.a + d.b * std::clamp(rng.normal(), -3.0, 3.0);
      break;
    case LengthDist::Kind::LogNormal: {
      const double sigma2 = std::log1p((d.b * d.b) / (d.a * d.a));
      const double mu = std::log(d.a) - sigma2 / 2;
      x = std::exp(mu + std::sqrt(sigma2) * rng.normal());
      break;
    }
  }
  return to_length(x);
}

}  // namespace db
