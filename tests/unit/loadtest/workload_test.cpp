// Length distributions and the synthetic workload: reproducible from a seed,
// following their distributions, with only the declared prefixes shared.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "util/length_dist.h"
#include "loadtest/synthetic_text.h"
#include "loadtest/workload.h"
#include "util/error.h"

namespace db::loadtest {
namespace {

std::vector<std::string> split_words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

struct Moments {
  double mean = 0, sd = 0;
  int32_t min = INT32_MAX, max = 0;
};

Moments draw_moments(const LengthDist& d, int n = 20000, uint64_t seed = 3) {
  Rng rng(seed);
  std::vector<double> v;
  Moments m;
  for (int i = 0; i < n; ++i) {
    const int32_t x = draw_length(d, rng);
    m.min = std::min(m.min, x);
    m.max = std::max(m.max, x);
    v.push_back(x);
    m.mean += x;
  }
  m.mean /= n;
  for (double x : v) m.sd += (x - m.mean) * (x - m.mean);
  m.sd = std::sqrt(m.sd / n);
  return m;
}

TEST(LengthDist, ParsesEveryKindAndRejectsNonsense) {
  EXPECT_EQ(parse_length_dist("128", "input").kind, LengthDist::Kind::Fixed);
  EXPECT_EQ(parse_length_dist("uniform:10:20", "input").describe(), "uniform:10:20");
  EXPECT_EQ(parse_length_dist("normal:100:10", "input").kind, LengthDist::Kind::Normal);
  EXPECT_EQ(parse_length_dist("lognormal:200:100", "input").describe(), "lognormal:200:100");
  for (const char* bad : {"", "0", "1.5", "uniform:20:10", "normal:100", "lognormal:0:5", "zipf:1:2", "uniform:a:b"}) {
    try {
      parse_length_dist(bad, "--input-len");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--input-len"), std::string::npos);
    }
  }
}

TEST(LengthDist, DrawsFollowTheirDistributions) {
  const Moments fixed = draw_moments(parse_length_dist("64", "x"));
  EXPECT_EQ(fixed.min, 64);
  EXPECT_EQ(fixed.max, 64);

  const Moments uniform = draw_moments(parse_length_dist("uniform:100:300", "x"));
  EXPECT_NEAR(uniform.mean, 200, 0.02 * 200);
  EXPECT_EQ(uniform.min, 100);
  EXPECT_EQ(uniform.max, 300);

  const Moments normal = draw_moments(parse_length_dist("normal:500:50", "x"));
  EXPECT_NEAR(normal.mean, 500, 0.02 * 500);
  EXPECT_NEAR(normal.sd, 50, 0.05 * 50);
  EXPECT_GE(normal.min, 350);
  EXPECT_LE(normal.max, 650);

  // The lognormal's parameters are the lengths' own mean and standard deviation.
  const Moments lognormal = draw_moments(parse_length_dist("lognormal:200:100", "x"));
  EXPECT_NEAR(lognormal.mean, 200, 0.03 * 200);
  EXPECT_NEAR(lognormal.sd, 100, 0.08 * 100);
  EXPECT_GE(lognormal.min, 1);
}

TEST(SyntheticText, NumberTagsAreDistinctAndWordCountsEstimateTokens) {
  std::set<std::string> tags;
  for (uint64_t n = 0; n < 5000; ++n) {
    const std::string tag = number_tag(n);
    EXPECT_EQ(split_words(tag).size(), static_cast<size_t>(kNumberTagWords));
    tags.insert(tag);
  }
  EXPECT_EQ(tags.size(), 5000u);
  EXPECT_EQ(estimate_tokens("one two  three\nfour five six seven eight nine ten"), 13);
  EXPECT_EQ(estimate_tokens("  "), 0);
  EXPECT_EQ(estimate_tokens("hi"), 1);
}

SyntheticWorkloadSpec spec_with_prefixes() {
  SyntheticWorkloadSpec spec;
  spec.num_requests = 2000;
  spec.input_len = parse_length_dist("uniform:200:400", "input");
  spec.output_len = parse_length_dist("normal:128:16", "output");
  spec.shared_prefix = {/*num_prefixes=*/4, /*prefix_tokens=*/100, /*fraction=*/0.3};
  spec.seed = 1234;
  return spec;
}

TEST(SyntheticWorkload, SameSeedSameRequestsOtherSeedOthers) {
  SyntheticWorkloadSpec spec = spec_with_prefixes();
  spec.num_requests = 50;
  const auto a = make_synthetic_workload(spec), b = make_synthetic_workload(spec);
  spec.seed = 1235;
  const auto c = make_synthetic_workload(spec);
  int differing = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].prompt, b[i].prompt);
    EXPECT_EQ(a[i].max_tokens, b[i].max_tokens);
    EXPECT_EQ(a[i].shared_prefix_id, b[i].shared_prefix_id);
    differing += a[i].prompt != c[i].prompt;
  }
  EXPECT_GT(differing, 45);
}

