#include "loadtest/workload.h"

#include <algorithm>
#include <utility>

#include "util/random.h"
#include "loadtest/synthetic_text.h"
#include "util/error.h"

namespace db::loadtest {

namespace {

// Stream numbers for derive_seed: one independent sequence per kind of draw.
enum Stream : uint64_t { kLengthStream = 0, kPrefixChoiceStream = 1, kWordStream = 2, kPrefixTextStream = 3, kSampleStream = 4 };

}  // namespace

void validate(const SyntheticWorkloadSpec& spec) {
  const SharedPrefixSpec& p = spec.shared_prefix;
  if (spec.num_requests < 1) throw Error("a synthetic workload needs at least one request");
  if (!(p.fraction >= 0 && p.fraction <= 1))
    throw Error("shared-prefix fraction must be in [0, 1], got " + std::to_string(p.fraction));
  if (p.fraction > 0 && (p.num_prefixes < 1 || p.prefix_tokens < 1))
    throw Error("a shared-prefix fraction > 0 needs at least one prefix of at least one token");
}

std::vector<RequestSpec> make_synthetic_workload(const SyntheticWorkloadSpec& spec) {
  validate(spec);
  const SharedPrefixSpec& sp = spec.shared_prefix;
  Rng lengths(derive_seed(spec.seed, kLengthStream));
  Rng choice(derive_seed(spec.seed, kPrefixChoiceStream));
  Rng words(derive_seed(spec.seed, kWordStream));

  std::vector<std::string> prefixes;
  if (sp.fraction > 0) {
    Rng prefix_words(derive_seed(spec.seed, kPrefixTextStream));
    for (int32_t k = 0; k < sp.num_prefixes; ++k) prefixes.push_back(random_words(sp.prefix_tokens, prefix_words));
  }

  std::vector<RequestSpec> out;
  out.reserve(static_cast<size_t>(spec.num_requests));
  for (int32_t i = 0; i < spec.num_requests; ++i) {
    RequestSpec r;
    const int32_t input = draw_length(spec.input_len, lengths);
    r.max_tokens = draw_length(spec.output_len, lengths);
    // Both draws happen for every request so the choices of request i do not depend on
    // the fraction's outcome for earlier requests.
    const bool shared = choice.uniform01() < sp.fraction;
    const uint64_t which = choice.below(static_cast<uint64_t>(std::max(sp.num_prefixes, 1)));
    int32_t prefix_tokens = 0;
    if (shared) {
      r.shared_prefix_id = static_cast<int32_t>(which);
      r.prompt = prefixes[which] + " ";
      prefix_tokens = sp.prefix_tokens;
    }
    const int32_t own = std::max(input - prefix_tokens, kNumberTagWords);
    const std::string tag = number_tag(static_cast<uint64_t>(i));
    const int32_t tag_words = static_cast<int32_t>(std::count(tag.begin(), tag.end(), ' ')) + 1;
    r.prompt += tag;
    if (own > tag_words) {
      r.prompt += ' ';
      r.prompt += random_words(own - tag_words, words);
    }
    r.prompt_tokens = prefix_tokens + std::max(own, tag_words);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<RequestSpec> sample_requests(const std::vector<RequestSpec>& pool, int32_t count, uint64_t seed) {
  if (pool.empty()) throw Error("no requests to sample from");
  Rng rng(derive_seed(seed, kSampleStream));
  std::vector<size_t> order(pool.size());
  std::vector<RequestSpec> out;
  out.reserve(static_cast<size_t>(std::max(count, 0)));
  while (static_cast<int32_t>(out.size()) < count) {
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
    for (size_t i = 0; i < order.size() && static_cast<int32_t>(out.size()) < count; ++i) out.push_back(pool[order[i]]);
  }
  return out;
}

}  // namespace db::loadtest
