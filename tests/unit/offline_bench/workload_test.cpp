#include "offline_bench/workload.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "util/error.h"

namespace db::bench {
namespace {

TEST(LengthDist, ParsesTheThreeForms) {
  const LengthDist f = parse_length_dist("128", "--input-len");
  EXPECT_EQ(f.kind, LengthDist::Kind::Fixed);
  EXPECT_EQ(f.min(), 128);
  EXPECT_EQ(f.max(), 128);
  EXPECT_EQ(f.describe(), "128");

  const LengthDist u = parse_length_dist("uniform:16:32", "--input-len");
  EXPECT_EQ(u.kind, LengthDist::Kind::Uniform);
  EXPECT_EQ(u.min(), 16);
  EXPECT_EQ(u.max(), 32);
  EXPECT_EQ(u.describe(), "uniform:16:32");

  const LengthDist n = parse_length_dist("normal:100:10", "--input-len");
  EXPECT_EQ(n.kind, LengthDist::Kind::Normal);
  EXPECT_EQ(n.min(), 70);
  EXPECT_EQ(n.max(), 130);
  EXPECT_EQ(n.describe(), "normal:100:10");
  EXPECT_EQ(parse_length_dist("normal:10:5", "x").min(), 1);  // clipped at 1 token
  EXPECT_EQ(parse_length_dist("normal:10:5", "x").max(), 25);
}

TEST(LengthDist, RejectsBadText) {
  for (const char* bad : {"", "0", "-3", "1.5", "abc", "uniform:5", "uniform:9:4", "uniform:0:4", "normal:0:1",
                          "normal:10:-1", "poisson:3", "12x", "uniform:1:2:3"}) {
    EXPECT_THROW(parse_length_dist(bad, "--input-len"), Error) << bad;
  }
  try {
    parse_length_dist("nope", "--output-len");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--output-len"), std::string::npos);
  }
}

TEST(LengthDist, DrawsStayWithinBounds) {
  Rng rng(3);
  const LengthDist u = parse_length_dist("uniform:5:8", "x");
  const LengthDist n = parse_length_dist("normal:20:4", "x");
  std::vector<int> seen(9, 0);
  for (int i = 0; i < 2000; ++i) {
    const int32_t a = draw_length(u, rng);
    ASSERT_GE(a, 5);
    ASSERT_LE(a, 8);
    ++seen[static_cast<size_t>(a)];
    const int32_t b = draw_length(n, rng);
    ASSERT_GE(b, 8);
    ASSERT_LE(b, 32);
  }
  for (int v = 5; v <= 8; ++v) EXPECT_GT(seen[static_cast<size_t>(v)], 0) << v;
}

std::vector<int32_t> iota_pool(int32_t n, int32_t first) {
  std::vector<int32_t> p(static_cast<size_t>(n));
  std::iota(p.begin(), p.end(), first);
  return p;
}

TEST(Workload, FixedLengthsAndExactTokens) {
  WorkloadSpec s;
  s.num_requests = 2;
  s.input_len = parse_length_dist("3", "x");
  s.output_len = parse_length_dist("5", "x");
  s.seed = 0;
  // Fixed lengths draw nothing, so the tokens are the seed's first draws of below(2).
  const std::vector<int32_t> pool = {5, 9};
  Rng rng(s.seed);
  std::vector<int32_t> first(3);
  for (int32_t& t : first) t = pool[rng.below(pool.size())];
  const auto w = make_workload(s, pool);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].prompt, first);
  EXPECT_EQ(w[0].max_tokens, 5);
  EXPECT_EQ(w[1].prompt.size(), 3u);
  EXPECT_FALSE(w[0].shared_prefix);
}

TEST(Workload, SharedPrefixGoesToAnEvenSpreadOfRequests) {
  WorkloadSpec s;
  s.num_requests = 10;
  s.input_len = parse_length_dist("uniform:20:40", "x");
  s.output_len = parse_length_dist("uniform:1:4", "x");
  s.shared_prefix_fraction = 0.3;
  s.shared_prefix_len = 16;
  s.seed = 42;
  const auto pool = iota_pool(1000, 100);
  const auto w = make_workload(s, pool);
  ASSERT_EQ(w.size(), 10u);
  std::vector<size_t> sharing;
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i].shared_prefix) sharing.push_back(i);
    EXPECT_GE(w[i].prompt.size(), 20u);
    EXPECT_LE(w[i].prompt.size(), 40u);
    EXPECT_GE(w[i].max_tokens, 1);
    EXPECT_LE(w[i].max_tokens, 4);
    for (int32_t t : w[i].prompt) ASSERT_TRUE(t >= 100 && t < 1100) << t;
  }
  EXPECT_EQ(sharing, (std::vector<size_t>{3, 6, 9}));
  const std::vector<int32_t> prefix(w[3].prompt.begin(), w[3].prompt.begin() + 16);
  for (size_t i : sharing) EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), w[i].prompt.begin())) << i;
  for (size_t i : {0, 1, 2, 4}) EXPECT_FALSE(std::equal(prefix.begin(), prefix.end(), w[i].prompt.begin())) << i;
  EXPECT_NE(w[3].prompt, w[6].prompt);  // the suffixes differ
}

TEST(Workload, SameSeedSameWorkloadOtherSeedOther) {
  WorkloadSpec s;
  s.num_requests = 6;
  s.input_len = parse_length_dist("normal:30:5", "x");
  s.output_len = parse_length_dist("uniform:2:9", "x");
  s.shared_prefix_fraction = 1.0;
  s.shared_prefix_len = 8;
  s.seed = 5;
  const auto pool = iota_pool(500, 0);
  const auto a = make_workload(s, pool), b = make_workload(s, pool);
  s.seed = 6;
  const auto c = make_workload(s, pool);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].prompt, b[i].prompt);
    EXPECT_EQ(a[i].max_tokens, b[i].max_tokens);
    EXPECT_TRUE(a[i].shared_prefix);
  }
  EXPECT_NE(a[0].prompt, c[0].prompt);
}

TEST(Workload, RejectsSpecsThatCannotWork) {
  WorkloadSpec s;
  s.input_len = parse_length_dist("uniform:10:20", "x");
  s.output_len = parse_length_dist("4", "x");
  s.num_requests = 0;
  EXPECT_THROW(validate(s), Error);
  s.num_requests = 4;
  s.shared_prefix_fraction = 1.5;
  EXPECT_THROW(validate(s), Error);
  s.shared_prefix_fraction = 0.5;
  s.shared_prefix_len = 10;  // not shorter than the shortest prompt
  EXPECT_THROW(validate(s), Error);
  s.shared_prefix_len = 9;
  EXPECT_NO_THROW(validate(s));
  s.shared_prefix_fraction = 0;
  s.shared_prefix_len = 50;  // nobody shares it
  EXPECT_NO_THROW(validate(s));
  EXPECT_THROW(make_workload(s, {}), Error);
}

}  // namespace
}  // namespace db::bench