TEST(SyntheticWorkload, LengthsFollowTheSpecAndPromptsHaveOneWordPerToken) {
  const auto reqs = make_synthetic_workload(spec_with_prefixes());
  double input = 0, output = 0;
  for (const RequestSpec& r : reqs) {
    EXPECT_FALSE(r.is_chat());
    EXPECT_EQ(static_cast<int32_t>(split_words(r.prompt).size()), r.prompt_tokens);
    EXPECT_GE(r.prompt_tokens, 200);
    EXPECT_LE(r.prompt_tokens, 400);
    input += r.prompt_tokens;
    output += r.max_tokens;
  }
  EXPECT_NEAR(input / reqs.size(), 300, 0.03 * 300);
  EXPECT_NEAR(output / reqs.size(), 128, 0.03 * 128);
}

TEST(SyntheticWorkload, OnlyDeclaredPrefixesAreShared) {
  const SyntheticWorkloadSpec spec = spec_with_prefixes();
  const auto reqs = make_synthetic_workload(spec);
  std::map<int32_t, std::string> prefix_text;
  std::map<int32_t, int> uses;
  std::set<std::string> own_starts;
  int shared = 0;
  for (const RequestSpec& r : reqs) {
    const std::vector<std::string> w = split_words(r.prompt);
    size_t own_begin = 0;
    if (r.shared_prefix_id) {
      ++shared;
      ++uses[*r.shared_prefix_id];
      std::string prefix;
      for (int i = 0; i < spec.shared_prefix.prefix_tokens; ++i) prefix += w[i] + " ";
      auto [it, inserted] = prefix_text.emplace(*r.shared_prefix_id, prefix);
      EXPECT_EQ(it->second, prefix);  // every user of a prefix starts with the same text
      own_begin = static_cast<size_t>(spec.shared_prefix.prefix_tokens);
    }
    own_starts.insert(w[own_begin] + " " + w[own_begin + 1] + " " + w[own_begin + 2]);
  }
  EXPECT_NEAR(shared / 2000.0, 0.3, 0.03);
  EXPECT_EQ(uses.size(), 4u);
  for (const auto& [id, n] : uses) EXPECT_NEAR(n, shared / 4.0, 0.25 * shared / 4.0) << "prefix " << id;
  std::set<std::string> distinct_prefixes;
  for (const auto& [id, text] : prefix_text) distinct_prefixes.insert(text);
  EXPECT_EQ(distinct_prefixes.size(), 4u);
  EXPECT_EQ(own_starts.size(), reqs.size());  // each request's own part starts differently
}

TEST(SyntheticWorkload, LengthsDoNotDependOnPrefixSettings) {
  SyntheticWorkloadSpec with = spec_with_prefixes(), without = spec_with_prefixes();
  without.shared_prefix = {};
  const auto a = make_synthetic_workload(with), b = make_synthetic_workload(without);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].max_tokens, b[i].max_tokens);
}

TEST(SyntheticWorkload, RejectsImpossibleSpecs) {
  SyntheticWorkloadSpec spec;
  spec.num_requests = 0;
  EXPECT_THROW(validate(spec), Error);
  spec.num_requests = 1;
  spec.shared_prefix.fraction = 1.5;
  EXPECT_THROW(validate(spec), Error);
  spec.shared_prefix = {0, 10, 0.5};
  EXPECT_THROW(validate(spec), Error);
}

TEST(SampleRequests, UsesEveryRequestBeforeRepeatingAndIsSeeded) {
  std::vector<RequestSpec> pool(7);
  for (int i = 0; i < 7; ++i) pool[i].prompt = std::to_string(i);
  const auto a = sample_requests(pool, 20, 5), b = sample_requests(pool, 20, 5);
  for (int pass = 0; pass < 2; ++pass) {
    std::set<std::string> seen;
    for (int i = 0; i < 7; ++i) seen.insert(a[pass * 7 + i].prompt);
    EXPECT_EQ(seen.size(), 7u);
  }
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].prompt, b[i].prompt);
  EXPECT_THROW(sample_requests({}, 1, 0), Error);
}

}  // namespace
}  // namespace db::loadtest
