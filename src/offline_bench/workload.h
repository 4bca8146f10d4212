// Synthetic benchmark workloads: N requests whose prompts are random token ids
// (deterministic per seed) with lengths drawn from simple distributions, a share
// of them starting with one common prefix.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace db::bench {

// A distribution of token counts.
struct LengthDist {
  enum class Kind { Fixed, Uniform, Normal };
  Kind kind = Kind::Fixed;
  double a = 128;  // Fixed: the length; Uniform: the lowest; Normal: the mean
  double b = 128;  // Fixed: unused; Uniform: the highest (inclusive); Normal: the standard deviation

  // Smallest and largest length a draw can return (Normal is clipped to mean -/+ 3 sd, at least 1).
  int32_t min() const;
  int32_t max() const;
  std::string describe() const;  // "128", "uniform:64:256", "normal:128:32"
};

// "128" (fixed), "uniform:A:B" (A..B inclusive), "normal:MEAN:SD" (rounded, clipped
// to [max(1, MEAN-3SD), MEAN+3SD]). Throws db::Error naming `what` on bad input.
LengthDist parse_length_dist(const std::string& text, const std::string& what);

struct WorkloadSpec {
  int32_t num_requests = 64;           // requests in the workload
  LengthDist input_len;                // prompt length in tokens (the shared prefix included)
  LengthDist output_len;               // tokens to generate per request (exact: EOS is ignored)
  double shared_prefix_fraction = 0;   // share of requests whose prompt starts with the common prefix
  int32_t shared_prefix_len = 0;       // tokens in the common prefix
  uint64_t seed = 0;                   // same seed, same workload
};

struct BenchRequest {
  std::vector<int32_t> prompt;  // token ids
  int32_t max_tokens = 0;       // tokens to generate
  bool shared_prefix = false;   // starts with the common prefix
};

// Throws db::Error when the spec cannot produce valid requests: no requests,
// lengths below 1, a fraction outside [0, 1], or a shared prefix that is not
// shorter than the shortest possible prompt while some request shares it.
void validate(const WorkloadSpec& spec);

// The requests of `spec`; prompt tokens are drawn uniformly from `token_pool`
// (non-empty; e.g. the vocabulary without special tokens). Request i shares the
// prefix when floor((i+1)*k/N) > floor(i*k/N) with k = round(fraction * N), so
// exactly k requests share it, spread evenly.
std::vector<BenchRequest> make_workload(const WorkloadSpec& spec, const std::vector<int32_t>& token_pool);

// Deterministic random numbers (splitmix64), identical on every platform.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next();
  double uniform01();                     // in [0, 1)
  uint64_t below(uint64_t bound);         // in [0, bound), bound > 0
  double normal();                        // standard normal (Box-Muller)

 private:
  uint64_t state_;
};

// One draw from `d`.
int32_t draw_length(const LengthDist& d, SplitMix64& rng);

}  // namespace db::bench
