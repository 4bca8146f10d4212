// Synthetic benchmark workloads: N requests whose prompts are random token ids
// (deterministic per seed) with lengths drawn from util/length_dist.h's
// distributions, a share of them starting with one common prefix.
#pragma once
#include <cstdint>
#include <vector>

#include "util/length_dist.h"

namespace db::bench {

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

// Throws db::Error when the spec cannot produce valid requests: no requests, a
// fraction outside [0, 1], or a shared prefix that is not shorter than the
// shortest possible prompt while some request shares it.
void validate(const WorkloadSpec& spec);

// The requests of `spec`; lengths and prompt tokens come from one Rng seeded
// with spec.seed, tokens drawn uniformly from `token_pool` (non-empty; e.g. the
// vocabulary without special tokens). Request i shares the prefix when
// floor((i+1)*k/N) > floor(i*k/N) with k = round(fraction * N), so exactly k
// requests share it, spread evenly.
std::vector<BenchRequest> make_workload(const WorkloadSpec& spec, const std::vector<int32_t>& token_pool);

}  // namespace db::bench
