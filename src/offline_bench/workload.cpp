#include "offline_bench/workload.h"

#include <cmath>
#include <string>

#include "util/error.h"

namespace db::bench {

void validate(const WorkloadSpec& spec) {
  if (spec.num_requests < 1) throw Error("the workload needs at least 1 request, got " + std::to_string(spec.num_requests));
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
  Rng rng(spec.seed);
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
