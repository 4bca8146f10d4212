#include "offline_bench/workload.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>

#include "util/error.h"

namespace db::bench {

uint64_t SplitMix64::next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double SplitMix64::uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

uint64_t SplitMix64::below(uint64_t bound) {
  DB_CHECK(bound > 0, "below(0)");
  return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * bound) >> 64);
}

double SplitMix64::normal() {
  const double u1 = 1.0 - uniform01();  // (0, 1]
  const double u2 = uniform01();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

int32_t LengthDist::min() const {
  switch (kind) {
    case Kind::Fixed: return static_cast<int32_t>(a);
    case Kind::Uniform: return static_cast<int32_t>(a);
    case Kind::Normal: return std::max<int32_t>(1, static_cast<int32_t>(std::ceil(a - 3 * b)));
  }
  return 0;
}

int32_t LengthDist::max() const {
  switch (kind) {
    case Kind::Fixed: return static_cast<int32_t>(a);
    case Kind::Uniform: return static_cast<int32_t>(b);
    case Kind::Normal: return std::max<int32_t>(min(), static_cast<int32_t>(std::floor(a + 3 * b)));
  }
  return 0;
}

std::string LengthDist::describe() const {
  char buf[96];
  switch (kind) {
    case Kind::Fixed: std::snprintf(buf, sizeof buf, "%d", static_cast<int>(a)); break;
    case Kind::Uniform: std::snprintf(buf, sizeof buf, "uniform:%d:%d", static_cast<int>(a), static_cast<int>(b)); break;
    case Kind::Normal: std::snprintf(buf, sizeof buf, "normal:%g:%g", a, b); break;
  }
  return buf;
}

namespace {

// The numeric fields of "name:x:y" after the name; false when one is not a finite number.
bool parse_numbers(const std::string& text, std::vector<double>& out) {
  size_t start = 0;
  while (start <= text.size()) {
    const size_t colon = text.find(':', start);
    const std::string field = text.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(field, &used);
    } catch (const std::exception&) {
      return false;
    }
    if (used != field.size() || !std::isfinite(v)) return false;
    out.push_back(v);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return true;
}

bool is_whole(double v) { return v == std::floor(v) && std::abs(v) < 1e9; }

}  // namespace

LengthDist parse_length_dist(const std::string& text, const std::string& what) {
  const std::string usage = what + " must be N, uniform:MIN:MAX or normal:MEAN:SD (token counts >= 1), got '" + text + "'";
  LengthDist d;
  std::vector<double> v;
  const size_t colon = text.find(':');
  const std::string name = colon == std::string::npos ? "" : text.substr(0, colon);
  const std::string rest = colon == std::string::npos ? text : text.substr(colon + 1);
  if (!parse_numbers(rest, v)) throw Error(usage);
  if (name.empty()) {
    if (v.size() != 1 || !is_whole(v[0]) || v[0] < 1) throw Error(usage);
    d.kind = LengthDist::Kind::Fixed;
    d.a = d.b = v[0];
  } else if (name == "uniform") {
    if (v.size() != 2 || !is_whole(v[0]) || !is_whole(v[1]) || v[0] < 1 || v[1] < v[0]) throw Error(usage);
    d.kind = LengthDist::Kind::Uniform;
    d.a = v[0];
    d.b = v[1];
  } else if (name == "normal") {
    if (v.size() != 2 || v[0] < 1 || v[0] > 1e9 || v[1] < 0 || v[1] > 1e8) throw Error(usage);
    d.kind = LengthDist::Kind::Normal;
    d.a = v[0];
    d.b = v[1];
  } else {
    throw Error(usage);
  }
  return d;
}

int32_t draw_length(const LengthDist& d, SplitMix64& rng) {
  switch (d.kind) {
    case LengthDist::Kind::Fixed: return static_cast<int32_t>(d.a);
    case LengthDist::Kind::Uniform:
      return static_cast<int32_t>(d.a) + static_cast<int32_t>(rng.below(static_cast<uint64_t>(d.b - d.a) + 1));
    case LengthDist::Kind::Normal: {
      const double x = std::round(d.a + d.b * rng.normal());
      return static_cast<int32_t>(std::clamp<double>(x, d.min(), d.max()));
    }
  }
  return 0;
}

void validate(const WorkloadSpec& spec) {
  if (spec.num_requests < 1) throw Error("the workload needs at least 1 request, got " + std::to_string(spec.num_requests));
  if (spec.input_len.min() < 1 || spec.output_len.min() < 1)
    throw Error("input and output lengths must be at least 1 token");
  if (!(spec.shared_prefix_fraction >= 0 && spec.shared_prefix_fraction <= 1))
    throw Error("the shared-prefix fraction must be in [0, 1], got " + std::to_string(spec.shared_prefix_fraction));
  if (spec.shared_prefix_len < 0)
    throw Error("the shared-prefix length must be >= 0, got " + std::to_string(spec.shared_prefix_len));
  if (spec.shared_prefix_fraction > 0 && spec.shared_prefix_len >= spec.input_len.min())
    throw Error("the shared prefix (" + std::to_string(spec.shared_prefix_len) +
                " tokens) must be shorter than the shortest prompt (" + std::to_string(spec.input_len.min()) +
                " tokens of " + spec.input_len.describe() + ")");
}

std::vector<BenchRequest> make_workload(const WorkloadSpec& spec, const std::vector<int32_t>& token_pool) {
  validate(spec);
  if (token_pool.empty()) throw Error("no token ids to draw prompts from");
  SplitMix64 rng(spec.seed);
  auto draw_token = [&] { return token_pool[rng.below(token_pool.size())]; };
  const int64_t n = spec.num_requests;
  const int64_t sharing = std::llround(spec.shared_prefix_fraction * static_cast<double>(n));
  std::vector<int32_t> prefix;
  if (sharing > 0)
    for (int32_t i = 0; i < spec.shared_prefix_len; ++i) prefix.push_back(draw_token());

  std::vector<BenchRequest> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    BenchRequest& r = out[static_cast<size_t>(i)];
    const int32_t in_len = draw_length(spec.input_len, rng);
    r.max_tokens = draw_length(spec.output_len, rng);
    r.shared_prefix = (i + 1) * sharing / n > i * sharing / n;
    if (r.shared_prefix) r.prompt = prefix;
    while (static_cast<int32_t>(r.prompt.size()) < in_len) r.prompt.push_back(draw_token());
  }
  return out;
}

}  // namespace db::bench
